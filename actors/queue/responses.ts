/**
 * The queue's response Data (README, The queue, docs/ARCHITECTURE.md, Result shapes): every response
 * carries `queuesize` and `status`; list gives `objects` (keys), per-value counts with groupby, or
 * one group's keys; fetch gives the entry's Data plus its attributes, with the whole entry (and
 * attempt history) in List.
 */
import { BadInputError } from '../../protocol/errors.js';
import type { Result, ValueMap } from '../../protocol/message.js';
import { emptyMap, success } from '../../protocol/message.js';
import type { QueueEntry } from './entry.js';
import type { StateCounts } from './state-counts.js';
import { countsData } from './state-counts.js';

export interface QueueView {
  size: number;
  paused: boolean;
  /** Entries per state, in status and list answers (state-counts.ts); a list's groups named like a state take their place. */
  counts?: StateCounts;
}

export function statusData(view: QueueView, extra: Record<string, string[]> = {}): ValueMap {
  return Object.assign(emptyMap(), view.counts ? countsData(view.counts) : {}, extra, {
    queuesize: [String(view.size)],
    status: [view.paused ? 'paused' : 'running'],
  });
}

export function statusResult(view: QueueView, extra: Record<string, string[]> = {}): Result {
  return success(statusData(view, extra), []);
}

const ATTRIBUTES = new Set(['channel', 'mode', 'class', 'operation', 'state', 'deadletter_reason']);

/** The value an entry has for a groupby attribute: an entry attribute or the first value of a Data field. */
export function attributeOf(entry: QueueEntry, attribute: string): string {
  switch (attribute) {
    case 'channel':
      return entry.channel;
    case 'mode':
      return entry.mode;
    case 'class':
      return entry.message.Class;
    case 'operation':
      return entry.message.Operation;
    case 'state':
      return entry.state;
    case 'deadletter_reason':
      return entry.deadReason ?? '';
    default:
      return Object.hasOwn(entry.message.Data, attribute) ? (entry.message.Data[attribute]?.[0] ?? '') : '';
  }
}

export interface ListRequest {
  groupBy?: string;
  value?: string;
  state?: string;
  page?: ListPage;
}

/** A page of a `list` answer's keys: list_offset keys skipped, at most list_limit kept. */
export interface ListPage {
  offset: number;
  limit?: number;
}

/**
 * The keys of a `list` answer, gathered one by one: with a page only the page's keys are kept (every
 * match still counted, as `total`), so a console paging through a million dead entries is sent 20
 * keys, not a million.
 */
export class ListedKeys {
  private readonly keys: string[] = [];
  private total = 0;

  constructor(private readonly page: ListPage | undefined) {}

  add(key: string): void {
    const i = this.total++;
    const p = this.page;
    if (!p || (i >= p.offset && (p.limit === undefined || i < p.offset + p.limit))) this.keys.push(key);
  }

  /** The answer: `objects`, and `total` where a page was asked for. */
  result(view: QueueView): Result {
    return statusResult(view, { objects: this.keys, ...(this.page ? { total: [String(this.total)] } : {}) });
  }
}

export function listResult(entries: Iterable<QueueEntry>, view: QueueView, req: ListRequest): Result {
  if (req.groupBy !== undefined) refuseCollidingGroupBy(req.groupBy);
  if (req.groupBy === undefined || req.value !== undefined) {
    const listed = new ListedKeys(req.page);
    for (const e of entries)
      if (
        (!req.state || e.state === req.state) &&
        (req.groupBy === undefined || attributeOf(e, req.groupBy) === req.value)
      )
        listed.add(e.key);
    return listed.result(view);
  }
  const counts = new Map<string, number>();
  for (const e of entries) if (!req.state || e.state === req.state) countInto(counts, attributeOf(e, req.groupBy));
  return groupsResult(counts, view);
}

export function refuseCollidingGroupBy(groupBy: string): void {
  if (!ATTRIBUTES.has(groupBy) && /^(queuesize|status|objects|total)$/.test(groupBy))
    throw new BadInputError(`groupby '${groupBy}' collides with a response field`);
}

/** Adds `n` to a value's count (groupby answers). */
export function countInto(counts: Map<string, number>, value: string, n = 1): void {
  counts.set(value, (counts.get(value) ?? 0) + n);
}

/** A groupby answer: the count of each value. */
export function groupsResult(counts: Map<string, number>, view: QueueView): Result {
  const groups: Record<string, string[]> = {};
  for (const [v, n] of counts)
    if (!/^(queuesize|status|__proto__|constructor|prototype)$/.test(v)) groups[v] = [String(n)];
  return statusResult(view, groups);
}

export function fetchResult(entry: QueueEntry, view: QueueView): Result {
  const data = Object.assign(emptyMap(), entry.message.Data, {
    key: [entry.key],
    channel: [entry.channel],
    mode: [entry.mode],
    class: [entry.message.Class],
    operation: [entry.message.Operation],
    state: [entry.state],
    attempts: [String(entry.attempts)],
    created: [entry.createdAt],
    due: [new Date(entry.dueAt).toISOString()],
    ...(entry.priority !== undefined ? { priority: [String(entry.priority)] } : {}),
    ...(entry.dedupKey !== undefined ? { idempotency_key: [entry.dedupKey], dedup_mode: [entry.dedupMode!] } : {}),
    ...(entry.endedAt !== undefined ? { ended: [entry.endedAt] } : {}),
    ...(entry.deadReason !== undefined ? { deadletter_reason: [entry.deadReason] } : {}),
  });
  return success(statusData(view, data), [entry]);
}
