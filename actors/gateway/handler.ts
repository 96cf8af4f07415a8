/**
 * One HTTP request through the gateway (README, The REST gateway): authentication, body, message (strict: from the
 * path and body; otherwise from the before interceptor), controls, then preview (Platform-Break),
 * hand-over (Platform-Procedure: Execution) or call, and the response (through the after
 * interceptor when not strict).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Code, SUCCESS_MESSAGE, isSuccessCode } from '../../protocol/codes.js';
import {
  BadInputError,
  ForbiddenError,
  OverloadedError,
  UnauthorizedError,
  UnavailableError,
  describeError,
} from '../../protocol/errors.js';
import { DEFAULT_COMMAND } from '../../protocol/commands.js';
import type { LogThrottle } from '../observe/log-throttle.js';
import type { Message, Result } from '../../protocol/message.js';
import { emptyMap, failure, validateMessage } from '../../protocol/message.js';
import { parseJson } from '../../protocol/wire.js';
import type { Logger } from '../observe/logger.js';
import type { HiveClient } from '../hive/client.js';
import type { Interceptor } from '../interceptor/connect.js';
import type { TlsClientAuth } from '../../config/tls.js';
import type { Authorizer } from './access.js';
import type { BasicAuth } from '../auth/authenticate.js';
import { authenticate } from '../auth/authenticate.js';
import type { BearerAuth } from '../auth/bearer.js';
import type { Webhook, Webhooks } from './webhooks.js';
import type { RateLimiter } from './rate-limits.js';
import type { RequestSchemas } from './schemas.js';
import { bodyIfArrived, bodyType, readBody } from './body.js';
import { addHeaderControls, addMessageControls, controlIsTrue, splitPrefixedControls } from './controls.js';
import type { GatewayOptions } from './options.js';
import type { GatewayResponse } from './respond.js';
import { send, sendError, sendJson, sendResult } from './respond.js';
import { TRACEPARENT } from '../observe/trace-context.js';
import { strictMessage } from './strict.js';
import type { Hop } from '../observe/tracing.js';
import { putMessageHop } from '../observe/trace-message.js';
import { runInScope as logIn } from '../observe/trace-scope.js';

export interface GatewayDeps {
  opts: GatewayOptions;
  hive: HiveClient;
  auth?: BasicAuth;
  /** Set with Webhooks: their routes are authenticated by signature (webhooks.ts). */
  webhooks?: Webhooks;
  /** Set with JWKS or JWTSecret (bearer.ts). */
  bearer?: BearerAuth;
  /** Set with Access; the gateway refuses to start with Access but no authentication. */
  access?: Authorizer;
  /** Requests answered 401, 403, 429 and 400 for Data its route's schema refused, and those no route matched (sent to OUTPUTCHANNEL): in the service status, so in /metrics and on the console's flow. */
  counts: {
    unauthorized: number;
    forbidden: number;
    throttled: number;
    unrouted: number;
    rateLimited: number;
    invalid: number;
  };
  /** Set with RateLimits (rate-limits.ts). */
  rateLimiter?: RateLimiter;
  /** Set with Schemas (schemas.ts). */
  schemas?: RequestSchemas;
  /** The OpenAPI document when it needs authentication (OpenAPIPath, openapi.ts): its path below the base path. */
  openApi?: { subPath: string; document: () => string };
  /** The 403 log lines: one per user and route a minute. */
  forbiddenLines: LogThrottle;
  /** The lines of refused Bearer tokens: one per client address a minute. */
  unauthorizedLines: LogThrottle;
  /** Client certificates asked for by the HTTPS listener ('none' over plain HTTP). */
  clientAuth: TlsClientAuth;
  /** LOGLEVEL is debug or trace: each request's user is logged (checked once, not per request). */
  logUsers: boolean;
  before?: Interceptor;
  after?: Interceptor;
  log: Logger;
  /** Called once per request handleRequest took, when it has been answered or failed (in its own finally: no promise more per request). */
  finished(res: ServerResponse, hop: Hop | undefined): void;
}

const PREVIEW_CONTROL = 'platform-break';
const PROCEDURE_HEADER = 'platform-procedure';
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** The request as the interceptors see it in options.http_request (credentials removed). */
function describeRequest(req: IncomingMessage): string {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headersDistinct))
    if (v && !SECRET_HEADERS.has(k)) headers[k] = v.length === 1 ? v[0]! : v;
  const q = (req.url ?? '').indexOf('?');
  return JSON.stringify({ method: req.method, url: req.url, path: q < 0 ? req.url : req.url!.slice(0, q), headers });
}

