/**
 * What the queue asks of its durable store (docs/ARCHITECTURE.md, The life of one queue entry): the
 * operations it writes, the rows it reads back, and the QueueStore contract the SQLite store
 * (sqlite-store.ts), the JetStream store (jetstream-store.ts) and the in-memory one
 * (memory-store.ts) each keep.
 */
import type { KeepOp, KeptEntries, UnkeepOp } from './kept.js';

/**
 * One write operation of the queue. A put names the entry's state and due time beside its document
 * so a start can schedule it without parsing the document (see entry-table.ts).
 */
export type StoreOp =
  | { type: 'put'; key: string; seq: number; state: string; dueAt: number; doc: string }
  | { type: 'remove'; key: string }
  | { type: 'clear' }
  | { type: 'meta'; name: string; value: string }
  /** An idempotency key and the entry it created (dedup.ts); kept apart from the entry, which may go first. */
  | { type: 'seen'; key: string; entryKey: string; seenAt: number }
  /** Drops the idempotency keys first seen at or before `before` (out of the window). */
  | { type: 'forget-seen'; before: number }
  /** A cron schedule (schedules.ts), created or updated, by its name. */
  | { type: 'put-schedule'; name: string; doc: string }
  | { type: 'remove-schedule'; name: string }
  /** Moves an entry from the live entries to the kept ones (kept.ts), both in this transaction. */
  | KeepOp
  | UnkeepOp;

/** One stored entry as loaded; state and dueAt are null in rows written before they had columns. */
export interface StoredRow {
  seq: number;
  key: string;
  state: string | null;
  dueAt: number | null;
  doc: string;
}

/** One stored idempotency key. */
export interface SeenRow {
  key: string;
  entryKey: string;
  seenAt: number;
}

/** One stored cron schedule: its name and its document (schedules.ts). */
export interface ScheduleRow {
  name: string;
  doc: string;
}

/**
 * The store's side of a queue that holds only part of its entries in memory (backlog.ts): entries
 * waiting for a time (retrying, scheduled) due after a horizon stay in the store, counted, and are
 * read back as their time comes or a command names them. A store without it (in memory, JetStream,
 * which replays its whole log anyway) has every entry loaded.
 */
export interface EntryPaging {
  /** How many entries waiting for a time are due after `after`, by state. */
  countTimedAfter(after: number): Promise<Array<{ state: string; n: number }>>;
  /** The entries waiting for a time due in (after, until], in seq order. */
  timedBetween(after: number, until: number): Promise<StoredRow[]>;
  /** Those of `keys` that wait for a time due after `after`. */
  timedByKeys(keys: readonly string[], after: number): Promise<StoredRow[]>;
  /** The oldest (lowest seq) entry in one of `states` due after `after`, if any. */
  oldestTimed(states: readonly string[], after: number): Promise<StoredRow | undefined>;
  /** The highest seq stored (0 when there is none). */
  lastSeq(): Promise<number>;
  /** The earliest due time of an entry waiting for a time due after `after`, if any. */
  nextDueAfter(after: number): Promise<number | undefined>;
}

export interface QueueStore {
  readonly durable: boolean;
  /** Where the entries are kept, for the log (a file, a stream); undefined in memory. */
  readonly where?: string;
  /**
   * Streams every stored entry in FIFO order to `onRows` (in chunks); resolves with the meta values.
   * With `parkAfter` (only given to a store with `paging`) entries waiting for a time due after it are left out.
   */
  load(onRows: (rows: StoredRow[]) => void, parkAfter?: number): Promise<Map<string, string>>;
  /** Present when the store can hold entries the queue does not load (see EntryPaging). */
  readonly paging?: EntryPaging;
  /** The idempotency keys first seen after `after` (epoch ms), oldest first. */
  loadSeen(after: number): Promise<SeenRow[]>;
  /** Every stored cron schedule. */
  loadSchedules(): Promise<ScheduleRow[]>;
  /** Resolves when the operations are durable (or rejects, and none of them is). */
  write(ops: StoreOp[]): Promise<void>;
  close(): Promise<void>;
  /** The kept entries (kept.ts): apart from the live ones, never loaded, read by filter. */
  readonly kept: KeptEntries;
}
