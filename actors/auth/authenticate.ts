/**
 * Basic authentication against an htpasswd-style users file (`user:bcrypt-hash` lines, written by
 * `hivenode passwd`). bcrypt is deliberately slow, so verified credentials are cached, keyed by a
 * SHA-256 of the whole header (the password itself is never kept) and compared in constant time; a
 * comparison runs in a worker thread (verify-pool.ts), never on the event loop, and failures are
 * throttled per client address and per user (sign-in-throttle.ts: 429 with Retry-After).
 * An unknown user still costs one bcrypt comparison, so timing does not reveal which users exist.
 * The file is re-read when it changes (checked at most every 5 s, actors/net/watched-file.ts), and
 * a change empties the cache, so a removed user is refused at once even with cached credentials.
 * Neither credentials nor file contents are ever logged (a bad file is named by its line number).
 */
import bcrypt from 'bcryptjs';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { TlsClientAuth } from '../../config/tls.js';
import { ConfigError, describeError } from '../../protocol/errors.js';
import { LogThrottle } from '../observe/log-throttle.js';
import type { BearerAuth } from './bearer.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { VerifyPool } from './verify-pool.js';
import { certificateUser } from '../net/server-tls.js';
import { WatchedFile } from '../net/watched-file.js';

const CACHE_TTL_MS = 5 * 60_000;
const CACHE_MAX = 10_000;
/** A valid hash of a random password: compared against when the user is unknown. */
const DUMMY_HASH = '$2b$10$.jfqggLdagdiDTNVXLOgCeY.PaLU1gSXyY5jOTZRCBTtjdqkSU69y';

/**
 * Who a request is from: authorization (access.ts) takes the user from here, whatever proved it. A
 * refusal with `retryAfter` is a throttled attempt (429 with Retry-After), or verification that could
 * not be done now (`unavailable`: 503); otherwise 401.
 */
export type AuthOutcome =
  | { ok: true; user: string; groups?: ReadonlySet<string>; via?: 'Bearer' }
  | { ok: false; reason: string; retryAfter?: number; unavailable?: true; bearer?: true };

/** Parses users-file text; throws a ConfigError naming the bad line. */
function parseUsers(text: string, file: string): Map<string, string> {
  const users = new Map<string, string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    const user = line.slice(0, colon);
    const hash = line.slice(colon + 1);
    if (colon <= 0 || !/^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(hash)) {
      throw new ConfigError(
        `users file ${file} line ${i + 1}: expected 'user:bcrypt-hash' (write entries with 'hivenode passwd')`,
      );
    }
    users.set(user, hash);
  });
  return users;
}

export interface BasicAuthOptions {
  onReloadError?: (message: string) => void;
  recheckMs?: number;
  /** Where throttled sign-ins are reported: one line a minute at most, with the count since the last. */
  onThrottled?: (line: string) => void;
  /** The failure limits (sign-in-throttle.ts); the defaults otherwise. */
  throttle?: SignInThrottle;
}

export class BasicAuth {
  private readonly users: WatchedFile<Map<string, string>>;
  /** The users the cache was filled from: another map means the file changed. */
  private cachedFrom: Map<string, string>;
  private readonly cache = new Map<string, { digest: Buffer; user: string; expires: number }>();
  private readonly pool = new VerifyPool();
  private readonly throttle: SignInThrottle;
  private readonly throttledLines = new LogThrottle();
  private readonly onThrottled: ((line: string) => void) | undefined;

  constructor(file: string, opts: BasicAuthOptions = {}) {
    const { onThrottled, throttle, ...watch } = opts;
    this.users = new WatchedFile(file, parseUsers, { param: 'Users', kind: 'users file', ...watch });
    this.cachedFrom = this.users.get();
    this.throttle = throttle ?? new SignInThrottle();
    this.onThrottled = onThrottled;
  }

  /** bcrypt comparisons made since start (the gateway's figure `signInVerifications`). */
  get verifications(): number {
    return this.pool.compared;
  }

  /** Stops the verification workers (a gateway's or a console's drain). */
  close(): Promise<void> {
    return this.pool.close();
  }

  get userCount(): number {
    return this.users.get().size;
  }

