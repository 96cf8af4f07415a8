/**
 * Reads a response body up to a cap: the error `tooLarge` builds ends the read (and the body) as soon
 * as the cap is passed. Events rather than an async iterator: fewer promises per chunk.
 */
import type { Readable } from 'node:stream';

export function readCapped(body: Readable, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    body.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    body.on('error', reject);
  });
}
