/**
 * Writing HTTP responses: a Result's Code is the HTTP status and the body is the Result JSON
 * (docs/ARCHITECTURE.md, Result shapes); configured response headers go on every response.
 */
import type { IncomingMessage } from 'node:http';
import { ServerResponse } from 'node:http';
import { Code } from '../../protocol/codes.js';
import type { Result } from '../../protocol/message.js';
import { resultFromError } from '../../protocol/message.js';
import { TRACEPARENT } from '../shared/trace-context.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The gateway's responses (its servers make theirs of this class): the traceparent its answer
 * carries is kept here until the head goes out with send(), not set as a header when the request
 * comes in. setHeader stores a header in a map that the head is later built from, and checks and
 * lower-cases its name on the way; a head given whole to writeHead is checked once and written
 * straight (callgrind: ~700 instructions a header, on a request of ~150,000).
 */
export class GatewayResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** The `traceparent` response header of the request's hop; undefined without one. */
  traceparent: string | undefined = undefined;
}

/** A status the HTTP layer accepts: Codes outside 100-599 are reported as 500. */
export function httpStatus(code: number): number {
  return Number.isInteger(code) && code >= 100 && code <= 599 ? code : Code.ServiceError;
}

export function applyHeaders(res: ServerResponse, headers: ReadonlyArray<readonly [string, string]>): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}

/**
 * Sends a body with a status unless the response already went out: the head in one writeHead (a
 * flat list of names and values), after any header set before (configured response headers), which
 * writeHead then merges; a content-type set before is kept.
 */
export function send(res: ServerResponse, status: number, body: string | Buffer, contentType: string, extra?: Record<string, string>): void {
  if (res.headersSent || res.destroyed) return;
  const head: string[] = res.hasHeader('content-type') ? [] : ['content-type', contentType];
  if (extra !== undefined) for (const name of Object.keys(extra)) head.push(name, extra[name]!);
  head.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
  const traceparent = (res as Partial<GatewayResponse>).traceparent;
  if (traceparent !== undefined) head.push(TRACEPARENT, traceparent);
  res.writeHead(httpStatus(status), head);
  res.end(body);
}

export function sendResult(res: ServerResponse, result: Result, extra?: Record<string, string>): void {
  send(res, result.Code, JSON.stringify(result), JSON_TYPE, extra);
}

export function sendError(res: ServerResponse, error: unknown, extra?: Record<string, string>): void {
  sendResult(res, resultFromError(error), extra);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), JSON_TYPE);
}
