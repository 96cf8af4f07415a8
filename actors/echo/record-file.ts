/**
 * An append-only JSON-lines file with group commit: lines appended while a write+fsync is under way
 * are written together by the next one, and each append resolves only after its line is fsynced.
 * Used by the echo service's RecordFile (the proof of delivery in tests).
 */
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

export class RecordFile {
  private handle: FileHandle | undefined;
  private pending: { line: string; done: (e?: Error) => void }[] = [];
  private flushing = false;

  constructor(private readonly path: string) {}

  async open(): Promise<void> {
    this.handle = await open(this.path, 'a');
  }

  /** Appends one line; resolves after it is on disk. */
  append(line: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ line, done: (e) => (e ? reject(e) : resolve()) });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0);
      try {
        if (!this.handle) throw new Error(`record file ${this.path} is not open`);
        await this.handle.write(batch.map((b) => `${b.line}\n`).join(''));
        await this.handle.sync();
        for (const b of batch) b.done();
      } catch (e) {
        for (const b of batch) b.done(e as Error);
      }
    }
    this.flushing = false;
  }

  async close(): Promise<void> {
    while (this.flushing || this.pending.length) await new Promise((r) => setTimeout(r, 5));
    await this.handle?.close();
    this.handle = undefined;
  }
}
