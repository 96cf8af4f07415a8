/**
 * Typed errors (docs/ARCHITECTURE.md, Codes and errors): every error the node produces on purpose
 * has a stable `code` (the Result Code it maps to), says whether a retry can help, and keeps its
 * cause.
 */
import { Code, isRetryableCode } from './codes.js';

export interface HiveErrorOptions {
  cause?: unknown;
}

/** Base class of all deliberate failures; `code` is the Result Code the error is reported with. */
export class HiveError extends Error {
  override readonly name: string = 'HiveError';
  readonly code: number = Code.ServiceError;
  /**
   * Whether the same thing sent again later can succeed. It follows `code` (isRetryableCode), so an
   * error and the Result Code it is reported with never disagree; a class overrides it only where
   * its failure is final although its code usually is not.
   */
  get retryable(): boolean {
    return isRetryableCode(this.code);
  }
  constructor(message: string, options: HiveErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** Input of the wrong shape or naming something unknown (Code 400). */
export class BadInputError extends HiveError {
  override readonly name = 'BadInputError';
  override readonly code = Code.BadRequest;
}

/** Credentials missing or wrong (Code 401). */
export class UnauthorizedError extends HiveError {
  override readonly name = 'UnauthorizedError';
  override readonly code = Code.Unauthorized;
}

/** The caller may not do this (Code 403). */
export class ForbiddenError extends HiveError {
  override readonly name: string = 'ForbiddenError';
  override readonly code = Code.Forbidden;
}

/** Nothing serves the channel, or the named entry does not exist (Code 404). */
export class NotFoundError extends HiveError {
  override readonly name = 'NotFoundError';
  override readonly code = Code.NotFound;
}

/** The request named a host this server does not answer to (Code 421): the console's Host check against DNS rebinding. */
export class MisdirectedError extends HiveError {
  override readonly name = 'MisdirectedError';
  override readonly code = Code.Misdirected;
}

/** The request conflicts with the state it acts on, and stays refused until that changes (Code 409). */
export class ConflictError extends HiveError {
  override readonly name = 'ConflictError';
  override readonly code = Code.Conflict;
}

/** A payload over a size limit (Code 413). */
export class TooLargeError extends HiveError {
  override readonly name = 'TooLargeError';
  override readonly code = Code.TooLarge;
}

/** Too much work in flight for this service (Code 429). */
export class OverloadedError extends HiveError {
  override readonly name = 'OverloadedError';
  override readonly code = Code.TooManyRequests;
}

/** The service failed while handling a message (Code 500). */
export class ServiceFailureError extends HiveError {
  override readonly name = 'ServiceFailureError';
}

/** The upstream (database, command, remote server) failed (Code 502). */
export class UpstreamError extends HiveError {
  override readonly name: string = 'UpstreamError';
  override readonly code = Code.UpstreamError;
}

/** The hive or the service cannot take the message now (Code 503). */
export class UnavailableError extends HiveError {
  override readonly name = 'UnavailableError';
  override readonly code = Code.Unavailable;
}

/** No answer in time (Code 504). */
export class TimeoutError extends HiveError {
  override readonly name = 'TimeoutError';
  override readonly code = Code.Timeout;
}

/** A store or queue is full (Code 507). */
export class StorageFullError extends HiveError {
  override readonly name = 'StorageFullError';
  override readonly code = Code.InsufficientStorage;
}

/** A configuration that cannot start: the node exits with code 2 and this message. */
export class ConfigError extends Error {
  override readonly name: string = 'ConfigError';
  /** Process exit code for configuration errors. */
  static readonly EXIT_CODE = 2;
}

/** Who holds a store's lock file (actors/queue/store-lock.ts). */
export interface LockHolder {
  pid: number;
  host: string;
  /** When the holder's process started (ISO 8601), for people reading the refusal. */
  started: string;
  /** Unique per holding: tells this holding from an earlier one of the same pid. */
  nonce: string;
  /** Linux: the boot the holder ran in and its start in clock ticks since boot (pid reuse). */
  bootId?: string;
  startTicks?: number;
}

/** A store held by another process (or another service of this one): the start fails like a configuration error. */
export class StoreHeldError extends ConfigError {
  override readonly name = 'StoreHeldError';
  constructor(
    message: string,
    readonly lockFile: string,
    readonly holder?: LockHolder,
  ) {
    super(message);
  }
}

/** What a listener was started for: the parameter that chose its port or address, and whose it is. */
export interface ListenTarget {
  /** Service kind ('gateway', 'syslog'), or 'dashboard', 'interceptor'. */
  service: string;
  /** Instance name (NAME); absent for the node's one dashboard. */
  instance?: string;
  /** The parameter at fault (Port, IP) and its value. */
  parameter: string;
  value: string | number;
}

/**
 * A listener that cannot open at start (port in use, not permitted, address not of this host): a
 * configuration the user must change, so one line naming the parameter and the way out, exit 2.
 */
export class ListenError extends ConfigError {
  override readonly name = 'ListenError';
  constructor(
    readonly target: ListenTarget,
    /** What is wrong, e.g. 'is already in use (EADDRINUSE)'. */
    readonly problem: string,
    /** What to do about it; a caller that knows better (the demo's variables) replaces it. */
    readonly hint: string,
    options: HiveErrorOptions = {},
  ) {
    const who = target.instance === undefined ? target.service : `${target.service} '${target.instance}'`;
    super(
      `${who} cannot start: ${target.parameter} ${target.value} ${problem}; ${hint}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
  }

  /** The same failure with another hint. */
  withHint(hint: string): ListenError {
    return new ListenError(this.target, this.problem, hint, { cause: this.cause });
  }
}

/** The Code an arbitrary thrown value is reported with: its own for HiveErrors, else 500. */
export function codeOf(error: unknown): number {
  return error instanceof HiveError ? error.code : Code.ServiceError;
}

/** A one-line description of a thrown value for results and logs, never a stack. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
