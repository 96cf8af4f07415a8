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
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST') return reply(res, 405, { data: null, status: 'POST only', status_code: 405, options: {} });
        if (size > MAX_REQUEST) return reply(res, 413, { data: null, status: 'request too large', status_code: 413, options: {} });
        try {
          const request = validateRequest(parseJson(Buffer.concat(chunks).toString('utf8'), 'interceptor request'));
          const out = await fn(request.type, request.value, request.options);
          reply(res, 200, validateReply(out, 'mapping function result'));
        } catch (e) {
          const code = (e as { code?: unknown }).code === 400 ? 400 : 500;
          reply(res, code, { data: null, status: describeError(e), status_code: code, options: {} });
        }
      })();
    });
  });
  await listenOn(server, { service: 'interceptor', port, host });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
