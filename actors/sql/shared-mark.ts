/**
 * The high-water mark of the pollers of one NAME on a NATS hive (SQL_TRACKCOLUMN's last emitted
 * value), in the bucket their lease lives in (actors/hive/lease.ts), so the poller that takes over goes on
 * from the last value any of them emitted. Read before every poll; written with a compare-and-set
 * on the revision read, so a poller that lost the lease without knowing it cannot move the mark
 * back: its write fails, and it stops. Until the bucket holds a mark, SQL_STATEFILE's value (if
 * any) is where polling starts, so a poller moved onto a NATS hive does not emit old rows again.
 */
import type { SharedBucket } from '../hive/transport.js';
import type { Logger } from '../observe/logger.js';
import type { Mark } from './track-state.js';
import { MarkMemory, decodeTrack, encodeTrack } from './track-state.js';

/** A mark write that lost to another poller's. */
export class MarkMovedError extends Error {}

export class SharedMark extends MarkMemory {
  private revision: number | undefined;
  private noted: string | undefined;

  constructor(
    private readonly bucket: SharedBucket,
    private readonly key: string,
    private readonly column: string,
    /** Where polling starts while the bucket has no mark (the state file's). */
    private readonly seed: Mark,
    private readonly log: Logger,
  ) {
    super(seed);
  }

  async refresh(): Promise<void> {
    const stored = await this.bucket.get(this.key);
    this.revision = stored?.revision;
    if (!stored) {
      this.mark = this.seed;
      return;
    }
    const decoded = decodeTrack(stored.value, this.column, `the shared mark ${this.key}`);
    if ('mark' in decoded) {
      this.mark = decoded.mark;
      return;
    }
    this.mark = {};
    if (this.noted !== decoded.note) this.log.warn(decoded.note);
    this.noted = decoded.note;
  }

  protected async write(mark: Mark): Promise<void> {
    const text = encodeTrack(this.column, mark);
    const revision =
      this.revision === undefined
        ? await this.bucket.create(this.key, text)
        : await this.bucket.update(this.key, text, this.revision);
    if (revision === undefined)
      throw new MarkMovedError(`another poller of the same NAME moved the mark ${this.key} meanwhile`);
    this.revision = revision;
    this.mark = mark;
  }
}
