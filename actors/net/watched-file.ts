/**
 * A configuration file read at start and re-read when it changes, checked at most every `recheckMs`
 * when its value is asked for (the gateway's users and groups files). A file that cannot be read or
 * parsed at start stops the start (ConfigError); one that turns bad later keeps the value read before
 * (a file being rewritten must not lock everyone out) and is reported once per bad version.
 * A change is seen by modification time, size or inode, so an atomic replace (write + rename) within
 * the same clock tick is noticed too.
 */
import type { Stats } from 'node:fs';
import { readFileSync, statSync } from 'node:fs';
import { ConfigError, describeError } from '../../protocol/errors.js';

const RECHECK_MS = 5_000;

export interface WatchedFileOptions {
  /** The parameter naming the file, for the start error ('Users'). */
  param: string;
  /** What the file holds, for the start error ('users file'). */
  kind: string;
  recheckMs?: number;
  /** Told once per version of the file that could not be read or parsed after the start. */
  onReloadError?: (message: string) => void;
}

const stamp = (s: Stats): string => `${s.mtimeMs}:${s.size}:${s.ino}`;

export class WatchedFile<T> {
  private value: T;
  /** The version last looked at, read or not. */
  private seen: string;
  private lastCheck = Date.now();
  private readonly recheckMs: number;

  constructor(
    readonly file: string,
    private readonly parse: (text: string, file: string) => T,
    private readonly opts: WatchedFileOptions,
  ) {
    this.recheckMs = opts.recheckMs ?? RECHECK_MS;
    try {
      this.seen = stamp(statSync(file));
      this.value = parse(readFileSync(file, 'utf8'), file);
    } catch (e) {
      if (e instanceof ConfigError) throw e;
      throw new ConfigError(
        `${opts.param}: cannot read ${opts.kind} '${file}': ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`,
      );
    }
  }

  /** The value of the file's latest good version. */
  get(): T {
    const now = Date.now();
    if (now - this.lastCheck >= this.recheckMs) {
      this.lastCheck = now;
      this.reloadIfChanged();
    }
    return this.value;
  }

  private reloadIfChanged(): void {
    let version: string;
    try {
      version = stamp(statSync(this.file));
    } catch (e) {
      this.failed(
        `missing:${(e as NodeJS.ErrnoException).code}`,
        `cannot read it: ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`,
      );
      return;
    }
    if (version === this.seen) return;
    try {
      this.value = this.parse(readFileSync(this.file, 'utf8'), this.file);
      this.seen = version;
    } catch (e) {
      this.failed(version, describeError(e));
    }
  }

  private failed(version: string, reason: string): void {
    if (version === this.seen) return;
    this.seen = version;
    this.opts.onReloadError?.(
      `${this.opts.param}: ${this.opts.kind} '${this.file}' changed but ${reason}; keeping what was read before`,
    );
  }
}
