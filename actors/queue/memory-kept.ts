/**
 * The kept entries (kept.ts) of a queue without persistence (PersistPath ''): held in memory, so they
 * are bounded — at most `capacity` of them (the queue's Capacity); beyond it the oldest kept entry is
 * dropped first, and the log says so once.
 */
import type { Logger } from '../observe/logger.js';
import { EntryState } from './entry.js';
import type { KeepOp, KeptCounts, KeptEntries, KeptFilter, KeptRow, KeptState, UnkeepOp } from './kept.js';
import { keptRowAttribute, keptRowMatches, pageByReading } from './kept.js';
import { countInto } from './responses.js';

/** Rows per chunk handed to a reader, as the SQLite store reads them. */
const READ_CHUNK = 5_000;

export class MemoryKept implements KeptEntries {
  /** In the order they were kept (Map order): the oldest is the first. */
  private readonly rows = new Map<string, KeptRow>();
  private warned = false;

  constructor(
    private readonly capacity: number,
    private readonly log: Logger | undefined,
    /** Told of every entry dropped for room, so the queue's counts stay right. */
    private readonly onEvicted: (state: KeptState) => void,
  ) {}

  apply(op: KeepOp | UnkeepOp): void {
    if (op.type === 'unkeep') {
      for (const key of op.keys) this.rows.delete(key);
      return;
    }
    const { type: _type, ...row } = op;
    this.rows.delete(row.key);
    if (this.rows.size >= this.capacity) this.evictOldest();
    this.rows.set(row.key, row);
  }

  private evictOldest(): void {
    const oldest = this.rows.values().next().value;
    if (!oldest) return;
    this.rows.delete(oldest.key);
    this.onEvicted(oldest.state);
    if (this.warned) return;
    this.warned = true;
    this.log?.warn(
      `the queue keeps at most ${this.capacity} dead and done entries in memory (PersistPath is empty): the oldest are dropped from now on`,
    );
  }

  async read(filter: KeptFilter, withDocs: boolean, onRows: (rows: KeptRow[]) => void | Promise<void>): Promise<void> {
    const chunk: KeptRow[] = [];
    for (const row of this.rows.values()) {
      if (!keptRowMatches(row, filter)) continue;
      chunk.push(withDocs ? row : { ...row, doc: '' });
      if (chunk.length === READ_CHUNK) await onRows(chunk.splice(0));
    }
    if (chunk.length > 0) await onRows(chunk);
  }

  page(filter: KeptFilter, offset: number, limit: number): Promise<{ keys: string[]; total: number }> {
    return pageByReading(this, filter, offset, limit);
  }

  async group(filter: KeptFilter, groupBy: string): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const row of this.rows.values())
      if (keptRowMatches(row, filter)) countInto(counts, keptRowAttribute(row, groupBy));
    return counts;
  }

  async get(key: string): Promise<KeptRow | undefined> {
    return this.rows.get(key);
  }

  async count(): Promise<KeptCounts> {
    const counts: KeptCounts = { [EntryState.Dead]: 0, [EntryState.Done]: 0 };
    for (const row of this.rows.values()) counts[row.state]++;
    return counts;
  }

  async purge(filter: KeptFilter, limit = Infinity): Promise<number> {
    let removed = 0;
    for (const row of this.rows.values()) {
      if (removed >= limit) break;
      if (!keptRowMatches(row, filter)) continue;
      this.rows.delete(row.key);
      removed++;
    }
    return removed;
  }
}