/** Applies controls and defaults to a message. Controls in the message itself pass the same allow list as headers (a webhook's: only those). */
function finishMessage(message: Message, req: IncomingMessage, opts: GatewayOptions, signedOnly = false): Message {
  // a webhook's signature covers its body, not its headers: controls come from the signed body alone
  const controls = emptyMap();
  addMessageControls(controls, message.Control, opts);
  if (!signedOnly) addHeaderControls(controls, req, opts);
  const data = splitPrefixedControls(message.Data, controls, opts.controlPrefix, opts);
  return {
    Class: message.Class || opts.defaultClass,
    Operation: message.Operation || opts.defaultOperation,
    Control: controls,
    Data: data,
  };
}

/** The procedure asked for by the Platform-Procedure header ('call' unless 'Execution'). */
function procedureOf(req: IncomingMessage): 'call' | 'execute' {
  const v = req.headers[PROCEDURE_HEADER];
  return typeof v === 'string' && v.trim().toLowerCase() === 'execution' ? 'execute' : 'call';
}

async function messageFromBefore(
  x: Exchange,
  body: Buffer,
  httpRequest: string,
): Promise<Message | { status: number; text: string }> {
  const { req, deps, deadline, hop } = x;
  const type = bodyType(req.headers['content-type']);
  const text = body.toString('utf8');
  const value = type === 'json' && text.trim() !== '' ? parseJson(text, 'request body') : text;
  const reply = await deps.before!.call({ type, value, options: { http_request: httpRequest } }, deadline, hop);
  if (!isSuccessCode(reply.status_code)) return { status: reply.status_code, text: reply.status };
  try {
    return validateMessage(reply.data, 'before interceptor data');
  } catch (e) {
    throw new BadInputError(`data not in protocol-message form is refused by the hive: ${describeError(e)}`);
  }
}

/** Sends a Result through the after interceptor and writes what it returns. */
async function respondThroughAfter(x: Exchange, result: Result, httpRequest: string): Promise<void> {
  const { res, deps, deadline, hop } = x;
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(res.getHeaders()))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v : String(v);
  const reply = await deps.after!.call(
    {
      type: 'json',
      value: result,
      options: { http_request: httpRequest, http_response_headers: JSON.stringify(headers) },
    },
    deadline,
    hop,
  );
  if (!isSuccessCode(reply.status_code)) {
    send(res, reply.status_code, reply.status, 'text/plain; charset=utf-8');
    return;
  }
  const wanted = reply.options.http_response_headers;
  if (wanted !== undefined) {
    const parsed = parseJson(wanted, 'after interceptor options.http_response_headers');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new BadInputError('after interceptor options.http_response_headers must be an object');
    for (const [name, v] of Object.entries(parsed as Record<string, unknown>)) {
      // the answer's traceparent is the request's own trace (respond.ts writes it with the head): the interceptor's is dropped
      if ((res as Partial<GatewayResponse>).traceparent !== undefined && name.toLowerCase() === TRACEPARENT) continue;
      const values = (Array.isArray(v) ? v : [v]).map(String);
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || values.some((x) => /[\r\n\0]/.test(x))) {
        throw new BadInputError(`after interceptor set an invalid response header '${name}'`);
      }
      res.setHeader(name, values.length === 1 ? values[0]! : values);
    }
  }
  if (typeof reply.data === 'string') send(res, reply.status_code, reply.data, 'text/plain; charset=utf-8');
  else send(res, reply.status_code, JSON.stringify(reply.data ?? null), 'application/json; charset=utf-8');
}

/** The controls that name where an entry goes (a queue's `channel`, a replay's edited channel, the dead-letter target). */
const REDIRECTING_CONTROLS = ['channel', 'deadletter_slap'] as const;

/**
 * Whether `user` may send the message: run its command on its route, and reach every channel a
 * redirecting control names — checked as a request to a route leading there (Routes), so a user refused
 * `cmd/*` cannot have a queue deliver to the exec service's channel. A channel no route leads to
 * (OUTPUTCHANNEL, or one of no route at all) is reached only by a user whom Access allows `*`. On a
 * refusal the 403 is answered and logged here (user, route, command or channel; nothing else).
 */
