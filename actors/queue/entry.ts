/**
 * A queue entry (README, The queue "Queue entry", docs/ARCHITECTURE.md, The life of one queue entry): the
 * message to send later plus its delivery settings, attempts and attempt history. Entries are
 * stored as JSON documents.
 */
import type { Message } from '../../protocol/message.js';
import { copyMap } from '../../protocol/message.js';

/** Where an entry is in its life (README, The queue leaves them open; these are ours). */
export const EntryState = {
  /** Stored, not yet durable: invisible to delivery until its write is committed. */
  Pending: 'pending',
  /** Durable, held until its `delay` / `not_before` time (delay.ts), then waiting. */
  Scheduled: 'scheduled',
  /** Durable and waiting for its turn. */
  Waiting: 'waiting',
  /** Handed to the delivery actor, outcome not known yet. */
  Delivering: 'delivering',
  /** A failed attempt; waiting out requeue_timer. */
  Retrying: 'retrying',
  /** Out of attempts; being handed to the dead-letter target, then kept in the dead set for DeadRetention (kept.ts). */
  Dead: 'dead',
  /** Delivered and kept for DoneRetention (kept.ts); only ever in the store, never in the queue's memory. */
  Done: 'done',
} as const;
export type EntryState = (typeof EntryState)[keyof typeof EntryState];

export const DeliveryMode = { Call: 'call', Execute: 'execute' } as const;
export type DeliveryMode = (typeof DeliveryMode)[keyof typeof DeliveryMode];

/** One attempt's outcome, kept for `fetch`. */
export interface Attempt {
  time: string;
  /** How long the attempt took in ms; absent in attempts stored before it was recorded. */
  duration?: number;
  code: number;
  message: string;
  /** Delivered in a batch of this many entries (BatchSize: batches.ts); absent: alone. */
  batch?: number;
}

export interface QueueEntry {
  key: string;
  /** FIFO position; increases with every entry ever added. */
  seq: number;
  /** 0 to 9, higher delivered first (priority.ts); absent: 0. Written right after seq, where a start reads it unparsed. */
  priority?: number;
  message: Message;
  channel: string;
  mode: DeliveryMode;
  requeueTimerMs: number;
  requeueCount: number;
  /** requeue_schedule: the wait after each failed attempt, ms (requeue-schedule.ts); requeueCount is its length. */
  requeueSchedule?: number[];
  /** Dead-letter channel; '' drops dead entries. */
  deadLetter: string;
  attempts: number;
  state: EntryState;
  /** Earliest time (epoch ms) of the next attempt: the retry time, or the scheduled time of a new entry. */
  dueAt: number;
  createdAt: string;
  history: Attempt[];
  /** Why the entry is dead, once it is. */
  deadReason?: string;
  /** When the entry became dead or done (RFC 3339): the retention of the dead set and the done entries counts from it. */
  endedAt?: string;
  /** When the entry was replayed from the dead set, oldest first (its history runs on across replays). */
  replayedAt?: string[];
  /** dedup_mode replace / keep-last-if-active: the idempotency key whose later adds replace this entry while it waits (debounce.ts). */
  dedupKey?: string;
  dedupMode?: 'replace' | 'keep-last-if-active';
}

/**
 * The state an entry is stored in: delivering entries are stored as waiting (they will be retried);
 * a pending one is written before it becomes scheduled or waiting, so it is stored as what it will
 * become, for a restart to schedule it by (isScheduled).
 */
function storedState(e: QueueEntry): EntryState {
  if (e.state === EntryState.Pending) return isScheduled(e, Date.now()) ? EntryState.Scheduled : EntryState.Waiting;
  return e.state === EntryState.Delivering ? EntryState.Waiting : e.state;
}

/** Whether a new entry waits for its time (`delay` / `not_before`) rather than being delivered at once. */
export function isScheduled(e: QueueEntry, now: number): boolean {
  return e.dueAt > now;
}

/** The stored form: what survives a restart. */
export function toStored(e: QueueEntry): string {
  return JSON.stringify({ ...e, state: storedState(e) });
}

/** The store write of an entry: its document, plus the state and due time a start schedules it by. */
export function putOp(e: QueueEntry): {
  type: 'put';
  key: string;
  seq: number;
  state: EntryState;
  dueAt: number;
  doc: string;
} {
  return { type: 'put', key: e.key, seq: e.seq, state: storedState(e), dueAt: e.dueAt, doc: toStored(e) };
}

/** Parses a stored entry; throws on documents that are not entries (a corrupt row). */
export function fromStored(text: string): QueueEntry {
  const e = JSON.parse(text) as QueueEntry;
  if (typeof e.key !== 'string' || typeof e.seq !== 'number' || typeof e.message !== 'object' || e.message === null)
    throw new Error('stored entry is malformed');
  // JSON.parse gives Object.prototype: the maps get a value map's prototype back, as every protocol map has
  e.message.Control = copyMap(e.message.Control);
  e.message.Data = copyMap(e.message.Data);
  return e;
}
