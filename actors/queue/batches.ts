/**
 * Batches (README, The queue: Batches): with BatchSize above 1 the waiting entries for one channel
 * (and one group, with GroupBy) leave as one message. Its Data holds each entry's fields as
 * parallel lists — value i of every field is entry i's, the shape the SQL service's SQL_BATCH
 * reads — and its Control carries `keys`, the entries' keys in that order. The target may answer
 * Data `codes` (one per key, in the order of `keys`) so each entry succeeds, retries or dies alone;
 * a Result without `codes` applies to every entry of the batch.
 *
 * Entries gather in open batches as they come up for delivery (by priority, then arrival); a batch
 * goes out when it is full, or once BatchWindow has passed since its first entry came up. Only the
 * delivery is shared: each entry keeps its own attempts, history, retry wait, dead-letter target
 * and state.
 */
import { Code } from '../../protocol/codes.js';
import { ConfigError } from '../../protocol/errors.js';
import type { Message, Result, ValueMap } from '../../protocol/message.js';
import { emptyMap, failure } from '../../protocol/message.js';
import type { QueueConfig } from './command-parser.js';
import type { QueueEntry } from './entry.js';
import { rankOf } from './priority.js';
import { attributeOf } from './responses.js';

/** The Control of a batch message listing its entries' keys, and the Data a target answers per entry. */
const BATCH_KEYS = 'keys';
const BATCH_CODES = 'codes';
/** Optional beside `codes`: one message per key (a failed entry's reason in its history and dead letter). */
const BATCH_MESSAGES = 'messages';

/** BatchSize and BatchWindow, compiled once at start; undefined: no batches (BatchSize 1). */
export interface BatchSettings {
  size: number;
  windowMs: number;
  /** GroupBy: entries of one batch share their group too. */
  groupBy: string;
}

/**
 * The batch settings of a configuration, checked at start. GroupOrder is refused beside batches:
 * it delivers one entry of a group at a time in arrival order and holds the group while one
 * retries, which a batch that fails one entry alone (its later entries delivered) cannot keep.
 */
export function batchSettingsOf(
  config: Pick<QueueConfig, 'BatchSize' | 'BatchWindow' | 'GroupBy' | 'GroupOrder'>,
): BatchSettings | undefined {
  if (config.BatchSize <= 1) return undefined;
  if (config.GroupOrder !== '')
    throw new ConfigError(
      `GroupOrder ${config.GroupOrder} delivers one entry of a group at a time, but BatchSize is ${config.BatchSize}; set BatchSize to 1, or leave GroupOrder out`,
    );
  return { size: config.BatchSize, windowMs: config.BatchWindow, groupBy: config.GroupBy.trim() };
}

/** What the entries of one batch share: channel, mode, Class, Operation, and group. */
function batchKeyOf(e: QueueEntry, groupBy: string): string {
  return JSON.stringify([
    e.channel,
    e.mode,
    e.message.Class,
    e.message.Operation,
    groupBy === '' ? '' : attributeOf(e, groupBy),
  ]);
}

/** A batch gathering entries. */
export interface OpenBatch {
  readonly id: string;
  readonly entries: QueueEntry[];
  /** The rank (priority, arrival) of its first entry: of the batches that may go, the lowest goes first. */
  readonly head: number;
  /** When it goes even if not full: its first entry's coming up plus BatchWindow. */
  readonly dueAt: number;
}

/** The open batches of one queue state; one timer for the earliest BatchWindow. */
export class BatchBuffers {
  private readonly open = new Map<string, OpenBatch>();
  private fullCount = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;

  constructor(readonly settings: BatchSettings) {}

  /** Entries gathered, not yet delivered. */
  get entries(): number {
    let n = 0;
    for (const b of this.open.values()) n += b.entries.length;
    return n;
  }

  get hasFull(): boolean {
    return this.fullCount > 0;
  }

  /** Puts an entry that came up for delivery into its batch (opened now if there is none); the batch's room left. */
  add(e: QueueEntry, now: number): { id: string; room: number } {
    const id = batchKeyOf(e, this.settings.groupBy);
    let b = this.open.get(id);
    if (!b) {
      b = { id, entries: [], head: rankOf(e), dueAt: now + this.settings.windowMs };
      this.open.set(id, b);
    }
    b.entries.push(e);
    if (b.entries.length === this.settings.size) this.fullCount++;
    return { id, room: this.settings.size - b.entries.length };
  }