function authorized(x: Exchange, access: Authorizer, who: Who, message: Message): boolean {
  const { user, groups } = who;
  const command = message.Control.command?.[0];
  const decision =
    user === undefined
      ? {
          allowed: false as const,
          route: `${message.Class}/${message.Operation}`,
          command: command ?? DEFAULT_COMMAND,
          entry: undefined,
        }
      : access.decide(user, message.Class, message.Operation, command, groups);
  if (!decision.allowed) {
    const what =
      command === undefined
        ? `route '${decision.route.slice(0, 200)}'`
        : `command '${decision.command.slice(0, 100)}' on route '${decision.route.slice(0, 200)}'`;
    refuse(
      x,
      user,
      what,
      decision.entry
        ? `Access entry '${decision.entry.pattern}=${decision.entry.value.groups.join(',')}'`
        : 'no Access entry matches it',
    );
    return false;
  }
  for (const name of REDIRECTING_CONTROLS) {
    for (const channel of message.Control[name] ?? []) {
      if (reachable(access, user!, groups, channel, x.deps)) continue;
      refuse(x, user, `channel '${channel.slice(0, 200)}' (control '${name}')`, 'no route to it that the user may use');
      return false;
    }
  }
  return true;
}

/** Whether `user` may use some route whose channel is `channel`, or the `*` route. */
function reachable(
  access: Authorizer,
  user: string,
  groups: ReadonlySet<string> | undefined,
  channel: string,
  deps: GatewayDeps,
): boolean {
  const routes = deps.opts.routes.entries.filter((e) => e.value === channel);
  for (const r of routes) {
    const [cls, op] = r.pattern === '*' ? ['*', '*'] : (r.pattern.split('/') as [string, string | undefined]);
    if (access.decide(user, cls, op ?? '*', DEFAULT_COMMAND, groups).allowed) return true;
  }
  // OUTPUTCHANNEL, or a channel no route names: what only a user allowed every route (`*`) may reach
  return access.decide(user, '*', '*', DEFAULT_COMMAND, groups).allowed;
}

/** Answers 403 naming what was refused, and logs it once a minute per user and thing refused. */
function refuse(x: Exchange, user: string | undefined, what: string, why: string): void {
  const { deps, res, hop } = x;
  deps.counts.forbidden++;
  // one line per user and route a minute: a client repeating a refused request does not flood the log
  deps.forbiddenLines.note(`${user ?? ''}\n${what}`, (suppressed) =>
    logIn(hop, () =>
      deps.log.warn(
        `403: user '${user ?? ''}' may not use ${what} (${why})${suppressed > 0 ? `; ${suppressed} more refused since the last line` : ''}`,
      ),
    ),
  );
  // the answer names what was refused, not the groups that would have allowed it: the policy stays the operator's
  sendError(res, new ForbiddenError(`${what} is not allowed for user '${user ?? ''}'`));
}

/**
 * The challenge of a 401 (RFC 7235: one per scheme the gateway accepts). A Bearer token that was sent
 * and refused gets `error="invalid_token"` (RFC 6750 3.1), and a log line with the reason, never the
 * token; one line a minute per client address and reason, so a client retrying a dead token does not flood the log.
 */
function challenge(
  deps: GatewayDeps,
  req: IncomingMessage,
  bearerRefused: boolean,
  reason: string,
): Record<string, string> {
  const sent = /^Bearer\s/i.test(req.headers.authorization ?? '');
  if (bearerRefused && sent) {
    deps.unauthorizedLines.note(`${req.socket.remoteAddress ?? ''}\n${reason}`, (suppressed) =>
      deps.log.warn(
        `401: Bearer token from ${req.socket.remoteAddress ?? 'an unknown address'} refused: ${reason}${suppressed > 0 ? ` (${suppressed} more refused since the last line)` : ''}`,
      ),
    );
    return { 'www-authenticate': 'Bearer error="invalid_token"' };
  }
  const schemes = [
    ...(deps.auth ? ['Basic realm="hivenode", charset="UTF-8"'] : []),
    ...(deps.bearer ? ['Bearer realm="hivenode"'] : []),
  ];
  return schemes.length === 0 ? {} : { 'www-authenticate': schemes.join(', ') };
}

