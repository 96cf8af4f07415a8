/**
 * Reading a template file (a 'file://' Template, `hivenode template render`) without trusting what
 * the path names: a directory, device or FIFO is refused (reading /dev/zero would never end), and a
 * file larger than the limit is refused without being read. The descriptor is checked, not the path,
 * and the read stops one byte past the limit, so a file swapped or growing meanwhile cannot pass.
 */
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { BadInputError, TooLargeError, describeError } from '../protocol/errors.js';

/** Largest template file read: 16 MiB, the size of a render's default character budget. */
const MAX_TEMPLATE_FILE_BYTES = 16 * 1024 * 1024;

const CHUNK = 64 * 1024;

function kind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Reads at most `limit + 1` bytes: more than `limit` means the file is too large. */
async function readCapped(handle: FileHandle, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const want = Math.min(CHUNK, limit + 1 - total);
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(want), 0, want, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(bytesRead === want ? buffer : buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > limit) return undefined;
  }
}

/** The text of the template file at `path`; BadInputError (400) or TooLargeError (413) naming the problem. */
export async function readTemplateFile(path: string, maxBytes = MAX_TEMPLATE_FILE_BYTES): Promise<string> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer before we can tell what it is
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new BadInputError(
      `template file '${path}' cannot be read: ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`,
    );
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new BadInputError(`template file '${path}' is ${kind(st)}, not a regular file`);
    const tooLarge = (): TooLargeError =>
      new TooLargeError(`template file '${path}' is larger than the limit of ${maxBytes} bytes`);
    if (st.size > maxBytes) throw tooLarge();
    const bytes = await readCapped(handle, maxBytes);
    if (bytes === undefined) throw tooLarge();
    return bytes.toString('utf8');
  } finally {
    await handle.close();
  }
}
