/**
 * Kept entries (the dead set and the done entries): a dead entry, once handed to its dead-letter
 * target (or at once without one), is kept with state `dead` for DeadRetention; a delivered entry is
 * kept with state `done` for DoneRetention. Kept entries live only in the store, in a table of their
 * own that a start does not load, so the queue's memory stays bounded whatever the retention; the
 * queue holds just their counts (docs/ARCHITECTURE.md, The life of one queue entry).
 */
import type { QueueEntry } from './entry.js';
import { EntryState, fromStored, toStored } from './entry.js';
import { attributeOf } from './responses.js';

/** The states an entry is kept in. */
export type KeptState = typeof EntryState.Dead | typeof EntryState.Done;
export const KEPT_STATES: readonly KeptState[] = [EntryState.Dead, EntryState.Done];

export function isKeptState(state: string | undefined): state is KeptState {
  return state === EntryState.Dead || state === EntryState.Done;
}

/** Which kept entries a list, replay, purge or sweep is about; every given condition must hold. */
export interface KeptFilter {
  state: KeptState;
  /** One entry by key. */
  key?: string;
  /** With `value`: entries whose `groupBy` attribute (responses.ts attributeOf) has that value. */
  groupBy?: string;
  value?: string;
  /** Ended (dead or done) before this time, epoch ms (`older_than`). */
  before?: number;
  /** Ended at or after this time, epoch ms (`newer_than`). */
  since?: number;
}

/** The age conditions of `older_than` / `newer_than`: kept entries by when they ended, live ones by when they were added. */
export type AgeFilter = Pick<KeptFilter, 'before' | 'since'>;

/** One kept entry as stored: the columns a filter reads without parsing, and the entry's document. */
export interface KeptRow {
  key: string;
  seq: number;
  state: KeptState;
  /** The dead entry's deadletter_reason ('' for done entries). */
  reason: string;
  channel: string;
  /** When it ended (dead or done), epoch ms. */
  endedAt: number;
  /** The entry as JSON (entry.ts toStored); '' when the reader asked for the columns only. */
  doc: string;
}

/** The store write that moves an entry out of the live entries into the kept ones (one transaction). */
export type KeepOp = { type: 'keep' } & KeptRow;

/** The store write that drops kept entries by key: replayed back to the live entries, purged or swept. */
export interface UnkeepOp {
  type: 'unkeep';
  keys: string[];
}

/** Counts of kept entries per state. */
export type KeptCounts = Record<KeptState, number>;

/** The kept entries of a store (QueueStore.kept): every store implements them, the memory store within a bound. */
export interface KeptEntries {
  /** Entries matching the filter, oldest kept first, in chunks (each awaited); documents only when asked for (a list needs the keys). */
  read(filter: KeptFilter, withDocs: boolean, onRows: (rows: KeptRow[]) => void | Promise<void>): Promise<void>;
  /**
   * One page of the keys matching the filter, in the order `read` gives them, and how many match in
   * all: the store skips `offset` rows on an index instead of handing every key to the queue.
   */
  page(filter: KeptFilter, offset: number, limit: number): Promise<{ keys: string[]; total: number }>;
  /** How many entries matching the filter have each value of the `groupBy` attribute. */
  group(filter: KeptFilter, groupBy: string): Promise<Map<string, number>>;
  /** One entry, with its document. */
  get(key: string): Promise<KeptRow | undefined>;
  /** Entries per state, read at load: the queue counts them in memory from there. */
  count(): Promise<KeptCounts>;
  /** Removes durably the entries matching the filter (the oldest `limit` of them, if given); resolves with how many. */
  purge(filter: KeptFilter, limit?: number): Promise<number>;
}

/** When an entry ended; entries that have not ended (never in the kept set) count from their creation. */
export function endedAtOf(e: QueueEntry): number {
  return Date.parse(e.endedAt ?? e.createdAt);
}

/** Marks an entry dead or done now and gives the write that keeps it. */
export function keepOp(e: QueueEntry, state: KeptState, now: number): KeepOp {
  e.state = state;
  e.endedAt ??= new Date(now).toISOString();
  return {
    type: 'keep',
    key: e.key,
    seq: e.seq,
    state,
    reason: state === EntryState.Dead ? (e.deadReason ?? '') : '',
    channel: e.channel,
    endedAt: endedAtOf(e),
    doc: toStored(e),
  };
}

/** Whether an entry (live or kept) passes the filter's age and group conditions; `at` is the time its age counts from. */
export function matchesAgeAndGroup(e: QueueEntry, at: number, f: Omit<KeptFilter, 'state'>): boolean {
  if (f.key !== undefined && e.key !== f.key) return false;
  if (f.before !== undefined && !(at < f.before)) return false;
  if (f.since !== undefined && !(at >= f.since)) return false;
  return f.groupBy === undefined || f.value === undefined || attributeOf(e, f.groupBy) === f.value;
}

/** A kept row's groupby attribute (kept stores that filter in memory: memory-kept.ts, jetstream-kept.ts): its columns where they hold it, else read from its document. */
export function keptRowAttribute(row: KeptRow, attribute: string): string {
  if (attribute === 'deadletter_reason') return row.reason;
  if (attribute === 'channel') return row.channel;
  if (attribute === 'state') return row.state;
  return attributeOf(fromStored(row.doc), attribute);
}

export function keptRowMatches(row: KeptRow, f: KeptFilter): boolean {
  if (row.state !== f.state || (f.key !== undefined && row.key !== f.key)) return false;
  if (f.before !== undefined && !(row.endedAt < f.before)) return false;
  if (f.since !== undefined && !(row.endedAt >= f.since)) return false;
  return f.groupBy === undefined || f.value === undefined || keptRowAttribute(row, f.groupBy) === f.value;
}

/** A page of `read`'s keys, for stores that filter while reading (memory, JetStream): counted and cut while they stream by. */
export async function pageByReading(
  kept: Pick<KeptEntries, 'read'>,
  filter: KeptFilter,
  offset: number,
  limit: number,
): Promise<{ keys: string[]; total: number }> {
  const keys: string[] = [];
  let total = 0;
  await kept.read(filter, false, (rows) => {
    for (const r of rows) {
      if (total >= offset && total < offset + limit) keys.push(r.key);
      total++;
    }
  });
  return { keys, total };
}
