/**
 * The node file as the console writes it back (README, Changing a running node: the Config page):
 * atomically — the new text goes to a temporary file beside it, fsynced, then renamed over it (a
 * crash leaves the old file or the new one, never half of one) — and with the versions before it
 * kept beside it, `<file>.1` (newest) … `<file>.5`.
 *
 * The write is two steps so a reload can come between them: `prepare` writes and fsyncs the
 * temporary file (a directory the node may not write to fails here, before anything changed), and
 * `commit` rotates the kept versions and renames it into place (`discard` removes it instead).
 */
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname } from 'node:path';
import { ConfigError, NotFoundError } from '../protocol/errors.js';

/** How many earlier versions are kept. */
const KEPT_VERSIONS = 5;

/** A kept version: `<file>.<n>`. */
export interface KeptVersion {
  n: number;
  path: string;
  /** When it was written (it was the node file until then). */
  modified: string;
  size: number;
}

const versionPath = (file: string, n: number): string => `${file}.${n}`;

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // some filesystems cannot fsync a directory; the rename is still atomic there
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The kept versions that exist, newest first. */
export function keptVersions(file: string): KeptVersion[] {
  const out: KeptVersion[] = [];
  for (let n = 1; n <= KEPT_VERSIONS; n++) {
    const path = versionPath(file, n);
    try {
      const st = statSync(path);
      out.push({ n, path, modified: st.mtime.toISOString(), size: st.size });
    } catch {
      // not kept (yet)
    }
  }
  return out;
}

/** The text of kept version `n` (1 … KEPT_VERSIONS), or 404 naming what is kept. */
export function readKeptVersion(file: string, n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > KEPT_VERSIONS)
    throw new NotFoundError(`no kept version ${String(n)}: versions are 1 (newest) to ${KEPT_VERSIONS}`);
  try {
    return readFileSync(versionPath(file, n), 'utf8');
  } catch {
    const kept = keptVersions(file).map((v) => v.n);
    throw new NotFoundError(
      `${basename(file)}.${n} is not kept${kept.length ? ` (kept: ${kept.map((k) => `.${k}`).join(', ')})` : ' (no version is kept yet: one is kept at each apply)'}`,
    );
  }
}

/** A new text written beside the file and fsynced, not yet in place. */
export interface PreparedWrite {
  commit(): void;
  discard(): void;
}

/** Writes `text` to a temporary file beside `file` (with its mode) and fsyncs it; a failure is a ConfigError naming the file. */
export function prepareWrite(file: string, text: string): PreparedWrite {
  const temp = `${dirname(file)}/.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let mode = 0o644;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    // a file removed while the node runs is written anew
  }
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', mode);
    const bytes = Buffer.from(text, 'utf8');
    for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off);
    fsyncSync(fd);
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    if (existsSync(temp)) unlinkSync(temp);
    throw new ConfigError(
      `cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)} (the node keeps running what it had; give the node write access to ${dirname(file)})`,
    );
  }
  closeSync(fd);
  let done = false;
  return {
    commit() {
      if (done) return;
      done = true;
      rotate(file);
      renameSync(temp, file);
      fsyncDir(dirname(file));
    },
    discard() {
      if (done) return;
      done = true;
      if (existsSync(temp)) unlinkSync(temp);
    },
  };
}

/**
 * Shifts the kept versions one down (`.4` → `.5` … `.1` → `.2`; the oldest is dropped) and keeps
 * the current file as `.1` — a hard link, so the file stays in place until the rename replaces it.
 */
function rotate(file: string): void {
  for (let n = KEPT_VERSIONS - 1; n >= 1; n--) {
    if (existsSync(versionPath(file, n))) renameSync(versionPath(file, n), versionPath(file, n + 1));
  }
  if (!existsSync(file)) return;
  try {
    linkSync(file, versionPath(file, 1));
  } catch {
    // a filesystem without hard links
    copyFileSync(file, versionPath(file, 1));
  }
}
