/**
 * Reading a request body with a size cap: a declared Content-Length over the cap is refused before
 * reading, and a body that grows past it while streaming is cut off; both are Code 413.
 */
import type { IncomingMessage } from 'node:http';
import { TooLargeError } from '../../protocol/errors.js';

/**
 * The body of a request that has arrived whole, or undefined when it has not (or is over the cap,
 * which readBody then refuses). Node parses the body bytes that came with the head in the same read
 * as the head, before the gateway's actor takes the request: a small body is then already buffered
 * — all of its Content-Length, though the message's end may not have been parsed yet — and taking it
 * costs no promise, no listeners and no events (readBody's path, for a body still on its way or sent
 * in chunks).
 */
export function bodyIfArrived(req: IncomingMessage, maxBytes: number): Buffer | undefined {
  const length = req.readableLength;
  if (length > maxBytes || req.readableFlowing !== null || req.readableEncoding !== null) return undefined;
  if (!req.complete) {
    // the parser hands over at most Content-Length bytes of body: that many buffered is the whole body
    const declared = req.headers['content-length'];
    if (declared === undefined || Number(declared) !== length) return undefined;
  }
  if (length === 0) return EMPTY;
  return (req.read() as Buffer | null) ?? undefined;
}

const EMPTY = Buffer.alloc(0);

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.reject(
      new TooLargeError(`request body of ${declared} bytes is over the limit of ${maxBytes} bytes`),
    );
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxBytes) {
        failed = true;
        chunks.length = 0;
        req.resume();
        reject(new TooLargeError(`request body is over the limit of ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      if (!failed) {
        failed = true;
        reject(e);
      }
    });
  });
}

/** 'json' for JSON content types, else 'text' (README, The REST gateway: text and XML reach interceptors as text). */
export function bodyType(contentType: string | undefined): 'json' | 'text' {
  const ct = (contentType ?? '').toLowerCase();
  return /^application\/([a-z0-9.+-]*\+)?json\b/.test(ct) ? 'json' : 'text';
}