  /** The open batches that are not full: with group limits their group's later entries top them up (batch-delivery.ts). */
  *partial(): IterableIterator<OpenBatch> {
    for (const b of this.open.values()) if (b.entries.length < this.settings.size) yield b;
  }

  /** Whether `e` would join the batch `id` (the group gate's companions of a batch's first entry). */
  joins(e: QueueEntry, id: string): boolean {
    return batchKeyOf(e, this.settings.groupBy) === id;
  }

  /** The batch to deliver now: a full one, else one whose window is over; the lowest head first. */
  takeDue(now: number): OpenBatch | undefined {
    let best: OpenBatch | undefined;
    for (const b of this.open.values()) {
      const full = b.entries.length >= this.settings.size;
      if (this.fullCount > 0 ? !full : b.dueAt > now) continue;
      if (!best || b.head < best.head) best = b;
    }
    if (!best) return undefined;
    this.open.delete(best.id);
    if (best.entries.length >= this.settings.size) this.fullCount--;
    return best;
  }

  /** Wakes the queue once the earliest open batch's window is over (one unref'd timer). */
  arm(now: number, wake: () => void): void {
    let next = Infinity;
    for (const b of this.open.values()) next = Math.min(next, b.dueAt);
    if (next === Infinity || next <= now || (this.timer && this.timerAt <= next)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      wake();
    }, next - now).unref();
  }

  /** `clear`: every entry is gone. */
  clear(): void {
    this.open.clear();
    this.fullCount = 0;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * The one message of a batch: Class, Operation and Control of its first entry (its trace goes on
 * in the delivery), Control `keys`, and Data as parallel lists: value i of a field is entry i's
 * first value of it, '' when entry i has none (a SQL_BATCH row has no NULL either).
 */
export function batchMessage(entries: readonly QueueEntry[]): Message {
  const first = entries[0]!.message;
  const names = new Set<string>();
  for (const e of entries) for (const name of Object.keys(e.message.Data)) names.add(name);
  const data: ValueMap = emptyMap();
  for (const name of names)
    data[name] = entries.map((e) => (Object.hasOwn(e.message.Data, name) ? (e.message.Data[name]?.[0] ?? '') : ''));
  const control: ValueMap = emptyMap();
  for (const [name, values] of Object.entries(first.Control)) control[name] = values;
  control[BATCH_KEYS] = entries.map((e) => e.key);
  return { Class: first.Class, Operation: first.Operation, Control: control, Data: data };
}

/**
 * Each entry's outcome of a batch's Result, in the order of `keys`: from Data `codes` (and
 * `messages`) when the target answers them, else the Result itself for every entry. `codes` of
 * another length than `keys`, or not HTTP-like whole numbers, says nothing about which entry
 * succeeded: every entry then fails with 502 naming what was wrong (and is retried, or dies, by
 * its own attempts), as the target may have done all, some or none of them.
 */
export function entryResults(result: Result, keys: readonly string[]): { results: Result[]; problem?: string } {
  const codes = Object.hasOwn(result.Data, BATCH_CODES) ? result.Data[BATCH_CODES] : undefined;
  if (codes === undefined) return { results: keys.map(() => result) };
  const parsed = codes.map((c) => (/^\s*[1-5]\d\d\s*$/.test(c) ? Number(c) : NaN));
  let problem: string | undefined;
  if (codes.length !== keys.length)
    problem = `the target answered ${codes.length} code(s) in Data codes for a batch of ${keys.length} entries; it needs one per key of Control keys, in their order`;
  else if (parsed.some((c) => Number.isNaN(c)))
    problem = `the target answered Data codes that are not all Codes from 100 to 599 (${JSON.stringify(codes.slice(0, 5))}…)`;
  if (problem) {
    const failed = failure(Code.UpstreamError, `${problem} (target answered ${result.Code} ${result.Message})`);
    return { results: keys.map(() => failed), problem };
  }
  const messages =
    Object.hasOwn(result.Data, BATCH_MESSAGES) && result.Data[BATCH_MESSAGES]!.length === keys.length
      ? result.Data[BATCH_MESSAGES]!
      : undefined;
  // a Retry-After the target answered holds for each entry it failed
  const data: ValueMap = emptyMap();
  if (Object.hasOwn(result.Data, 'retry_after')) data.retry_after = result.Data.retry_after!;
  return {
    results: parsed.map((code, i) => ({
      Code: code,
      Message:
        messages?.[i] ||
        (code === result.Code ? result.Message : `${code} for entry ${i + 1} of a batch of ${keys.length}`),
      Data: data,
      List: null,
    })),
  };
}
