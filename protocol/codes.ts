/**
 * Result codes (docs/ARCHITECTURE.md, Codes and errors). The gateway uses a Result's Code as the
 * HTTP status, so these are HTTP status numbers with the meaning the hive gives them.
 */
export const Code = {
  /** The operation succeeded; Message is 'Success'. */
  Success: 200,
  /** The input was malformed or named something unknown. */
  BadRequest: 400,
  /** Credentials are missing or wrong. */
  Unauthorized: 401,
  /** Credentials are right but the caller may not do this. */
  Forbidden: 403,
  /** No service listens on the channel, or the named entry does not exist. */
  NotFound: 404,
  /** The payload is over a size limit. */
  TooLarge: 413,
  /** Too many requests in flight for this service; try again later. */
  TooManyRequests: 429,
  /** The service itself failed while handling the message. */
  ServiceError: 500,
  /** The upstream (database, command, remote HTTP server) failed. */
  UpstreamError: 502,
  /** The hive or the service is not available (overloaded, disconnected, draining). */
  Unavailable: 503,
  /** The hive call or the upstream did not answer in time. */
  Timeout: 504,
  /** The queue or store is full (capacity or disk). */
  InsufficientStorage: 507,
} as const;

export type CodeName = keyof typeof Code;
export type CodeValue = (typeof Code)[CodeName];

/** The spec's success text (spec §7 rule 1). */
export const SUCCESS_MESSAGE = 'Success';

/** A Code in 200-299: the interceptor and queue success test (spec §4.3 rule 5, §3 rule 1). */
export function isSuccessCode(code: number): boolean {
  return Number.isInteger(code) && code >= 200 && code <= 299;
}
