/**
 * The REST gateway service (README, The REST gateway): a node:http server whose requests are handed to the
 * gateway actor. Admission control happens at the door, before anything is queued: requests over
 * MaxInFlight get 503 with Retry-After, so memory stays bounded under overload, and the health
 * check is answered without touching the actor so it stays fast when the gateway is busy.
 */
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { GATEWAY_PARAMS } from '../../config/gateway.js';
import type { ConfigOf } from '../../config/params.js';
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { NotFoundError, UnavailableError } from '../../protocol/errors.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import type { ReadinessView } from '../service/readiness.js';
import { defineService } from '../service/context.js';
import { InFlight } from '../service/serve.js';
import { listenOn } from '../net/listen.js';
import { ServerTls } from '../net/server-tls.js';
import { onUndelivered } from '../../supervisors/undelivered.js';
import { connectInterceptor } from '../interceptor/connect.js';
import { proxySettings } from '../net/proxy.js';
import { proxyRoutes } from '../net/proxy-routes.js';
import { openAccess } from './access.js';
import { BasicAuth } from './auth.js';
import { openBearer } from './bearer.js';
import { Webhooks } from './webhooks.js';
import { RateLimiter } from './rate-limits.js';
import type { GatewayDeps } from './handler.js';
import { handleRequest } from './handler.js';
import { healthOf } from './health.js';
import { countHandshakes } from './https.js';
import { compileGatewayOptions } from './options.js';
import { GatewayResponse, applyHeaders, send, sendError, sendJson } from './respond.js';
import { LogThrottle } from '../observe/log-throttle.js';
import { endRequestHop, requestHop, requestHopName } from './trace.js';

/**
 * The gateway actor's one message: an accepted request to handle. A class with the undelivered hook
 * as a method (supervisors/undelivered.ts): one shape for every request, where the spread of
 * onFailure copied each into an object with a closure of its own.
 */
class RequestMsg {
  readonly type = 'request';
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly subPath: string,
    private readonly inFlight: InFlight,
  ) {}

  /** Not handled (the actor stopped, or crashed on it): answered with the error, no longer in flight. */
  [onUndelivered](error: unknown): void {
    this.inFlight.end();
    sendError(this.res, error);
  }
}

