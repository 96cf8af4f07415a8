/**
 * The interceptor kit (`hivenode interceptor <module> -Port=N`): serves a mapping function
 * `(type, value, options) => {data, status, status_code, options}` over HTTP in the wire format the
 * gateway and the HTTP client speak. A function that throws is answered 500 with its message, and
 * a malformed request 400, so a mapper bug never takes the server down.
 */
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { ConfigError, describeError } from '../../protocol/errors.js';
import { parseJson } from '../../protocol/wire.js';
import { isThenable } from '../../supervisors/thenable.js';
import { listenOn } from '../shared/listen.js';
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
  if (typeof fn !== 'function') throw new ConfigError(`interceptor module '${modulePath}' must export a function (default or 'intercept')`);
  return fn as InterceptorFunction;
}

function reply(res: ServerResponse, status: number, body: InterceptorReply): void {
  // encoded once (Buffer.byteLength and then end(text) read the text twice); the headers as a flat
  // list, which node:http writes without building a headers object per reply
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, ['content-type', 'application/json; charset=utf-8', 'content-length', String(bytes.length)]);
  res.end(bytes);
}

export interface RunningInterceptor {
  port: number;
  server: Server;
  close(): Promise<void>;
}

export async function serveInterceptor(fn: InterceptorFunction, port: number, host = '127.0.0.1'): Promise<RunningInterceptor> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_REQUEST) chunks.push(c);
    });
    req.on('end', () => answer(fn, req.method, size, chunks, res));
  });
  await listenOn(server, { service: 'interceptor', port, host });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * Answers one request whose body is in. A function that answers synchronously (the usual mapper) is
 * replied to in the same turn: no async wrapper, no await and no promise per request, which were a
 * tenth of the kit's JavaScript time per call at 32 in flight; a thenable is awaited as before.
 */
function answer(fn: InterceptorFunction, method: string | undefined, size: number, chunks: Buffer[], res: ServerResponse): void {
  if (method !== 'POST') return reply(res, 405, { data: null, status: 'POST only', status_code: 405, options: {} });
  if (size > MAX_REQUEST) return reply(res, 413, { data: null, status: 'request too large', status_code: 413, options: {} });
  let out: unknown;
  try {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
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
function mapped(res: ServerResponse, out: unknown): void {
  try {
    reply(res, 200, validateReply(out, 'mapping function result'));
  } catch (e) {
    failed(res, e);
  }
}

/** An error with code 400 (a malformed request or result) is answered 400, anything else the function threw 500. */
function failed(res: ServerResponse, e: unknown): void {
  const code = (e as { code?: unknown } | null)?.code === 400 ? 400 : 500;
  reply(res, code, { data: null, status: describeError(e), status_code: code, options: {} });
}
