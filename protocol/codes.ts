/**
 * Result codes (docs/ARCHITECTURE.md, Codes and errors). The gateway uses a Result's Code as the
 * HTTP status, so these are HTTP status numbers with the meaning the hive gives them.
 */
export const Code = {
  /** The operation succeeded; Message is 'Success'. */
  Success: 200,
  /** Some parts succeeded and some failed, each told in Data `codes` (SQL_ROWCODES: one per row). */
  MultiStatus: 207,
  /** The input was malformed or named something unknown. */
  BadRequest: 400,
  /** Credentials are missing or wrong. */
  Unauthorized: 401,
  /** Credentials are right but the caller may not do this. */
  Forbidden: 403,
  /** No service listens on the channel, or the named entry does not exist. */
  NotFound: 404,
  /** The request conflicts with the state it acts on (a schedule run now while its overlap rule allows no entry). */
  Conflict: 409,
  /** The payload is over a size limit. */
  TooLarge: 413,
  /** The request named a host this server does not answer to (the console's Host check). */
  Misdirected: 421,
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

/** The spec's success text (docs/ARCHITECTURE.md, Codes and errors). */
export const SUCCESS_MESSAGE = 'Success';

/** A Code in 200-299: the interceptor and queue success test (README, The REST gateway). */
export function isSuccessCode(code: number): boolean {
  return Number.isInteger(code) && code >= 200 && code <= 299;
}

/**
 * Failures after which the same message or request, sent again a little later, can succeed. One list
 * for the whole node: `HiveError.retryable` derives from it, the queue (RetryOn retryable) and the
 * HTTP client decide their retries by it.
 *
 * Retryable, because the cause passes by itself:
 * - 408 Request Timeout, 504 Timeout: the answer did not come in time; the next attempt may be quicker.
 * - 425 Too Early (RFC 8470): the server asks for the same request again, later.
 * - 429 Too Many Requests, 503 Unavailable: overloaded, disconnected or draining; load and
 *   connections come back.
 * - 500 Service Error: a service crashed or threw while handling the message; its supervisor restarts
 *   it, and an unexpected (untyped) failure is reported as 500 too, so a retry is the safe guess. A
 *   wrong guess costs at most the configured retries; a wrong "final" loses a message that would
 *   have gone through.
 * - 502 Upstream Error: the database, command or remote server failed (connection lost, restarting).
 * - 507 Insufficient Storage: a queue or store is full until it is drained, like 429 for space.
 *
 * Everything else is final: the 4xx caller faults (400 bad input, 401/403 credentials or permission,
 * 404 no such channel or entry, 409 conflict, 413 too large, 422 unprocessable, …) get the same answer
 * however often they are sent; so do the permanent server conditions 501, 505, 506, 508, 510 and 511.
 * Successes, redirects and codes outside HTTP's are not failures to retry either.
 *
 * Note for the queue: the hive reports a channel nobody listens on as 404. On the embedded hive that
 * is final (its listeners are the node's own services); on a NATS hive the queue retries it under
 * RetryOn retryable, as a node serving the channel may be restarting (actors/hive/transport.ts,
 * unservedResult) — the Code stays 404 for everyone else.
 */
const RETRYABLE_CODES: ReadonlySet<number> = new Set([
  408,
  425,
  Code.TooManyRequests,
  Code.ServiceError,
  Code.UpstreamError,
  Code.Unavailable,
  Code.Timeout,
  Code.InsufficientStorage,
]);

/** True for a failure Code worth retrying (see RETRYABLE_CODES for which and why). */
export function isRetryableCode(code: number): boolean {
  return RETRYABLE_CODES.has(code);
}
