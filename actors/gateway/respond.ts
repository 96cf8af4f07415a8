/**
 * Writing HTTP responses: a Result's Code is the HTTP status and the body is the Result JSON
 * (docs/ARCHITECTURE.md, Result shapes); configured response headers go on every response.
 */
import type { ServerResponse } from 'node:http';
import { Code } from '../../protocol/codes.js';
import type { Result } from '../../protocol/message.js';
import { resultFromError } from '../../protocol/message.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A status the HTTP layer accepts: Codes outside 100-599 are reported as 500. */
export function httpStatus(code: number): number {
  return Number.isInteger(code) && code >= 100 && code <= 599 ? code : Code.ServiceError;
}

export function applyHeaders(res: ServerResponse, headers: ReadonlyArray<readonly [string, string]>): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}

/** Sends a body with a status unless the response already went out. */
export function send(res: ServerResponse, status: number, body: string | Buffer, contentType: string, extra: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.statusCode = httpStatus(status);
  if (!res.hasHeader('content-type')) res.setHeader('content-type', contentType);
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

export function sendResult(res: ServerResponse, result: Result, extra: Record<string, string> = {}): void {
  send(res, result.Code, JSON.stringify(result), JSON_TYPE, extra);
}

export function sendError(res: ServerResponse, error: unknown, extra: Record<string, string> = {}): void {
  sendResult(res, resultFromError(error), extra);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), JSON_TYPE);
}
