/**
 * One outbound HTTP exchange with its bounds: a total deadline, a response size cap, redirects
 * (at most MaxRedirects; Authorization and Cookie dropped when leaving the origin; 303, and 301/302
 * after a POST, become GET), retries of idempotent methods honouring Retry-After, and the address
 * policy on every hop. Failures are typed: 504 deadline, 502 upstream, 403 blocked address. What is
 * retried, statuses and failures alike, is what protocol/codes.ts calls retryable. Every hop takes
 * its own route (direct or through a proxy, ../shared/proxy-routes.ts); through a proxy the address
 * policy checks the upstream's resolved address, and the proxy's refusals are named as its own.
 */
import type { Dispatcher } from 'undici';
import { isRetryableCode } from '../../protocol/codes.js';
import { BadInputError, HiveError, TimeoutError, UpstreamError, describeError } from '../../protocol/errors.js';
import { emptyRecord } from '../../protocol/message.js';
import { Deadlines } from '../shared/deadlines.js';
import { readCapped } from '../shared/read-capped.js';
import { RequestSignal } from '../shared/request-signal.js';
import type { Routes } from '../net/proxy-routes.js';
import { proxyRefusal } from '../net/proxy-routes.js';
import type { AddressPolicy } from './address-guard.js';
import { BlockedAddressError, checkLiteralHost, checkUpstreamHost, pinnedUrl } from './address-guard.js';
import type { Requester } from './lazy-agent.js';

export interface OutboundRequest {
  method: string;
  /** Parsed once, where the request is made (a parse per hop was measurable per request). */
  url: URL;
  /** Header name → values (names as given). */
  headers: Record<string, string[]>;
  body: string | undefined;
}

export interface InboundResponse {
  status: number;
  statusText: string;
  headers: Record<string, string[]>;
  body: Buffer;
  /** The URL finally answered (after redirects). */
  url: string;
}

