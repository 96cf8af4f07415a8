/**
 * An append-only JSON-lines file with group commit: lines appended while a write+fsync is under way
 * are written together by the next one, and each append resolves only after its line is fsynced.
 * Used by the echo service's RecordFile (the proof of delivery in tests).
 */
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { ConfigError, describeError } from '../../protocol/errors.js';
import { GroupCommit } from '../shared/group-commit.js';

export class RecordFile {
  private handle: FileHandle | undefined;
  private readonly lines = new GroupCommit<string>(async (batch) => {
    if (!this.handle) throw new Error(`record file ${this.path} is not open`);
    await this.handle.write(batch.map((line) => `${line}\n`).join(''));
    await this.handle.sync();
  });

  constructor(private readonly path: string) {}

  /** Opens for appending; a path that cannot be opened is the configuration's fault (exit 2, one line). */
  async open(): Promise<void> {
    try {
      this.handle = await open(this.path, 'a');
    } catch (e) {
      throw new ConfigError(
        `RecordFile '${this.path}' cannot be opened for appending: ${(e as NodeJS.ErrnoException).code ?? describeError(e)}; give a file in an existing, writable directory`,
      );
    }
  }

  /** Appends one line; resolves after it is on disk. */
  append(line: string): Promise<void> {
    return this.lines.submit(line);
  }

  async close(): Promise<void> {
    await this.lines.idle();
    await this.handle?.close();
    this.handle = undefined;
  }
}
