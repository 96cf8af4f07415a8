/**
 * What the queue pages and GET /api/queues show, read with the queue's commands: `status` for the
 * counts, `list` (with `state`, `groupby` + `list`, `older_than` / `newer_than`, and the page's
 * `list_offset` / `list_limit`) for the keys of the page and the count of all that match a search,
 * `fetch` for each entry of the page shown, `schedules`. The queue answers keys only, so a page
 * fetches its (at most PAGE_SIZE, paged-search.ts) entries one by one.
 */
import { HiveError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import type { Attempt } from '../../actors/queue/entry.js';
import type { BreakerView } from '../../actors/queue/breaker.js';
import type { ConsoleService, ConsoleSources } from './sources.js';
import { queueCommand, queueNames, queueNamed } from './queue-commands.js';
import { readPage, readSearch } from './paged-search.js';

export const ENTRY_STATES = ['waiting', 'scheduled', 'retrying', 'dead', 'done'] as const;

/** A queue's failed answer, carrying its Code: the console answers with the queue's own Code. */
class QueueAnswerError extends HiveError {
  override readonly name = 'QueueAnswerError';
  constructor(
    override readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The answer when it is a success, else its Code as a typed error naming what was read. */
export function ok(result: Result, what: string): Result {
  if (result.Code >= 200 && result.Code < 300) return result;
  throw new QueueAnswerError(result.Code, `${what}: ${result.Message}`);
}

const first = (r: Result, field: string): string => r.Data[field]?.[0] ?? '';

export interface QueueSummary {
  name: string;
  /** The channel it listens on. */
  channel: string;
  /** Where its entries go unless they name a channel (DefaultChannel). */
  target: string;
  status: string;
  size: number;
  counts: Record<(typeof ENTRY_STATES)[number], number>;
  /** BatchSize above 1 (README, Batches): the settings, the batch deliveries since start and the entries gathering now. */
  batches?: { size: number; windowMs: number; deliveries: number; entries: number; gathering: number };
}

/** The batch settings and figures of a queue that delivers in batches; undefined for one that does not. */
function batchesOf(queue: ConsoleService): QueueSummary['batches'] {
  const size = Number(queue.config.BatchSize ?? 1);
  if (!(size > 1)) return undefined;
  const figures = queue.status();
  const figure = (name: string): number => (typeof figures[name] === 'number' ? figures[name] : 0);
  return {
    size,
    windowMs: Number(queue.config.BatchWindow ?? 0),
    deliveries: figure('batches'),
    entries: figure('batchedEntries'),
    gathering: figure('batchGathering'),
  };
}

export async function queueSummary(sources: ConsoleSources, queue: ConsoleService): Promise<QueueSummary> {
  const r = ok(await queueCommand(sources, queue, 'status'), `status of queue ${queue.name}`);
  const counts = Object.fromEntries(ENTRY_STATES.map((s) => [s, Number(first(r, s) || 0)])) as QueueSummary['counts'];
  const batches = batchesOf(queue);
  return {
    name: queue.name,
    channel: queue.channel,
    target: String(queue.config.DefaultChannel ?? ''),
    status: first(r, 'status'),
    size: Number(first(r, 'queuesize') || 0),
    counts,
    ...(batches ? { batches } : {}),
  };
}

export function allSummaries(sources: ConsoleSources): Promise<QueueSummary[]> {
  return Promise.all(queueNames(sources).map((n) => queueSummary(sources, queueNamed(sources, n))));
}

/** A search of the queue page (all optional): by key, or by state, reason, age and a Data field's value. */
export interface EntrySearch {
  state: string;
  key?: string;
  reason?: string;
  field?: string;
  value?: string;
  olderThan?: string;
  newerThan?: string;
  page: number;
}

/** Reads a search from query parameters; a bad one is 400 naming it. */
export function searchOf(params: URLSearchParams): EntrySearch {
  return readSearch(params, ENTRY_STATES, 'waiting', [
    ['key', 'key'],
    ['reason', 'reason'],
    ['field', 'field'],
    ['value', 'value'],
    ['older_than', 'olderThan'],
    ['newer_than', 'newerThan'],
  ]);
}

/** One entry as the console shows it. */
export interface EntryView {
  key: string;
  state: string;
  channel: string;
  mode: string;
  class: string;
  operation: string;
  attempts: number;
  /** 0 to 9, higher delivered first (README, Priorities and fairness). */
  priority: number;
  created: string;
  due: string;
  ended: string;
  reason: string;
  data: Record<string, string[]>;
  control: Record<string, string[]>;
  history: Attempt[];
  replayedAt: string[];
}

const ATTRIBUTES = new Set([
  'key',
  'channel',
  'mode',
  'class',
  'operation',
  'state',
  'attempts',
  'priority',
  'created',
  'due',
  'ended',
  'deadletter_reason',
  'queuesize',
  'status',
  ...ENTRY_STATES,
]);

function entryOf(r: Result): EntryView {
  const stored = (r.List?.[0] ?? {}) as {
    message?: { Data?: Record<string, string[]>; Control?: Record<string, string[]> };
    history?: Attempt[];
    replayedAt?: string[];
  };
  const data = stored.message?.Data ?? Object.fromEntries(Object.entries(r.Data).filter(([k]) => !ATTRIBUTES.has(k)));
  return {
    key: first(r, 'key'),
    state: first(r, 'state'),
    channel: first(r, 'channel'),
    mode: first(r, 'mode'),
    class: first(r, 'class'),
    operation: first(r, 'operation'),
    attempts: Number(first(r, 'attempts') || 0),
    priority: Number(first(r, 'priority') || 0),
    created: first(r, 'created'),
    due: first(r, 'due'),
    ended: first(r, 'ended'),
    reason: first(r, 'deadletter_reason'),
    data,
    control: stored.message?.Control ?? {},
    history: stored.history ?? [],
    replayedAt: stored.replayedAt ?? [],
  };
}

export async function fetchEntry(sources: ConsoleSources, queue: ConsoleService, key: string): Promise<EntryView> {
  return entryOf(ok(await queueCommand(sources, queue, 'fetch', { key }), `entry ${key}`));
}

export interface EntryPage {
  search: EntrySearch;
  total: number;
  pages: number;
  entries: EntryView[];
}

/** The keys a search matches (the queue's `list`), then the entries of the page asked for. */
export async function searchEntries(
  sources: ConsoleSources,
  queue: ConsoleService,
  search: EntrySearch,
): Promise<EntryPage> {
  const control: Record<string, string> = { state: search.state };
  if (search.reason !== undefined) Object.assign(control, { groupby: 'deadletter_reason', list: search.reason });
  else if (search.field !== undefined) Object.assign(control, { groupby: search.field, list: search.value ?? '' });
  if (search.olderThan !== undefined) control.older_than = search.olderThan;
  if (search.newerThan !== undefined) control.newer_than = search.newerThan;
  const page = await readPage(
    search,
    (name, c) => queueCommand(sources, queue, name, c),
    { control, countField: 'total', ok: (r) => ok(r, `list of queue ${queue.name}`) },
    entryOf,
  );
  return { search, total: page.total, pages: page.pages, entries: page.items };
}

/** The dead entries per dead-letter reason (`list` by state dead, grouped by deadletter_reason), most first. */
export async function deadReasons(
  sources: ConsoleSources,
  queue: ConsoleService,
): Promise<Array<{ reason: string; count: number }>> {
  const r = ok(
    await queueCommand(sources, queue, 'list', { state: 'dead', groupby: 'deadletter_reason' }),
    `dead-letter reasons of queue ${queue.name}`,
  );
  const fields = new Set<string>(['queuesize', 'status', ...ENTRY_STATES]);
  return Object.entries(r.Data)
    .filter(([k]) => !fields.has(k))
    .map(([reason, v]) => ({ reason, count: Number(v[0] ?? 0) }))
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}

export interface ScheduleView {
  name: string;
  cron: string;
  tz: string;
  next: string;
  last_fired: string;
  fired: number;
}

export async function schedulesOf(sources: ConsoleSources, queue: ConsoleService): Promise<ScheduleView[]> {
  const r = ok(await queueCommand(sources, queue, 'schedules'), `schedules of queue ${queue.name}`);
  return (r.List ?? []) as ScheduleView[];
}

/** The queue's circuit breakers (its `breaker` command, `status`): every channel's that has one. */
export async function breakersOf(sources: ConsoleSources, queue: ConsoleService): Promise<BreakerView[]> {
  const r = ok(await queueCommand(sources, queue, 'breaker', { breaker: 'status' }), `breakers of queue ${queue.name}`);
  return (r.List ?? []) as BreakerView[];
}