async function start(ctx: ServiceContext<ConfigOf<typeof GATEWAY_PARAMS>>): Promise<RunningService> {
  const opts = compileGatewayOptions(ctx.config);
  const tls = ServerTls.fromConfig(ctx.config, `gateway ${ctx.name}`, ctx.log);
  const clientAuth = tls?.clientAuth ?? 'none';
  // read once: a debug line built per request or handshake costs its formatting even when not written
  const debug = /^(debug|trace)$/i.test(ctx.config.LOGLEVEL);
  const auth = opts.usersFile ? new BasicAuth(opts.usersFile, { onReloadError: (m) => ctx.log.error(m), onThrottled: (m) => ctx.log.warn(m) }) : undefined;
  const access = opts.access ? openAccess(opts.access, opts.groupsFile, ctx.log, undefined, opts.bearer?.groupsClaim !== undefined && opts.bearer.groupsClaim !== '') : undefined;
  const bearer = opts.bearer ? await openBearer(opts.bearer, (m) => ctx.log.error(m)) : undefined;
  const webhooks = opts.webhooks ? new Webhooks(opts.webhooks, opts.webhookToleranceMs, (m) => ctx.log.error(m)) : undefined;
  if (!auth && !bearer && clientAuth === 'none') ctx.log.warn('Users is not set: the gateway accepts requests without authentication');
  if (!auth && !bearer && clientAuth === 'request') ctx.log.warn('Users is not set: requests without a client certificate are accepted without authentication');
  if (opts.devMode) ctx.log.warn('DevMode is on: every control passes and CORS is wide open; do not use this in production');
  // interceptors are called direct even when the environment names a proxy, unless InterceptProxy
  const proxies = opts.interceptProxy ? proxyRoutes(proxySettings('', process.env, (line) => ctx.log.warn(line)), { connections: 64 }) : undefined;
  const inFlight = new InFlight();
  const deps: GatewayDeps = {
    opts,
    hive: ctx.hive,
    log: ctx.log,
    ...(auth ? { auth } : {}),
    ...(bearer ? { bearer } : {}),
    ...(webhooks ? { webhooks } : {}),
    ...(opts.rateLimits ? { rateLimiter: new RateLimiter(opts.rateLimits) } : {}),
    ...(access ? { access } : {}),
    counts: { unauthorized: 0, forbidden: 0, throttled: 0, unrouted: 0, rateLimited: 0 },
    forbiddenLines: new LogThrottle(),
    unauthorizedLines: new LogThrottle(),
    clientAuth,
    logUsers: debug,
    ...(opts.interceptBefore ? { before: await connectInterceptor('InterceptBefore', opts.interceptBefore, proxies) } : {}),
    ...(opts.interceptAfter ? { after: await connectInterceptor('InterceptAfter', opts.interceptAfter, proxies) } : {}),
    finished: (res, hop) => {
      endRequestHop(hop, res);
      inFlight.end();
    },
  };
  const closeInterceptors = () => Promise.all([deps.before?.close(), deps.after?.close(), proxies?.close(), auth?.close()]);
  let accepted = 0;
  let refused = 0;
  let draining = false;

  // Requests pass through an actor rather than straight from the server callback: a crash while
  // handing one over is the supervisor's (restart, logged) and an undelivered request still gets its
  // 500/503 through its undelivered hook. The hop costs nothing measurable: handing requests to handleRequest
  // directly measured a CPU ratio of 1.01 (0.81-1.19, 8 interleaved runs of the gateway bench).
  const hopName = requestHopName(ctx.name);
  const worker = ctx.runtime.spawn<undefined, RequestMsg>(ctx.supervisor, {
    name: 'http',
    init: () => undefined,
    receive: (state, msg) => {
      // handleRequest never rejects: every failure becomes an error response; its end calls deps.finished
      void handleRequest(msg.req, msg.res, msg.subPath, deps, requestHop(msg.req, msg.res, ctx.name, hopName, msg.subPath));
      return state;
    },
  });

  // built once, not a new string per request
  const healthSlash = `${opts.healthPath}/`;
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    applyHeaders(res, opts.responseHeaders);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path === opts.healthPath || path === healthSlash) {
      req.resume();
      if (req.method !== 'GET') {
        send(res, 405, JSON.stringify({ status: 'method not allowed', allow: 'GET' }), 'application/json; charset=utf-8', { allow: 'GET' });
        return;
      }
      const health = healthOf({ hiveConnected: ctx.hive.isConnected(), draining, readiness: ctx.readiness });
      sendJson(res, health.code, health.body);
      return;
    }
    if (req.method === 'OPTIONS' && opts.devMode) {
      req.resume();
      send(res, 204, '', 'text/plain');
      return;
    }
    const base = opts.basePath;
    if (!(path.startsWith(base) || `${path}/` === base)) {
      req.resume();
      sendError(res, new NotFoundError(`path '${path}' is outside the base path '${base}'`));
      return;
    }
    if (draining || inFlight.size >= opts.maxInFlight || !ctx.readiness.ready) {
      refused++;
      req.resume();
      sendError(res, new UnavailableError(refusal(draining, ctx.readiness)), { 'retry-after': '1' });
      return;
    }
    accepted++;
    inFlight.begin();
    ctx.runtime.tell(worker, new RequestMsg(req, res, path.slice(base.length), inFlight));
  };

  // Node checks these timeouts only every connectionsCheckingInterval (30 s by default): check often
  // enough that a slow client is cut off close to ClientTimeout
  const httpOptions: ServerOptions = { ServerResponse: GatewayResponse, requestTimeout: opts.clientTimeoutMs, headersTimeout: Math.min(opts.clientTimeoutMs, 60_000), keepAliveTimeout: 5_000, connectionsCheckingInterval: Math.max(100, Math.min(1_000, opts.clientTimeoutMs / 4)) };
  // HTTPS on the same Port when TLS is configured: one listener, so no plain-HTTP door stays open beside it
  // a client that stalls in the handshake (a truncated record, a slow-loris on TLS) gets ClientTimeout too, not Node's 120 s
  const httpsServer = tls ? createHttpsServer({ ...httpOptions, ...tls.serverOptions(), handshakeTimeout: opts.clientTimeoutMs }, onRequest) : undefined;
  const server: Server | HttpsServer = httpsServer ?? createServer(httpOptions, onRequest);
  const handshakes = httpsServer ? countHandshakes(httpsServer, `gateway ${ctx.name}`, ctx.log, debug) : undefined;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // malformed requests (smuggling attempts, bad headers) are answered 400 by us, not dropped silently
    if (!socket.writable) return;
    const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const body = JSON.stringify({ Code: Number(status.slice(0, 3)), Message: `malformed request: ${err.code ?? err.message}`, Data: {}, List: null });
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
  try {
    await listenOn(server, { service: ctx.info.kind, instance: ctx.name, port: opts.port });
  } catch (e) {
    // the interceptor connections are already open: close them, or they would hold the process
    await closeInterceptors();
    throw e;
  }
  if (tls && httpsServer) tls.watch(httpsServer, ctx.log);
  const port = (server.address() as AddressInfo).port;
  const scheme = tls ? `HTTPS${clientAuth === 'none' ? '' : `, client certificates ${clientAuth === 'require' ? 'required' : 'requested'}`}` : 'HTTP';
  ctx.log.info(`gateway listening on port ${port} (${scheme})${opts.basePath === '/' ? '' : ` below ${opts.basePath}`} (${opts.strict ? 'strict' : 'interceptor'} mode${auth ? `, ${auth.userCount} user(s)` : ''}${bearer ? ', Bearer tokens' : ''}${opts.webhooks ? `, ${opts.webhooks.entries.length} webhook route(s)` : ''}${opts.access ? `, ${opts.access.entries.length} Access entr${opts.access.entries.length === 1 ? 'y' : 'ies'}` : ''})`);

  return {
    async drain(deadlineMs) {
      draining = true;
      server.close();
      server.closeIdleConnections();
      await inFlight.idle(deadlineMs);
      server.closeAllConnections();
      tls?.close();
      await closeInterceptors();
    },
    status: () => ({ port, inFlight: inFlight.size, accepted, refused, ...deps.counts, ...(auth ? { signInVerifications: auth.verifications } : {}), ...(bearer ? { jwksFetches: bearer.jwksFetches } : {}), strict: opts.strict, ...(handshakes ? { tls: true, ...handshakes.figures() } : {}) }),
  };
}

/**
 * Why the door refuses a request (503 with Retry-After). A node that is still starting refuses as its
 * health check answers 'starting': a channel whose service has not started (or, for a queue on
 * JetStream, has no holder on the hive yet) would otherwise answer 404, which no client retries.
 */
function refusal(draining: boolean, readiness: ReadinessView): string {
  if (draining) return 'the gateway is shutting down';
  if (!readiness.ready) return `the node is starting (${readiness.pending().join(', ')} not ready yet); retry shortly`;
  return 'too many requests in flight; retry shortly';
}

export const gatewayService = defineService(SERVICES.gateway, compilerFor('gateway', GATEWAY_PARAMS), start);
