/**
 * Writing HTTP responses: a Result's Code is the HTTP status and the body is the Result JSON
 * (docs/ARCHITECTURE.md, Result shapes); configured response headers go on every response.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Code } from '../../protocol/codes.js';
import type { Result } from '../../protocol/message.js';
import { resultFromError } from '../../protocol/message.js';
import { TRACEPARENT } from '../observe/trace-context.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The gateway's responses (its servers make theirs of this class): the traceparent its answer
 * carries is kept here until the head is put together, and written as the head's first line after
 * the status line, whatever writes the head (send, or Node's implicit head of a bare end()). A
 * header given to setHeader or writeHead is checked on every response: its name against the token
 * pattern and lower-cased, its value against the header-character pattern, then concatenated; for a
 * value of 55 characters that was ~2,200 instructions a request (callgrind,
 * bench/gateway-tracing-instructions.ts), half of what carrying a trace cost with nothing exported.
 * This value needs no check: it is always a version-00 traceparent this process made or parsed
 * (trace-context.ts: hex digits and '-', nothing else), never a client's text as it came.
 *
 * The head is built by `_storeHeader(firstLine, headers)`, Node's own (OutgoingMessage) since its
 * first versions and the one place both writeHead and the implicit head go through. Should a Node
 * build not call it so, the probe below finds out at load and the header goes with the others
 * through writeHead, checked.
 */
export class GatewayResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** The `traceparent` response header of the request's hop (a version-00 traceparent, see above); undefined without one. */
  traceparent: string | undefined = undefined;
}

interface HeadBuilder {
  _storeHeader(firstLine: string, headers: unknown): void;
  _header: string | null;
}

const PROBE_TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** Adds the traceparent line to the head as Node builds it; false (nothing changed) when this Node builds its heads otherwise. */
function headCarriesTraceparent(): boolean {
  const proto = ServerResponse.prototype as unknown as Partial<HeadBuilder>;
  const store = proto._storeHeader;
  if (typeof store !== 'function') return false;
  const withTrace = function (this: GatewayResponse & HeadBuilder, firstLine: string, headers: unknown): void {
    const traceparent = this.traceparent;
    store.call(this, traceparent === undefined ? firstLine : `${firstLine}${TRACEPARENT}: ${traceparent}\r\n`, headers);
  };
  Object.defineProperty(GatewayResponse.prototype, '_storeHeader', {
    value: withTrace,
    writable: true,
    configurable: true,
  });
  // the probe: a response on no socket, its head written and read back
  const probe = new GatewayResponse(new IncomingMessage(new Socket()));
  probe.traceparent = PROBE_TRACEPARENT;
  probe.writeHead(200, ['content-length', '0']);
  const head = (probe as unknown as HeadBuilder)._header;
  if (
    typeof head === 'string' &&
    head.startsWith(`HTTP/1.1 200 OK\r\n${TRACEPARENT}: ${PROBE_TRACEPARENT}\r\n`) &&
    head.endsWith('\r\n\r\n')
  )
    return true;
  delete (GatewayResponse.prototype as unknown as Partial<HeadBuilder>)._storeHeader;
  return false;
}

/** Whether the head carries a response's traceparent by itself (else send() gives it to writeHead). */
export const HEAD_CARRIES_TRACEPARENT = headCarriesTraceparent();

/** A status the HTTP layer accepts: Codes outside 100-599 are reported as 500. */
function httpStatus(code: number): number {
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
export function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  contentType: string,
  extra?: Record<string, string>,
): void {
  if (res.headersSent || res.destroyed) return;
  const head: string[] = res.hasHeader('content-type') ? [] : ['content-type', contentType];
  if (extra !== undefined) for (const name of Object.keys(extra)) head.push(name, extra[name]!);
  head.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
  if (!HEAD_CARRIES_TRACEPARENT) {
    const traceparent = (res as Partial<GatewayResponse>).traceparent;
    if (traceparent !== undefined) head.push(TRACEPARENT, traceparent);
  }
  res.writeHead(httpStatus(status), head);
  res.end(body);
}

/**
 * A 503 is always temporary here (hive disconnected, a service draining, a queue changing hands):
 * it carries Retry-After, so a client knows to send again, and when, unless the caller gave its own.
 */
export function sendResult(res: ServerResponse, result: Result, extra?: Record<string, string>): void {
  const headers =
    result.Code === Code.Unavailable && extra?.['retry-after'] === undefined
      ? { ...extra, 'retry-after': RETRY_AFTER_SECONDS }
      : extra;
  send(res, result.Code, JSON.stringify(result), JSON_TYPE, headers);
}

/** The Retry-After of a 503 without one of its own. */
const RETRY_AFTER_SECONDS = '1';

export function sendError(res: ServerResponse, error: unknown, extra?: Record<string, string>): void {
  sendResult(res, resultFromError(error), extra);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), JSON_TYPE);
}