/** Handles one request below the base path (health checks are answered before this); never rejects, and calls deps.finished at its end. */
export async function handleRequest(
  req: IncomingMessage,
  res: ServerResponse,
  subPath: string,
  deps: GatewayDeps,
  hop?: Hop,
): Promise<void> {
  const { opts } = deps;
  const x: Exchange = { req, res, subPath, deps, deadline: Date.now() + opts.requestTimeoutMs, hop };
  try {
    // a gateway that authenticates nobody skips the call: no promise and no await per request on the hot path
    const docs = deps.openApi !== undefined && subPath === deps.openApi.subPath;
    const hook = docs ? undefined : deps.webhooks?.forPath(subPath);
    if (hook) {
      await handleWebhook(x, hook);
      return;
    }
    const outcome =
      deps.auth || deps.bearer || deps.clientAuth !== 'none'
        ? await authenticate(req, deps.auth, deps.clientAuth, deps.bearer)
        : undefined;
    if (outcome && !outcome.ok) {
      req.resume();
      if (outcome.retryAfter !== undefined) {
        // throttled (429), or no verification possible now (503): no challenge, a time to come back
        deps.counts.throttled++;
        sendError(
          res,
          outcome.unavailable ? new UnavailableError(outcome.reason) : new OverloadedError(outcome.reason),
          { 'retry-after': String(outcome.retryAfter) },
        );
        return;
      }
      deps.counts.unauthorized++;
      sendError(
        res,
        new UnauthorizedError(outcome.reason),
        challenge(deps, req, outcome.bearer === true, outcome.reason),
      );
      return;
    }
    if (docs) {
      req.resume();
      serveOpenApi(req, res, deps.openApi!.document);
      return;
    }
    const user = outcome?.ok ? outcome.user : undefined;
    const groups = outcome?.ok ? outcome.groups : undefined;
    if (outcome && deps.logUsers)
      logIn(hop, () =>
        deps.log.debug(
          `${req.method} ${opts.basePath}${subPath}: user ${user ?? ''} (${outcome.ok && outcome.via ? outcome.via : req.headers.authorization ? 'Basic' : 'client certificate'})`,
        ),
      );
    const body = bodyIfArrived(req, opts.maxBodySize) ?? (await readBody(req, opts.maxBodySize));
    await handleMessage(x, body, { user, groups });
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    // the gateway's lines about a request carry its trace
    if (typeof code !== 'number' || code >= 500)
      logIn(hop, () => deps.log.warn(`request ${req.method} ${subPath} failed: ${describeError(e)}`));
    sendError(res, e);
  } finally {
    deps.finished(res, hop);
  }
}

/** Answers a request for the OpenAPI document (GET only: 405 otherwise). */
export function serveOpenApi(req: IncomingMessage, res: ServerResponse, document: () => string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(
      res,
      405,
      JSON.stringify({
        Code: 405,
        Message: `the OpenAPI document is read with GET, not ${req.method}`,
        Data: {},
        List: null,
      }),
      'application/json; charset=utf-8',
      { allow: 'GET' },
    );
    return;
  }
  send(res, Code.Success, document(), 'application/json; charset=utf-8');
}

/**
 * Takes a token of the route's rate limit (after authorization, so refused requests spend none); its
 * RateLimit headers go on whatever the answer is. Without a token: 429 with Retry-After.
 */
function admitted(x: Exchange, limiter: RateLimiter, message: Message, user: string | undefined): boolean {
  const { req, res, deps } = x;
  const verdict = limiter.take(message.Class, message.Operation, user, req.socket.remoteAddress ?? '');
  if (!verdict) return true;
  if (verdict.allowed) {
    for (const name of Object.keys(verdict.headers)) res.setHeader(name, verdict.headers[name]!);
    return true;
  }
  deps.counts.rateLimited++;
  // the Result written directly, not through an error: a route at its limit answers most requests so,
  // and an Error's stack trace is most of what such an answer would cost
  sendResult(
    res,
    failure(
      Code.TooManyRequests,
      `the rate limit of route '${`${message.Class}/${message.Operation}`.slice(0, 200)}' is reached; retry in ${verdict.headers['retry-after']} s`,
    ),
    verdict.headers,
  );
  return false;
}

/**
 * Checks the message's Data against its route's schema (after authorization and the rate limit: an
 * unauthorized client learns nothing of the schema, and a flood of bad bodies spends its tokens).
 * Refused: 400 naming each failing field, the list also in Data's `errors`.
 */
function conforms(schemas: RequestSchemas, message: Message, res: ServerResponse, deps: GatewayDeps): boolean {
  const refusal = schemas.check(message.Class, message.Operation, message.Data);
  if (!refusal) return true;
  deps.counts.invalid++;
  const more = refusal.more > 0 ? `; ${refusal.more} more` : '';
  const route = `${message.Class}/${message.Operation}`.slice(0, 200);
  sendResult(res, {
    Code: Code.BadRequest,
    Message: `Data does not match the schema of route '${route}': ${refusal.problems.join('; ')}${more}`,
    Data: { errors: refusal.problems },
    List: null,
  });
  return false;
}

