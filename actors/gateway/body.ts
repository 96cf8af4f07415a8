/**
 * Reading a request body with a size cap: a declared Content-Length over the cap is refused before
 * reading, and a body that grows past it while streaming is cut off; both are Code 413.
 */
import type { IncomingMessage } from 'node:http';
import { TooLargeError } from '../../protocol/errors.js';

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.reject(new TooLargeError(`request body of ${declared} bytes is over the limit of ${maxBytes} bytes`));
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
