/**
 * Where a MariaDB change stream keeps its binlog position (README, Change streams): the server keeps
 * no position for a binlog reader (PostgreSQL's slot does), so the stream keeps the `file:position`
 * after the last transaction the hive acknowledged — in SQL_STATEFILE (the poller's state-file
 * format, track-state.ts), or on a NATS hive in the bucket the readers of one NAME share
 * (shared-mark.ts). Writes are coalesced: while one is under way, only the newest position waits
 * for the next, and a crash between two writes re-reads the transactions after the older one
 * (at least once, under the same idempotency keys).
 */
import { ConfigError } from '../../protocol/errors.js';
import type { MarkMemory } from './track-state.js';
import { TrackState } from './track-state.js';

/** The label the stored position is kept under (the state format's `column`). */
export const POSITION_LABEL = 'binlog position';

export interface PositionMemory {
  /** Where it is kept, for messages. */
  readonly where: string;
  /** The position kept, or undefined when none is (a new stream). ConfigError when what is kept is no position. */
  load(): Promise<string | undefined>;
  save(position: string): Promise<void>;
}

/** A position in SQL_STATEFILE. */
export class FilePosition implements PositionMemory {
  readonly where: string;
  private readonly state: TrackState;

  constructor(file: string) {
    this.where = `SQL_STATEFILE '${file}'`;
    this.state = new TrackState(file, POSITION_LABEL);
  }

  load(): Promise<string | undefined> {
    const note = this.state.load();
    if (note !== undefined)
      return Promise.reject(
        new ConfigError(
          `${this.where} holds no binlog position of a change stream (${note.replace(/; starting from the beginning$/, '')}): name another file, or remove it to start at the current end of the binlog`,
        ),
      );
    const last = this.state.current().last;
    return Promise.resolve(last === undefined ? undefined : String(last));
  }

  save(position: string): Promise<void> {
    return this.state.save(position);
  }
}

/** A position in a mark memory refreshed from where it is shared (a NATS bucket). */
export class SharedPosition implements PositionMemory {
  constructor(
    private readonly mark: MarkMemory & { refresh(): Promise<void> },
    readonly where: string,
  ) {}

  async load(): Promise<string | undefined> {
    await this.mark.refresh();
    return this.mark.last === undefined ? undefined : String(this.mark.last);
  }

  save(position: string): Promise<void> {
    return this.mark.save(position);
  }
}

/** Keeps the newest acknowledged position, one write at a time. */
export class PositionKeeper {
  private latest: string | undefined;
  private written: string | undefined;
  private writing: Promise<void> | undefined;
  /** The last write's failure, thrown by the next `flushed` (the reader then stops reading). */
  private failure: unknown;

  constructor(private readonly memory: PositionMemory) {}

  /** The newest position handed to `advance` (kept, or about to be). */
  get current(): string | undefined {
    return this.latest;
  }

  advance(position: string): void {
    this.latest = position;
    this.writing ??= this.drain();
  }

  /** Resolves once the newest position is kept; rejects with a failed write. */
  async flushed(): Promise<void> {
    await this.writing;
    if (this.failure !== undefined) throw this.failure;
  }

  /** The write failed earlier: reading must stop (another reader moved the position, or the file cannot be written). */
  get failed(): unknown {
    return this.failure;
  }

  /** Forgets what it kept (a new reading session reads the kept position again) and a failed write. */
  reset(): void {
    this.failure = undefined;
    this.latest = undefined;
    this.written = undefined;
  }

  private async drain(): Promise<void> {
    try {
      while (this.latest !== undefined && this.latest !== this.written && this.failure === undefined) {
        const next = this.latest;
        await this.memory.save(next);
        this.written = next;
      }
    } catch (e) {
      this.failure = e;
    } finally {
      this.writing = undefined;
    }
  }
}
