/**
 * Who may act in the console. Reading is open to whoever reaches the port (it binds 127.0.0.1 unless
 * configured otherwise); every state-changing request is a POST that must pass, in this order:
 *   1. an authenticated operator: Basic credentials checked against dashboard.Users, the gateway's
 *      users file and code (actors/auth/authenticate.ts); without Users the console is read-only (403);
 *   2. a same-origin check: an Origin (or, lacking one, Referer) header must name this console's own
 *      host — a browser always sends Origin on a POST, so a page elsewhere cannot post here;
 *   3. a CSRF token: an HMAC, under a secret drawn at start, of the browser's `hn_csrf` cookie
 *      (SameSite=Strict), sent back in the form field or the `x-csrf-token` header.
 * Each refusal is a typed error whose Code the server answers with.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BasicAuth } from '../../actors/auth/authenticate.js';
import { ForbiddenError, OverloadedError, UnauthorizedError } from '../../protocol/errors.js';

export const CSRF_COOKIE = 'hn_csrf';
export const CSRF_FIELD = 'csrf';
const CSRF_HEADER = 'x-csrf-token';

/** The cookies of a request, by name. */
export function cookiesOf(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

export class Operators {
  private readonly basic: BasicAuth | undefined;
  private readonly secret = randomBytes(32);

  constructor(
    usersFile: string | undefined,
    onReloadError?: (message: string) => void,
    onThrottled?: (message: string) => void,
  ) {
    this.basic = usersFile
      ? new BasicAuth(usersFile, {
          ...(onReloadError ? { onReloadError } : {}),
          ...(onThrottled ? { onThrottled } : {}),
        })
      : undefined;
  }

  /** Stops the sign-in verification workers. */
  close(): Promise<void> {
    return this.basic?.close() ?? Promise.resolve();
  }

  /** Whether anyone may act: false without dashboard.Users (the console then says it is read-only). */
  get actionsEnabled(): boolean {
    return this.basic !== undefined;
  }

  /** The user named by valid credentials, or undefined when the request carries none that are valid. */
  async userOf(req: IncomingMessage): Promise<string | undefined> {
    if (!this.basic || !req.headers.authorization) return undefined;
    const outcome = await this.basic.check(req.headers.authorization, req.socket.remoteAddress ?? '');
    return outcome.ok ? outcome.user : undefined;
  }

  /** The operator of a state-changing request, or the typed refusal (401 asks for credentials). */
  async requireOperator(req: IncomingMessage): Promise<string> {
    if (!this.basic)
      throw new ForbiddenError(
        'the console is read-only: set dashboard.Users (a users file written by hivenode passwd) to allow actions',
      );
    const outcome = await this.basic.check(req.headers.authorization, req.socket.remoteAddress ?? '');
    if (!outcome.ok)
      throw outcome.retryAfter === undefined
        ? new UnauthorizedError(outcome.reason)
        : new OverloadedError(outcome.reason);
    return outcome.user;
  }

  /** Refuses a request whose Origin (or Referer) names another site than the Host it was sent to. */
  requireSameOrigin(req: IncomingMessage): void {
    const host = req.headers.host;
    const origin = req.headers.origin ?? req.headers.referer;
    if (origin === undefined) return;
    let sent: string;
    try {
      sent = new URL(origin).host;
    } catch {
      throw new ForbiddenError(`the request's origin '${origin.slice(0, 100)}' is not this console`);
    }
    if (host === undefined || sent !== host)
      throw new ForbiddenError(
        `cross-origin request refused: origin '${origin.slice(0, 100)}' is not this console (${host ?? 'no Host header'})`,
      );
  }

  /** The token for a cookie value: what a page puts into its forms. */
  tokenFor(cookie: string): string {
    return createHmac('sha256', this.secret).update(cookie).digest('base64url');
  }

  /** Refuses a request whose token does not match its cookie. */
  requireToken(req: IncomingMessage, sentToken: string | undefined): void {
    const cookie = cookiesOf(req).get(CSRF_COOKIE);
    const token = sentToken ?? (req.headers[CSRF_HEADER] as string | undefined);
    if (!cookie || !token)
      throw new ForbiddenError(
        `a CSRF token is required: send the ${CSRF_COOKIE} cookie with the token of GET /api/csrf in the ${CSRF_HEADER} header (pages put it into their forms)`,
      );
    const expected = Buffer.from(this.tokenFor(cookie));
    const given = Buffer.from(token);
    if (expected.length !== given.length || !timingSafeEqual(expected, given))
      throw new ForbiddenError('the CSRF token does not match: reload the page and try again');
  }
}

/** A fresh cookie value for a browser that has none yet. */
export function newCsrfCookie(): string {
  return randomBytes(18).toString('base64url');
}