  /**
   * Checks an Authorization header value from client `address`: cached credentials at once; else,
   * unless the address or the user failed too often lately (429), one bcrypt comparison in a worker.
   */
  async check(header: string | undefined, address = ''): Promise<AuthOutcome> {
    if (!header) return { ok: false, reason: 'credentials are required' };
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (!m) return { ok: false, reason: 'only Basic credentials are accepted' };
    const users = this.users.get();
    if (users !== this.cachedFrom) {
      this.cache.clear();
      this.throttle.clear();
      this.cachedFrom = users;
    }
    const digest = createHash('sha256').update(header).digest();
    const key = digest.toString('base64');
    const hit = this.cache.get(key);
    const now = Date.now();
    if (hit && hit.expires > now && timingSafeEqual(hit.digest, digest)) return { ok: true, user: hit.user };
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return { ok: false, reason: 'malformed Basic credentials' };
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const hash = users.get(user);
    const retryAfter = this.throttle.retryAfter(address, user, now);
    if (retryAfter !== undefined) {
      this.throttledLines.note('throttled', (suppressed) =>
        this.onThrottled?.(
          `sign-in attempts refused (429) after too many failures: the last from ${address || 'an unknown address'} for user '${user.slice(0, 64)}'${suppressed > 0 ? `; ${suppressed} more refused since the last line` : ''}`,
        ),
      );
      return {
        ok: false,
        reason: `too many failed sign-ins from this address or for this user; retry in ${retryAfter} s`,
        retryAfter,
      };
    }
    this.throttle.attempt(address, user, now);
    let matches: boolean;
    try {
      matches = await this.pool.compare(password, hash ?? DUMMY_HASH);
    } catch (e) {
      this.throttle.succeeded(address, user);
      return { ok: false, reason: describeError(e), retryAfter: 1, unavailable: true };
    }
    if (!hash || !matches) return { ok: false, reason: 'wrong user name or password' };
    this.throttle.succeeded(address, user);
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { digest, user, expires: now + CACHE_TTL_MS });
    return { ok: true, user };
  }
}

/** `Bearer <token>` (RFC 6750: the b64token characters). */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The user each connection's verified client certificate names ('' for none): read once per connection, not per request. */
const connectionUsers = new WeakMap<Socket, string>();

function userOfConnection(socket: Socket): string | undefined {
  let user = connectionUsers.get(socket);
  if (user === undefined) {
    user = (socket as Partial<TLSSocket>).encrypted === true ? (certificateUser(socket as TLSSocket) ?? '') : '';
    connectionUsers.set(socket, user);
  }
  return user === '' ? undefined : user;
}

/**
 * The user of a request, in the outcome shape of Basic authentication so that what is checked next
 * (authorization) composes with either: a Bearer token when the request carries one and JWKS or
 * JWTSecret is set (bearer.ts; its groups come along); Basic credentials when the request carries them
 * and a users file is set; else the CN of the client certificate the TLS handshake verified against TLSCA (the
 * CA vouches for the name, so the users file need not list it). Undefined when the gateway
 * authenticates nobody: no users file, and no verified certificate on the connection. With
 * TLSClientAuth require every connection carries a verified certificate, so every request has a user.
 */
export async function authenticate(
  req: IncomingMessage,
  basic: BasicAuth | undefined,
  clientAuth: TlsClientAuth,
  bearer?: BearerAuth,
): Promise<AuthOutcome | undefined> {
  const header = req.headers.authorization;
  if (bearer && header !== undefined) {
    const m = BEARER.exec(header);
    if (m) {
      const outcome = await bearer.check(m[1]!);
      return outcome.ok
        ? { ok: true, user: outcome.user, groups: outcome.groups, via: 'Bearer' }
        : { ok: false, reason: outcome.reason, bearer: true };
    }
    if (!basic) return { ok: false, reason: 'only Bearer tokens are accepted', bearer: true };
  }
  if (basic && header) return basic.check(header, req.socket.remoteAddress ?? '');
  const user = clientAuth === 'none' ? undefined : userOfConnection(req.socket);
  if (user !== undefined) return { ok: true, user };
  if (bearer && !basic) return { ok: false, reason: 'a Bearer token is required', bearer: true };
  if (basic)
    return {
      ok: false,
      reason:
        clientAuth === 'none'
          ? 'credentials are required'
          : 'credentials are required (Basic, or a client certificate)',
    };
  if (clientAuth === 'require')
    return { ok: false, reason: 'the client certificate names no user (its subject has no CN)' };
  return undefined;
}

/** A users-file line for `hivenode passwd`. */
export async function passwdLine(user: string, password: string, rounds = 10): Promise<string> {
  if (!/^[^:\s]+$/.test(user)) throw new ConfigError('user names may not contain ":" or white space');
  return `${user}:${await bcrypt.hash(password, rounds)}`;
}