export interface ExchangeLimits {
  deadline: number;
  maxBytes: number;
  maxRedirects: number;
  retries: number;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

function headerValues(raw: Record<string, string | string[] | undefined>): Record<string, string[]> {
  const out = emptyRecord<string[]>();
  for (const k of Object.keys(raw)) {
    const v = raw[k];
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v : [v];
  }
  return out;
}

/** Seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The wait before retry number `retries + 1` when the server names none: 400 ms, doubling. */
const backoffMs = (retries: number): number => 200 * 2 ** (retries + 1);

/**
 * A response over MaxResponseBytes: reported as an upstream failure (502) like the others, but the
 * same request would only bring the same body again, so it is final.
 */
class ResponseTooLargeError extends UpstreamError {
  override readonly name = 'ResponseTooLargeError';
  override get retryable(): boolean {
    return false;
  }
}

/**
 * Whether a request through a proxy is pinned to the address checked for it (always). TEST ONLY: the
 * rebinding test (spec/adapters/proxy/httpclient-proxy-rebinding.spec.ts) sets
 * HIVENODE_TEST_BROKEN_NO_PIN=1 to show that its test fails without the pin; nothing else may set it.
 * Read per request (only on the proxy path) so that test can switch it in one process.
 */
const pins = (): boolean => process.env.HIVENODE_TEST_BROKEN_NO_PIN !== '1';

/** The deadlines of every exchange in flight, under one timer (see actors/shared/deadlines.ts). */
const deadlines = new Deadlines();

/** Where requests go: direct through `direct`, or through the proxy `routes` give a URL. */
export interface Outbound {
  readonly direct: Requester;
  readonly routes: Routes;
}

async function once(
  out: Outbound,
  req: OutboundRequest,
  limits: ExchangeLimits,
  policy: AddressPolicy,
): Promise<InboundResponse> {
  const url = req.url;
  const via = out.routes.route(url);
  const proxy = via?.proxy;
  let dispatcher: Requester = via ? via.dispatcher : out.direct;
  let headers: Record<string, string | string[]> = req.headers;
  // where the request is sent: the URL itself, or through a proxy the address checked for it
  let target = url;
  if (via) {
    const address = await checkUpstreamHost(url, policy);
    // undici's proxy connector refuses such a header (it would hand the proxy credentials on)
    if (Object.keys(headers).some((k) => k.toLowerCase() === 'proxy-authorization'))
      throw new BadInputError(
        'a Proxy-Authorization header cannot be sent through a proxy: give the credentials in the proxy URL',
      );
    // the proxy connector adds a Host header to the headers it is given: a copy keeps that Host out
    // of the next hop's request after a redirect
    headers = { ...headers };
    if (address !== undefined && pins()) {
      // pinned: the proxy tunnels to the address that was checked, the upstream still gets the name (Host, TLS)
      target = pinnedUrl(url, address);
      if (!Object.keys(headers).some((k) => k.toLowerCase() === 'host')) headers.host = url.host;
      dispatcher = via.pinned(url);
    }
  } else checkLiteralHost(url, policy);
  const remaining = limits.deadline - Date.now();
  if (remaining <= 0) throw new TimeoutError(`no time left for ${req.method} ${url.origin}`);
  const signal = new RequestSignal();
  const deadline = deadlines.start(remaining, () => signal.abort());
  try {
    const res = await dispatcher.request({
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: req.method as Dispatcher.HttpMethod,
      headers,
      body: req.body,
      signal,
      maxRedirections: 0,
    } as Dispatcher.RequestOptions);
    const body = await readCapped(
      res.body,
      limits.maxBytes,
      () => new ResponseTooLargeError(`the response of ${url.origin} is larger than ${limits.maxBytes} bytes`),
    );
    return {
      status: res.statusCode,
      statusText: STATUS_TEXT[res.statusCode] ?? '',
      headers: headerValues(res.headers),
      body,
      url: url.href,
    };
  } catch (e) {
    if (e instanceof UpstreamError || e instanceof BlockedAddressError) throw e;
    const cause = (e as { cause?: unknown }).cause;
    if (cause instanceof BlockedAddressError) throw cause;
    const refused = proxy ? proxyRefusal(e, proxy, url.origin) : undefined;
    if (refused) throw refused;
    if (signal.aborted)
      throw new TimeoutError(
        `${req.method} ${url.origin} did not answer in time${proxy ? ` (through proxy ${proxy.shown})` : ''}`,
        { cause: e },
      );
    throw new UpstreamError(
      `${req.method} ${url.origin} failed${proxy ? ` through proxy ${proxy.shown}` : ''}: ${describeError(e)}`,
      { cause: e },
    );
  } finally {
    deadlines.settle(deadline);
  }
}

/** Sends a request, following redirects and retrying as the limits allow. */
export async function exchange(
  out: Outbound,
  request: OutboundRequest,
  limits: ExchangeLimits,
  policy: AddressPolicy,
): Promise<InboundResponse> {
  let req = { ...request, method: request.method.toUpperCase() };
  let redirects = 0;
  let retries = 0;
  /** A retry is made for idempotent methods only, while retries are left and its wait ends before the deadline. */
  const mayRetryAfter = (wait: number): boolean =>
    IDEMPOTENT.has(req.method) && retries < limits.retries && Date.now() + wait < limits.deadline;
  for (;;) {
    let res: InboundResponse;
    try {
      res = await once(out, req, limits, policy);
    } catch (e) {
      // a TimeoutError (504) is retryable by its code, but here it means the deadline passed, which
      // mayRetryAfter refuses: in effect connection failures (502) are what is retried
      const wait = backoffMs(retries);
      if (e instanceof HiveError && e.retryable && mayRetryAfter(wait)) {
        retries++;
        await sleep(wait);
        continue;
      }
      throw e;
    }
    if (REDIRECT_STATUS.has(res.status) && res.headers.location?.[0]) {
      if (redirects >= limits.maxRedirects)
        throw new UpstreamError(`too many redirects (more than ${limits.maxRedirects}) from ${request.url.href}`);
      redirects++;
      const next = new URL(res.headers.location[0], req.url);
      if (next.protocol !== 'http:' && next.protocol !== 'https:')
        throw new UpstreamError(`redirect to a ${next.protocol} URL refused`);
      const crossOrigin = next.origin !== req.url.origin;
      const headers: Record<string, string[]> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (!(crossOrigin && CREDENTIAL_HEADERS.has(k.toLowerCase()))) headers[k] = v;
      const toGet = res.status === 303 || ((res.status === 301 || res.status === 302) && req.method === 'POST');
      if (toGet) for (const k of Object.keys(headers)) if (/^content-(type|length)$/i.test(k)) delete headers[k];
      req = { method: toGet ? 'GET' : req.method, url: next, headers, body: toGet ? undefined : req.body };
      continue;
    }
    if (isRetryableCode(res.status)) {
      const wait = retryAfterMs(res.headers['retry-after']?.[0]) ?? backoffMs(retries);
      if (mayRetryAfter(wait)) {
        retries++;
        await sleep(wait);
        continue;
      }
    }
    return res;
  }
}
