/**
 * The interceptor kit (`hivenode interceptor <module> -Port=N`): serves a mapping function
 * `(type, value, options) => {data, status, status_code, options}` over HTTP in the wire format the
 * gateway and the HTTP client speak, on our lean HTTP/1.1 server (lean-server.ts: node:http's streams
 * were half the CPU of an interceptor round trip). A function that throws is answered 500
 * with its message, and a malformed request 400, so a mapper bug never takes the server down.
 */
import type { AddressInfo, Server } from 'node:net';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { ConfigError, describeError } from '../../protocol/errors.js';
import { parseJson } from '../../protocol/wire.js';
import { isThenable } from '../../supervisors/thenable.js';
import { listenOn } from '../net/listen.js';
import type { Respond } from './lean-server.js';
import { LeanServer } from './lean-server.js';
import type { InterceptorReply } from './wire.js';
import { validateReply, validateRequest } from './wire.js';

/** A mapping function as users write it. */
export type InterceptorFunction = (type: string, value: unknown, options: Record<string, string>) => unknown;

const MAX_REQUEST = 16 * 1024 * 1024;

/** Loads a mapping function: the module's default export, or its export named `intercept`. */
export async function loadInterceptor(modulePath: string): Promise<InterceptorFunction> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(modulePath)).href)) as Record<string, unknown>;
  } catch (e) {
    throw new ConfigError(`cannot load interceptor module '${modulePath}': ${describeError(e)}`);
  }
  const fn = typeof mod.default === 'function' ? mod.default : mod.intercept;
  if (typeof fn !== 'function')
    throw new ConfigError(`interceptor module '${modulePath}' must export a function (default or 'intercept')`);
  return fn as InterceptorFunction;
}

function reply(res: Respond, status: number, body: InterceptorReply): void {
  res(status, JSON.stringify(body));
}

/** The answer to a request that cannot be read (400) or is too large (413), in the wire shape. */
function refusal(status: number, problem: string): string {
  const text = status === 413 ? 'request too large' : `malformed request: ${problem}`;
  return JSON.stringify({ data: null, status: text, status_code: status, options: {} });
}

export interface RunningInterceptor {
  port: number;
  server: Server;
  close(): Promise<void>;
}

export async function serveInterceptor(
  fn: InterceptorFunction,
  port: number,
  host = '127.0.0.1',
): Promise<RunningInterceptor> {
  const lean = new LeanServer((head, body, respond) => answer(fn, head.method, body, respond), refusal, MAX_REQUEST);
  await listenOn(lean.net, { service: 'interceptor', port, host });
  return {
    port: (lean.net.address() as AddressInfo).port,
    server: lean.net,
    close: () => lean.close(),
  };
}

/**
 * Answers one request whose body is in. A function that answers synchronously (the usual mapper) is
 * replied to in the same turn: no async wrapper, no await and no promise per request, which were a
 * tenth of the kit's JavaScript time per call at 32 in flight; a thenable is awaited as before.
 */
function answer(fn: InterceptorFunction, method: string, body: Buffer, res: Respond): void {
  if (method !== 'POST') return reply(res, 405, { data: null, status: 'POST only', status_code: 405, options: {} });
  let out: unknown;
  try {
    const request = validateRequest(parseJson(body.toString('utf8'), 'interceptor request'));
    out = fn(request.type, request.value, request.options);
  } catch (e) {
    return failed(res, e);
  }
  if (!isThenable(out)) return mapped(res, out);
  // through Promise.resolve, as await did: a thenable whose then throws is a failure, not a crash
  Promise.resolve(out).then(
    (v) => mapped(res, v),
    (e: unknown) => failed(res, e),
  );
}

/** The function's result, checked and encoded, as the 200 reply; one it cannot be (malformed, or not JSON) fails. */
function mapped(res: Respond, out: unknown): void {
  try {
    reply(res, 200, validateReply(out, 'mapping function result'));
  } catch (e) {
    failed(res, e);
  }
}

/** An error with code 400 (a malformed request or result) is answered 400, anything else the function threw 500. */
function failed(res: Respond, e: unknown): void {
  const code = (e as { code?: unknown } | null)?.code === 400 ? 400 : 500;
  reply(res, code, { data: null, status: describeError(e), status_code: code, options: {} });
}
