/**
 * The HTTP client service (README, The HTTP client): one outbound request per message, mapped by interceptor
 * services. The before interceptor turns the message into the request body (and may change method,
 * URL, content type and headers through its options); the after interceptor turns the response into
 * the Result. Without an after interceptor the Result carries status, body and headers.
 */
import { readFileSync } from 'node:fs';
import { HTTPCLIENT_PARAMS } from '../../config/httpclient.js';
import type { ConfigOf } from '../../config/params.js';
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { splitHeaderLines } from '../../config/values.js';
import { Code, isSuccessCode } from '../../protocol/codes.js';
import { BadInputError, ConfigError, OverloadedError, describeError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { emptyMap, failure, success, validateResult } from '../../protocol/message.js';
import { parseJson } from '../../protocol/wire.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import { handleAsync, serve } from '../service/serve.js';
import { addTraceHeaders, traceOf } from '../observe/trace-scope.js';
import { connectInterceptor, interceptorUrl } from '../interceptor/connect.js';
import { proxySettings } from '../net/proxy.js';
import { proxyRoutes } from '../net/proxy-routes.js';
import { addressPolicy, guardedLookup } from './address-guard.js';
import type { InboundResponse, OutboundRequest } from './exchange.js';
import { exchange, retryAfterMs } from './exchange.js';
import { LazyAgent } from './lazy-agent.js';
import type { Signer } from './signing.js';
import { signerOf } from './signing.js';

type HttpClientConfig = ConfigOf<typeof HTTPCLIENT_PARAMS>;

/** How a response body is handed on, by its Content-Type (README, The HTTP client). */
export function responseType(contentType: string | undefined): 'json' | 'text' | 'raw' {
  const ct = (contentType ?? 'text/plain; charset=utf-8').toLowerCase();
  if (/^application\/([a-z0-9.+-]*\+)?json\b/.test(ct)) return 'json';
  if (/^text\//.test(ct) || /^application\/([a-z0-9.+-]*\+)?xml\b/.test(ct)) return 'text';
  return 'raw';
}

function headerMap(lines: [string, string][]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of lines) (out[k] ??= []).push(v);
  return out;
}

function parseHeaderOption(text: string): Record<string, string[]> {
  const parsed = parseJson(text, 'before interceptor options.headers');
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new BadInputError('before interceptor options.headers must be an object of name -> list of values');
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    const values = (Array.isArray(v) ? v : [v]).map(String);
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) || values.some((x) => /[\r\n\0]/.test(x)))
      throw new BadInputError(`before interceptor set an invalid header '${k}'`);
    out[k] = values;
  }
  return out;
}

/** A URL the service may call: http or https (BadInputError otherwise). The parsed URL is never changed. */
function targetOf(url: string): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new BadInputError(`'${url}' is not a URL`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new BadInputError(`only http and https URLs are accepted, not ${target.protocol}`);
  return target;
}

/**
 * The Result of a response when no after interceptor maps it (docs/ARCHITECTURE.md, Result shapes).
 */
