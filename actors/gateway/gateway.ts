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
import { NotFoundError, UnavailableError, describeError } from '../../protocol/errors.js';
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
import { BasicAuth } from '../auth/authenticate.js';
import { openBearer } from '../auth/bearer.js';
import { Webhooks } from './webhooks.js';
import { RateLimiter } from './rate-limits.js';
import { RATE_BUCKET, RateSync } from './rate-sync.js';
import { RequestSchemas } from './schemas.js';
import { Cors } from './cors.js';
import { openApiDocument } from './openapi.js';
import type { GatewayDeps } from './handler.js';
import { handleRequest, serveOpenApi } from './handler.js';
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

type GatewayConfig = ConfigOf<typeof GATEWAY_PARAMS>;

/** The gateway's start-time checks without a start: its options compiled, its TLS files read and matched. */
function check(config: GatewayConfig, name: string): void {
  compileGatewayOptions(config);
  ServerTls.fromConfig(config, `gateway ${name}`);
}

/**
 * A gateway's listening socket as its successor of a reload may take it over (docs/ARCHITECTURE.md,
 * Reloading a node): when Port and the TLS parameters are the same, the new gateway swaps its own
 * request handler in, so no connection is refused and keep-alive connections carry on; the old one
 * then only waits for the requests it had accepted.
 */
export class GatewayListener {
  /** Set once a successor took the socket over: the old gateway's drain must not close it. */
  adopted = false;
  readonly server: Server | HttpsServer;
  /** Port and TLS settings as configured: a successor takes the socket over only when its key is the same. */
  readonly key: string;
  readonly port: number;
  readonly tls: ServerTls | undefined;
  readonly handshakes: ReturnType<typeof countHandshakes> | undefined;
  readonly onRequest: (req: IncomingMessage, res: ServerResponse) => void;

  constructor(parts: Omit<GatewayListener, 'adopted'>) {
    ({
      server: this.server,
      key: this.key,
      port: this.port,
      tls: this.tls,
      handshakes: this.handshakes,
      onRequest: this.onRequest,
    } = parts);
  }
}

const listenerKey = (c: GatewayConfig): string =>
  JSON.stringify([c.Port, c.TLSCert, c.TLSKey, c.TLSCA, c.TLSClientAuth]);

