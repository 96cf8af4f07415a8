/**
 * CORS per route (`Cors`, README, CORS): which web origins may call which routes from a browser.
 * An entry is `pattern=origin1 origin2|*[,credentials]`, patterns as in Routes matched on the request
 * path (a preflight carries no body, so the route is the path's, as for Webhooks). The gateway
 * answers a preflight (OPTIONS with Access-Control-Request-Method) itself, before authentication
 * (a browser sends none with it): 204 with the methods, headers and Max-Age, or 403 for an origin the
 * entry does not name. An actual request from an allowed origin gets Access-Control-Allow-Origin (and
 * the headers a script may read) on every answer, errors included, so a page can tell a 401 from a
 * 429; one carrying an Origin the entry does not name is refused with 403 before anything else — a
 * browser sends a cached Basic credential with a cross-site form post, and the body of a text/plain
 * form can be JSON, so letting it through would be a cross-site request forgery door.
 * `*` with credentials is refused at start: browsers refuse that answer, and reflecting any origin
 * with credentials would let every site act as the user.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ForbiddenError } from '../../protocol/errors.js';
import { sendError } from './respond.js';
import type { PatternTable } from './route-patterns.js';
import { parsePatternTable } from './route-patterns.js';
import { pathRoute } from './webhooks.js';

export interface CorsRule {
  /** Origins as browsers send them (scheme://host[:port], lower case); empty with `any`. */
  readonly origins: ReadonlySet<string>;
  readonly any: boolean;
  readonly credentials: boolean;
}

const FORM = 'pattern=origin1 origin2|*[,credentials] (an origin is scheme://host[:port])';
const ORIGIN = /^(https?):\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?$/;
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** How long a browser may keep a preflight's answer (Chromium holds it two hours at most). */
const CORS_MAX_AGE_S = 600;
/** Headers a browser page may send besides the safelisted ones: credentials, the body's type, a trace, the procedure. */
const BASE_HEADERS = ['authorization', 'content-type', 'traceparent', 'tracestate', 'platform-procedure'];
/** Headers of the gateway's answers a page may read (beyond the safelisted ones). */
const EXPOSED = 'RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, traceparent';

function parseRule(raw: string): CorsRule {
  const [list, ...options] = raw.split(',').map((p) => p.trim());
  let credentials = false;
  for (const o of options) {
    if (o.toLowerCase() !== 'credentials') throw new Error(`'${o.slice(0, 40)}' is not an option (only 'credentials')`);
    credentials = true;
  }
  const written = (list ?? '').split(/\s+/).filter((o) => o !== '');
  if (written.length === 0) throw new Error("names no origin (origins separated by spaces, or '*')");
  const any = written.includes('*');
  if (any && written.length > 1) throw new Error("'*' allows every origin: write it alone");
  if (any && credentials)
    throw new Error(
      "'*' with credentials is refused: browsers do not accept that answer, and allowing every origin with the user's credentials would let any site act as the user; name the origins",
    );
  const origins = new Set<string>();
  for (const o of any ? [] : written) {
    const lower = o.toLowerCase().replace(/\/$/, '');
    if (!ORIGIN.test(lower))
      throw new Error(`'${o.slice(0, 80)}' is not an origin (scheme://host[:port], no path; 'null' is never allowed)`);
    origins.add(lower);
  }
  return { origins, any, credentials };
}

/** Parses Cors; throws an Error naming the bad entry. */
export function parseCors(text: string): PatternTable<CorsRule> {
  return parsePatternTable(text, FORM, parseRule);
}

export interface CorsSettings {
  /** Strict mode takes POST only; interceptor mode any of the usual methods. */
  strict: boolean;
  /** Lower-case header names ControlAllowList lets through as controls. */
  controlHeaders: ReadonlySet<string>;
  /** ControlAllowList is '*': any requested header is allowed. */
  anyHeader: boolean;
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

export class Cors {
  private readonly methods: string;
  private readonly headers: string;

  constructor(
    private readonly table: PatternTable<CorsRule>,
    private readonly settings: CorsSettings,
    /** Told of each request refused for its origin (counted with the gateway's 403s). */
    private readonly onRefused: () => void = () => undefined,
  ) {
    this.methods = settings.strict ? 'POST' : 'GET, POST, PUT, PATCH, DELETE';
    this.headers = [...new Set([...BASE_HEADERS, ...settings.controlHeaders])].filter((h) => h !== '*').join(', ');
  }

  /**
   * Answers a preflight (true: answered) for a path whose route has an entry; any other OPTIONS
   * request goes on as a request (false).
   */
  preflight(req: IncomingMessage, res: ServerResponse, subPath: string): boolean {
    const origin = one(req.headers.origin);
    const method = one(req.headers['access-control-request-method']);
    if (origin === undefined || method === undefined) return false;
    const [cls, op] = pathRoute(subPath);
    const entry = this.table.match(cls, op);
    if (!entry) return false;
    req.resume();
    res.setHeader('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    if (!this.allows(entry.value, origin)) {
      this.onRefused();
      refuse(res, origin, entry.pattern);
      return true;
    }
    this.allowOrigin(res, entry.value, origin);
    res.setHeader('access-control-allow-methods', this.methods);
    res.setHeader(
      'access-control-allow-headers',
      this.settings.anyHeader ? requestedHeaders(req) || this.headers : this.headers,
    );
    res.setHeader('access-control-max-age', String(CORS_MAX_AGE_S));
    res.writeHead(204);
    res.end();
    return true;
  }

  /**
   * Decorates the answer of an actual request from a browser: the allowed origin and the headers its
   * script may read. False when the request was answered here: 403 for an origin the route's entry does not name.
   */
  admit(req: IncomingMessage, res: ServerResponse, subPath: string): boolean {
    const origin = one(req.headers.origin);
    if (origin === undefined) return true;
    const [cls, op] = pathRoute(subPath);
    const entry = this.table.match(cls, op);
    if (!entry) return true;
    res.setHeader('vary', 'Origin');
    if (!this.allows(entry.value, origin)) {
      req.resume();
      this.onRefused();
      refuse(res, origin, entry.pattern);
      return false;
    }
    this.allowOrigin(res, entry.value, origin);
    res.setHeader('access-control-expose-headers', EXPOSED);
    return true;
  }

  private allows(rule: CorsRule, origin: string): boolean {
    return rule.any || rule.origins.has(origin.toLowerCase());
  }

  private allowOrigin(res: ServerResponse, rule: CorsRule, origin: string): void {
    // '*' answers '*' (no credentials possible); a named origin is answered with itself
    res.setHeader('access-control-allow-origin', rule.any ? '*' : origin);
    if (rule.credentials) res.setHeader('access-control-allow-credentials', 'true');
  }
}

/** The headers a preflight asks for, when each is a header name (else '': the configured list is answered). */
function requestedHeaders(req: IncomingMessage): string {
  const asked = (one(req.headers['access-control-request-headers']) ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  return asked.every((h) => HEADER_TOKEN.test(h)) ? asked.join(', ') : '';
}

function refuse(res: ServerResponse, origin: string, pattern: string): void {
  sendError(res, new ForbiddenError(`origin '${origin.slice(0, 200)}' is not allowed by Cors entry '${pattern}'`));
}