/** One request on its way through the handler: what every step of it reads (made once, in handleRequest). */
interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly subPath: string;
  readonly deps: GatewayDeps;
  readonly deadline: number;
  readonly hop: Hop | undefined;
}

/** What authentication established: the user and groups, or the webhook whose signature was checked. */
interface Who {
  user: string | undefined;
  groups: ReadonlySet<string> | undefined;
  hook?: Webhook;
}

/**
 * A request to a Webhooks route: its body read and its signature checked over the exact bytes before
 * anything reaches the hive (401 otherwise, logged once a minute per route and reason); its user is
 * `webhook:<route>` and Access does not apply (README, Signed webhooks).
 */
async function handleWebhook(x: Exchange, hook: Webhook): Promise<void> {
  const { req, res, subPath, deps, hop } = x;
  const body = await readBody(req, deps.opts.maxBodySize);
  const verdict = hook.verify(req, body);
  if (!verdict.ok) {
    deps.counts.unauthorized++;
    deps.unauthorizedLines.note(`webhook\n${hook.route}\n${verdict.reason}`, (suppressed) =>
      logIn(hop, () =>
        deps.log.warn(
          `401: webhook route '${hook.route}' from ${req.socket.remoteAddress ?? 'an unknown address'} refused: ${verdict.reason}${suppressed > 0 ? ` (${suppressed} more refused since the last line)` : ''}`,
        ),
      ),
    );
    sendError(res, new UnauthorizedError(`webhook signature refused: ${verdict.reason}`));
    return;
  }
  const user = `webhook:${hook.route}`;
  if (deps.logUsers)
    logIn(hop, () => deps.log.debug(`${req.method} ${deps.opts.basePath}${subPath}: user ${user} (webhook signature)`));
  await handleMessage(x, body, { user, groups: undefined, hook });
}

/** The request once its sender is known: the message, controls, authorization, then preview, hand-over or call. */
async function handleMessage(x: Exchange, body: Buffer, who: Who): Promise<void> {
  const { req, res, subPath, deps, deadline, hop } = x;
  const { opts } = deps;
  const { user } = who;
  const httpRequest = opts.strict ? '' : describeRequest(req);
  let message: Message;
  if (opts.strict) {
    if (req.method !== 'POST') {
      sendError(res, new BadInputError(`strict mode accepts POST only, not ${req.method}`), { allow: 'POST' });
      return;
    }
    message = strictMessage(subPath, body, { cls: opts.defaultClass, operation: opts.defaultOperation });
  } else {
    const before = await messageFromBefore(x, body, httpRequest);
    if (!('Data' in before)) {
      send(res, before.status, before.text, 'text/plain; charset=utf-8');
      return;
    }
    message = before;
  }
  message = finishMessage(message, req, opts, who.hook !== undefined);
  putMessageHop(message, hop);
  if (who.hook) {
    // the route the signature was checked for is the route used: an interceptor may not turn a webhook into another
    if (!deps.webhooks!.owns(who.hook, message.Class, message.Operation)) {
      refuse(
        x,
        user,
        `route '${`${message.Class}/${message.Operation}`.slice(0, 200)}'`,
        `webhook route '${who.hook.route}' may not reach another route`,
      );
      return;
    }
  } else if (deps.access && !authorized(x, deps.access, who, message)) return;
  if (deps.rateLimiter && !admitted(x, deps.rateLimiter, message, user)) return;
  if (deps.schemas && !conforms(deps.schemas, message, res, deps)) return;
  if (controlIsTrue(message.Control, PREVIEW_CONTROL)) {
    sendJson(res, Code.Success, message);
    return;
  }
  let channel = opts.routes.channelFor(message.Class, message.Operation, '');
  if (channel === '') {
    // counted apart: the console draws OUTPUTCHANNEL's arrow with this rate, not beside a route to the same channel
    deps.counts.unrouted++;
    channel = opts.outputChannel;
  }
  const remaining = Math.max(1, deadline - Date.now());
  if (procedureOf(req) === 'execute') {
    const ack = await deps.hive.execute(channel, message, remaining);
    // a service that answers the hand-over itself passes its Data on (a flow: the run's key); a bare acknowledgement has none
    sendResult(
      res,
      isSuccessCode(ack.Code)
        ? { Code: Code.Success, Message: SUCCESS_MESSAGE, Data: ack.Data ?? emptyMap(), List: null }
        : ack,
    );
    return;
  }
  const result = await deps.hive.call(channel, message, remaining);
  if (opts.strict) sendResult(res, result);
  else await respondThroughAfter(x, result, httpRequest);
}