async function start(ctx: ServiceContext<GatewayConfig>): Promise<RunningService> {
  const opts = compileGatewayOptions(ctx.config);
  const previous = ctx.predecessor?.handOver;
  const inherited =
    previous instanceof GatewayListener && !previous.adopted && previous.key === listenerKey(ctx.config)
      ? previous
      : undefined;
  const tls = inherited ? inherited.tls : ServerTls.fromConfig(ctx.config, `gateway ${ctx.name}`, ctx.log);
  const clientAuth = tls?.clientAuth ?? 'none';
  // read once: a debug line built per request or handshake costs its formatting even when not written
  const debug = /^(debug|trace)$/i.test(ctx.config.LOGLEVEL);
  const auth = opts.usersFile
    ? new BasicAuth(opts.usersFile, { onReloadError: (m) => ctx.log.error(m), onThrottled: (m) => ctx.log.warn(m) })
    : undefined;
  const access = opts.access
    ? openAccess(
        opts.access,
        opts.groupsFile,
        ctx.log,
        undefined,
        opts.bearer?.groupsClaim !== undefined && opts.bearer.groupsClaim !== '',
      )
    : undefined;
  const bearer = opts.bearer ? await openBearer(opts.bearer, (m) => ctx.log.error(m)) : undefined;
  const webhooks = opts.webhooks
    ? new Webhooks(opts.webhooks, opts.webhookToleranceMs, (m) => ctx.log.error(m))
    : undefined;
  if (!auth && !bearer && clientAuth === 'none')
    ctx.log.warn('Users is not set: the gateway accepts requests without authentication');
  if (!auth && !bearer && clientAuth === 'request')
    ctx.log.warn('Users is not set: requests without a client certificate are accepted without authentication');
  if (opts.devMode)
    ctx.log.warn(
      `DevMode is on: every control passes and CORS is wide open${opts.cors ? ' (Cors is not applied)' : ''}; do not use this in production`,
    );
  // compiled before anything is started, so a schema that does not compile leaves nothing running
  const schemas = opts.schemas ? new RequestSchemas(opts.schemas) : undefined;
  const rateLimiter = opts.rateLimits ? new RateLimiter(opts.rateLimits, ctx.hive.kind === 'nats') : undefined;
  const rateSync = rateLimiter ? await shareRateLimits(ctx, rateLimiter) : undefined;
  // interceptors are called direct even when the environment names a proxy, unless InterceptProxy
  const proxies = opts.interceptProxy
    ? proxyRoutes(
        proxySettings('', process.env, (line) => ctx.log.warn(line)),
        { connections: 64 },
      )
    : undefined;
  const inFlight = new InFlight();
  const deps: GatewayDeps = {
    opts,
    hive: ctx.hive,
    log: ctx.log,
    ...(auth ? { auth } : {}),
    ...(bearer ? { bearer } : {}),
    ...(webhooks ? { webhooks } : {}),
    ...(rateLimiter ? { rateLimiter } : {}),
    ...(schemas ? { schemas } : {}),
    ...(access ? { access } : {}),
    counts: { unauthorized: 0, forbidden: 0, throttled: 0, unrouted: 0, rateLimited: 0, invalid: 0 },
    forbiddenLines: new LogThrottle(),
    unauthorizedLines: new LogThrottle(),
    clientAuth,
    logUsers: debug,
    ...(opts.interceptBefore
      ? { before: await connectInterceptor('InterceptBefore', opts.interceptBefore, proxies) }
      : {}),
    ...(opts.interceptAfter ? { after: await connectInterceptor('InterceptAfter', opts.interceptAfter, proxies) } : {}),
    finished: (res, hop) => {
      endRequestHop(hop, res);
      inFlight.end();
    },
  };
  // DevMode keeps its meaning: every origin on every route, so the Cors entries would only narrow what it opens
  const cors =
    opts.cors && !opts.devMode
      ? new Cors(
          opts.cors,
          { strict: opts.strict, controlHeaders: opts.allowed, anyHeader: opts.allowAll },
          () => deps.counts.forbidden++,
        )
      : undefined;
  // built on first asking, and kept once every service of the node has started (each declares its requests when it starts)
  let openApiText: string | undefined;
  const openApi = (): string => {
    if (openApiText !== undefined) return openApiText;
    const text = JSON.stringify(
      openApiDocument({
        opts,
        name: ctx.name,
        release: ctx.info.release,
        basic: auth !== undefined,
        bearer: bearer !== undefined,
        clientAuth,
        schemas,
        siblings: ctx.siblings?.() ?? [],
      }),
    );
    if (ctx.readiness.ready) openApiText = text;
    return text;
  };
  if (opts.openApiPath !== '' && !opts.openApiPublic)
    deps.openApi = { subPath: opts.openApiPath.slice(opts.basePath.length), document: openApi };
  if (ctx.explicit.has('OpenAPIPath') && ctx.config.OpenAPIPath !== '' && !opts.strict)
    ctx.log.warn(
      'OpenAPIPath is not served in interceptor mode (Strict false): the interceptors make the messages, so the gateway cannot describe its routes',
    );
  const closeInterceptors = () => {
    rateSync?.stop();
    return Promise.all([deps.before?.close(), deps.after?.close(), proxies?.close(), auth?.close()]);
  };
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
      void handleRequest(
        msg.req,
        msg.res,
        msg.subPath,
        deps,
        requestHop(msg.req, msg.res, ctx.name, hopName, msg.subPath),
      );
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
        send(
          res,
          405,
          JSON.stringify({ status: 'method not allowed', allow: 'GET' }),
          'application/json; charset=utf-8',
          { allow: 'GET' },
        );
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
    const subPath = path.slice(base.length);
    // CORS before admission: a browser's preflight carries no credentials, and a page must be able to read a 503 too
    if (cors && ((req.method === 'OPTIONS' && cors.preflight(req, res, subPath)) || !cors.admit(req, res, subPath)))
      return;
    if (opts.openApiPublic && path === opts.openApiPath) {
      req.resume();
      serveOpenApi(req, res, openApi);
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
    ctx.runtime.tell(worker, new RequestMsg(req, res, subPath, inFlight));
  };

  // Node checks these timeouts only every connectionsCheckingInterval (30 s by default): check often
  // enough that a slow client is cut off close to ClientTimeout
  const httpOptions: ServerOptions = {
    ServerResponse: GatewayResponse,
    requestTimeout: opts.clientTimeoutMs,
    headersTimeout: Math.min(opts.clientTimeoutMs, 60_000),
    keepAliveTimeout: 5_000,
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, opts.clientTimeoutMs / 4)),
  };
  let server: Server | HttpsServer;
  let handshakes: ReturnType<typeof countHandshakes> | undefined;
  let port: number;
  if (inherited) {
    // a reload with the same Port and TLS: the predecessor's socket, its handler swapped for ours in
    // one synchronous step, so no request finds the port closed or without a handler
    server = inherited.server;
    handshakes = inherited.handshakes;
    port = inherited.port;
    server.requestTimeout = opts.clientTimeoutMs;
    server.headersTimeout = Math.min(opts.clientTimeoutMs, 60_000);
    server.removeListener('request', inherited.onRequest);
    server.on('request', onRequest);
    inherited.adopted = true;
  } else {
    // HTTPS on the same Port when TLS is configured: one listener, so no plain-HTTP door stays open beside it
    // a client that stalls in the handshake (a truncated record, a slow-loris on TLS) gets ClientTimeout too, not Node's 120 s
    const httpsServer = tls
      ? createHttpsServer({ ...httpOptions, ...tls.serverOptions(), handshakeTimeout: opts.clientTimeoutMs }, onRequest)
      : undefined;
    server = httpsServer ?? createServer(httpOptions, onRequest);
    handshakes = httpsServer ? countHandshakes(httpsServer, `gateway ${ctx.name}`, ctx.log, debug) : undefined;
    server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      // malformed requests (smuggling attempts, bad headers) are answered 400 by us, not dropped silently
      if (!socket.writable) return;
      const status =
        err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? '408 Request Timeout'
          : err.code === 'HPE_HEADER_OVERFLOW'
            ? '431 Request Header Fields Too Large'
            : '400 Bad Request';
      const body = JSON.stringify({
        Code: Number(status.slice(0, 3)),
        Message: `malformed request: ${err.code ?? err.message}`,
        Data: {},
        List: null,
      });
      socket.end(
        `HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    try {
      await listenOn(server, { service: ctx.info.kind, instance: ctx.name, port: opts.port });
    } catch (e) {
      // the interceptor connections are already open: close them, or they would hold the process
      await closeInterceptors();
      throw e;
    }
    if (tls && httpsServer) tls.watch(httpsServer, ctx.log);
    port = (server.address() as AddressInfo).port;
  }
  const handOver = new GatewayListener({ server, key: listenerKey(ctx.config), port, tls, handshakes, onRequest });
  const scheme = tls
    ? `HTTPS${clientAuth === 'none' ? '' : `, client certificates ${clientAuth === 'require' ? 'required' : 'requested'}`}`
    : 'HTTP';
  ctx.log.info(
    `gateway ${inherited ? 'took over the listener' : 'listening'} on port ${port} (${scheme})${opts.basePath === '/' ? '' : ` below ${opts.basePath}`} (${opts.strict ? 'strict' : 'interceptor'} mode${auth ? `, ${auth.userCount} user(s)` : ''}${bearer ? ', Bearer tokens' : ''}${opts.webhooks ? `, ${opts.webhooks.entries.length} webhook route(s)` : ''}${opts.schemas ? `, ${opts.schemas.entries.length} schema(s)` : ''}${opts.access ? `, ${opts.access.entries.length} Access entr${opts.access.entries.length === 1 ? 'y' : 'ies'}` : ''})`,
  );

  return {
    handOver,
    giveBack() {
      if (!inherited || handOver.adopted) return;
      server.removeListener('request', onRequest);
      server.on('request', inherited.onRequest);
      inherited.adopted = false;
      handOver.adopted = true;
    },
    async drain(deadlineMs) {
      if (handOver.adopted) {
        // a successor serves the socket now: only what this gateway accepted is left to finish
        await inFlight.idle(deadlineMs);
        await closeInterceptors();
        return;
      }
      draining = true;
      server.close();
      server.closeIdleConnections();
      await inFlight.idle(deadlineMs);
      server.closeAllConnections();
      tls?.close();
      await closeInterceptors();
    },
    status: () => ({
      port,
      inFlight: inFlight.size,
      accepted,
      refused,
      ...deps.counts,
      ...(auth ? { signInVerifications: auth.verifications } : {}),
      ...(bearer ? { jwksFetches: bearer.jwksFetches } : {}),
      ...(rateSync ? { rateSyncs: rateSync.rounds } : {}),
      strict: opts.strict,
      ...(handshakes ? { tls: true, ...handshakes.figures() } : {}),
    }),
  };
}

/**
 * On a NATS hive, the gateways of one NAME share their rate limits (rate-sync.ts) through a JetStream
 * KV bucket; a hive that refuses the bucket (no JetStream) leaves each gateway counting on its own,
 * said at start. Undefined on the embedded hive (one process: nothing to share).
 */
async function shareRateLimits(
  ctx: ServiceContext<ConfigOf<typeof GATEWAY_PARAMS>>,
  limiter: RateLimiter,
): Promise<RateSync | undefined> {
  const opening = ctx.hive.sharedBucket(RATE_BUCKET);
  if (!opening) return undefined;
  try {
    const sync = new RateSync(limiter, await opening, ctx.name, ctx.log);
    await sync.round();
    sync.start();
    return sync;
  } catch (e) {
    ctx.log.warn(
      `RateLimits: the JetStream KV bucket '${RATE_BUCKET}' the gateways share their limits through was refused (${describeError(e)}): each gateway counts on its own, so the hive admits the limit once per gateway; enable JetStream in the nats-server configuration`,
    );
    return undefined;
  }
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

export const gatewayService = defineService(SERVICES.gateway, compilerFor('gateway', GATEWAY_PARAMS), start, check);