function plainResult(res: InboundResponse): Result {
  const data = emptyMap();
  data.status = [String(res.status)];
  data.body = [res.body.toString('utf8')];
  for (const k of Object.keys(res.headers)) data[`header_${k}`] = res.headers[k]!;
  if (isSuccessCode(res.status)) return success(data, []);
  // An upstream 4xx is the caller's fault as the upstream judged it (or, 408/425/429, its "try later"):
  // its status is the Code, so a queue with RetryOn retryable retries exactly what is worth retrying.
  // As 502 it was retried until dead. Anything else (5xx, a stray 1xx/3xx) is the upstream failing: 502.
  const code = res.status >= 400 && res.status < 500 ? res.status : Code.UpstreamError;
  return withRetryAfter(
    failure(code, `upstream answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, data),
    res,
  );
}

/**
 * A failed Result of a response that said when to come back (Retry-After, seconds or a date) gets
 * Data `retry_after` in whole seconds from now, unless it has one: a queue in front does not try
 * again before that (README, The queue, Retry schedules).
 */
function withRetryAfter(result: Result, res: InboundResponse): Result {
  if (isSuccessCode(result.Code) || result.Data.retry_after !== undefined) return result;
  const ms = retryAfterMs(res.headers['retry-after']?.[0]);
  if (ms !== undefined) result.Data.retry_after = [String(Math.ceil(ms / 1000))];
  return result;
}

/**
 * The HTTP client's start-time checks: an interceptor, URL, Headers, CAFile read, Signing's scheme and
 * secrets read. The start runs them first and uses what they made; `hivenode check` and a reload run
 * them alone. A secret file turning bad later keeps the key read before, with `onSecretError` told.
 */
function check(
  c: HttpClientConfig,
  onSecretError: (line: string) => void = () => undefined,
): {
  configuredTarget: URL | undefined;
  configuredHeaders: Record<string, string[]>;
  ca: string | undefined;
  signer: Signer | undefined;
} {
  if (!c.InterceptBefore && !c.InterceptAfter)
    throw new ConfigError(
      'the HTTP client needs at least one interceptor: set InterceptBefore and/or InterceptAfter (README, The HTTP client)',
    );
  if (c.InterceptBefore) interceptorUrl('InterceptBefore', c.InterceptBefore);
  if (c.InterceptAfter) interceptorUrl('InterceptAfter', c.InterceptAfter);
  const signer = signerOf(c.Signing, onSecretError);
  let configuredTarget: URL | undefined;
  if (c.URL) {
    try {
      configuredTarget = targetOf(c.URL);
    } catch (e) {
      throw new ConfigError(`URL: ${describeError(e)}`);
    }
  }
  let configuredHeaders: Record<string, string[]>;
  try {
    configuredHeaders = headerMap(splitHeaderLines(c.Headers));
  } catch (e) {
    throw new ConfigError(`Headers: ${describeError(e)}`);
  }
  let ca: string | undefined;
  if (c.CAFile) {
    try {
      ca = readFileSync(c.CAFile, 'utf8');
    } catch (e) {
      throw new ConfigError(
        `CAFile '${c.CAFile}' cannot be read: ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`,
      );
    }
  }
  return { configuredTarget, configuredHeaders, ca, signer };
}

async function start(ctx: ServiceContext<HttpClientConfig>): Promise<RunningService> {
  const c = ctx.config;
  const { configuredTarget, configuredHeaders, ca, signer } = check(c, (line) => ctx.log.warn(line));
  const policy = addressPolicy(c.BlockPrivate, c.BlockNetworks);
  const proxies = proxySettings(c.Proxy, process.env, (line) => ctx.log.warn(line));
  const dispatcher = new LazyAgent({
    connections: 64,
    connect: { ...(policy.active ? { lookup: guardedLookup(policy) as never } : {}), ...(ca ? { ca } : {}) },
  });
  const routes = proxyRoutes(proxies, { connections: 64, ...(ca ? { ca } : {}) });
  const outbound = { direct: dispatcher, routes };
  const interceptorRoutes = c.InterceptProxy ? routes : undefined;
  let before: Awaited<ReturnType<typeof connectInterceptor>> | undefined;
  let after: typeof before;
  try {
    before = c.InterceptBefore
      ? await connectInterceptor('InterceptBefore', c.InterceptBefore, interceptorRoutes)
      : undefined;
    after = c.InterceptAfter
      ? await connectInterceptor('InterceptAfter', c.InterceptAfter, interceptorRoutes)
      : undefined;
  } catch (e) {
    // a start refused here must not leave the outbound pools (and a connected before interceptor) open
    await Promise.all([before?.close(), dispatcher.close(), routes.close()]).catch(() => undefined);
    throw e;
  }
  // what the before interceptor is told of the configured headers is the same for every message
  const configuredHeadersJson = JSON.stringify(configuredHeaders);
  const handle = async (message: Message): Promise<Result> => {
    const deadline = Date.now() + c.Timeout;
    // the message's trace: the upstream and the interceptors continue it
    const trace = traceOf(message.Control);
    let method = c.Method || 'POST';
    let url = c.URL;
    let contentType = c.ContentType;
    let headers: Record<string, string[]> = { ...configuredHeaders };
    let body: string | undefined;
    if (before) {
      const reply = await before.call(
        {
          type: 'json',
          value: message,
          options: { method, url, content_type: contentType, headers: configuredHeadersJson },
        },
        deadline,
        trace,
      );
      if (!isSuccessCode(reply.status_code)) return failure(reply.status_code, reply.status);
      method = reply.options.method || method;
      url = reply.options.url || url;
      contentType = reply.options.content_type || contentType;
      if (reply.options.headers !== undefined) headers = parseHeaderOption(reply.options.headers);
      body =
        reply.data === undefined || reply.data === null
          ? undefined
          : typeof reply.data === 'string'
            ? reply.data
            : JSON.stringify(reply.data);
    } else {
      body = JSON.stringify(message.Data);
    }
    if (!url)
      throw new BadInputError('no URL: set the URL parameter or return options.url from the before interceptor');
    const target = url === c.URL && configuredTarget ? configuredTarget : targetOf(url);
    if (!/^[A-Za-z]+$/.test(method)) throw new BadInputError(`'${method}' is not an HTTP method`);
    // a Content-Type among the headers wins over ContentType (README, The HTTP client)
    if (body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
      headers['content-type'] = [contentType];
    // unless the headers already name a trace
    addTraceHeaders(headers, trace, (v) => [v]);
    const upper = method.toUpperCase();
    const sent = upper === 'GET' || upper === 'HEAD' ? undefined : body;
    // signed last, over the very bytes sent, after the before interceptor had its say on headers and body
    signer?.sign(headers, sent, message.Control);
    const request: OutboundRequest = { method: upper, url: target, headers, body: sent };
    const res = await exchange(
      outbound,
      request,
      { deadline, maxBytes: c.MaxResponseBytes, maxRedirects: c.MaxRedirects, retries: c.Retries },
      policy,
    );
    const type = responseType(res.headers['content-type']?.[0]);
    if (!after) return type === 'raw' ? failure(Code.BadRequest, 'Not supported raw types') : plainResult(res);
    const text = res.body.toString('utf8');
    let value: unknown = type === 'raw' ? res.body.toString('base64') : text;
    if (type === 'json' && text.trim() !== '') {
      try {
        value = JSON.parse(text) as unknown;
      } catch {
        value = text;
      }
    }
    const shownHeaders: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(request.headers))
      if (!/^(authorization|cookie|proxy-authorization)$/i.test(k)) shownHeaders[k] = v;
    const reply = await after.call(
      {
        type,
        value,
        options: {
          http_request: JSON.stringify({ method: request.method, url: res.url, headers: shownHeaders }),
          http_response_status_code: String(res.status),
          http_response_status: `${res.status}${res.statusText ? ` ${res.statusText}` : ''}`,
          http_response_headers: JSON.stringify(res.headers),
        },
      },
      deadline,
      trace,
    );
    if (!isSuccessCode(reply.status_code)) return failure(reply.status_code, reply.status);
    return withRetryAfter(validateResult(reply.data, 'after interceptor data'), res);
  };

  const running = await serve(ctx, {
    worker: 'requests',
    handle: handleAsync(handle),
    maxInFlight: c.MaxInFlight,
    overloaded: () => new OverloadedError(`${c.MaxInFlight} requests are in flight; retry shortly`),
    // a failure of ours or of the target's network is logged; a refusal the caller caused is only answered
    observe: (code, error) => {
      if (error !== undefined && code >= 500) ctx.log.warn(`request failed: ${describeError(error)}`);
    },
    close: () =>
      Promise.all([before?.close(), after?.close(), dispatcher.close(), routes.close()]).then(() => undefined),
  });
  ctx.log.info(
    `HTTP client listening on channel '${ctx.inputChannel}'${c.URL ? `, calling ${c.Method || 'POST'} ${new URL(c.URL).origin}` : ''}${signer ? `, signing (${signer.scheme})` : ''}${proxies.summary ? `; ${proxies.summary}${c.InterceptProxy ? ', interceptors too' : ''}` : ''}`,
  );
  return running;
}

export const httpClientService = defineService(
  SERVICES.httpclient,
  compilerFor('httpclient', HTTPCLIENT_PARAMS),
  start,
  (c) => void check(c),
);
