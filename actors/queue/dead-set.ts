/**
 * The commands on kept entries (kept.ts), run inside the queue actor (command-runner.ts hands them
 * here): list with state dead or done, fetch of a kept key, replay and purge. Dead entries still
 * being handed to their dead-letter target are in memory and count as dead too. Replay and purge
 * read the store and return a promise that keeps the actor until they are done (as a fan-out does):
 * nothing else changes the entries or the counts meanwhile, so what is read is what is replayed or
 * purged. A `list` of kept entries changes nothing: it is read off the actor's turn, a page from the
 * store's index (KeptEntries.page), so a console paging a large dead set never holds up enqueues.
 */
import { BadInputError, NotFoundError, StorageFullError, codeOf, describeError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import { resultFromError } from '../../protocol/message.js';
import type { QueueCommand } from './command-parser.js';
import { allowedChannel } from './command-parser.js';
import type { QueueEntry } from './entry.js';
import { EntryState, fromStored, putOp } from './entry.js';
import type { AgeFilter, KeptFilter } from './kept.js';
import { endedAtOf, isKeptState, matchesAgeAndGroup } from './kept.js';
import type { KeptCommand, ReplayEdits } from './kept-commands.js';
import type { QueueCore, QueueState } from './queue-core.js';
import type { QueueView } from './responses.js';
import {
  ListedKeys,
  attributeOf,
  countInto,
  fetchResult,
  groupsResult,
  listResult,
  refuseCollidingGroupBy,
  statusResult,
} from './responses.js';
import type { StoreOp, StoredRow } from './store.js';
import { rankOf } from './priority.js';

type ListCommand = Extract<QueueCommand, { type: 'list' }>;

const hasAge = (f: AgeFilter): boolean => f.before !== undefined || f.since !== undefined;

function* addedWithin(entries: Iterable<QueueEntry>, age: AgeFilter): Iterable<QueueEntry> {
  for (const e of entries) if (matchesAgeAndGroup(e, Date.parse(e.createdAt), age)) yield e;
}

/** The parsed entries of stored rows; an unreadable one is skipped with a log line, as the entry table skips it. */
function readable(core: QueueCore, rows: StoredRow[]): QueueEntry[] {
  const out: QueueEntry[] = [];
  for (const r of rows) {
    try {
      out.push(fromStored(r.doc));
    } catch (e) {
      core.deps.log.error(`queue entry ${r.key} in the store is unreadable (${describeError(e)}); it is skipped`);
    }
  }
  return out;
}

/** Two runs of entries in seq order as one. */
function* bySeq(a: Iterable<QueueEntry>, b: QueueEntry[]): Iterable<QueueEntry> {
  let i = 0;
  for (const e of a) {
    while (i < b.length && b[i]!.seq < e.seq) yield b[i++]!;
    yield e;
  }
  while (i < b.length) yield b[i++]!;
}

/** Dead entries still in memory (being handed over) that pass the filter. */
function deadInMemory(s: QueueState, f: KeptFilter): QueueEntry[] {
  if (f.state !== EntryState.Dead) return [];
  const out: QueueEntry[] = [];
  for (const e of s.entries.ofState(EntryState.Dead)) if (matchesAgeAndGroup(e, endedAtOf(e), f)) out.push(e);
  return out;
}

/**
 * `list`: live states from memory as before (aged by when they were added), with the entries parked
 * in the store (backlog.ts) read for the answer only, not kept; dead and done from the store too.
 */
export function listEntries(
  core: QueueCore,
  s: QueueState,
  cmd: ListCommand,
  respond: (r: Result) => void,
): void | Promise<void> {
  const view = core.countedView(s);
  if (!isKeptState(cmd.state)) {
    const answer = (live: Iterable<QueueEntry>): void =>
      respond(listResult(hasAge(cmd) ? addedWithin(live, cmd) : live, view, cmd));
    const timed = cmd.state === undefined || cmd.state === EntryState.Retrying || cmd.state === EntryState.Scheduled;
    if (!timed || s.entries.parkedCount === 0) return answer(s.entries.values());
    return s.backlog
      .read('all', (key) => s.entries.has(key))
      .then((rows) => answer(bySeq(s.entries.values(), readable(core, rows))));
  }
  const filter: KeptFilter = {
    state: cmd.state,
    ...(cmd.groupBy !== undefined && cmd.value !== undefined ? { groupBy: cmd.groupBy, value: cmd.value } : {}),
    before: cmd.before,
    since: cmd.since,
  };
  // Off the actor's turn: the dead entries in memory are taken now, the store is read while the
  // actor goes on (enqueues, deliveries). A read of kept entries changes nothing, and the store
  // answers it after every write submitted before, so it sees what the actor had done by now.
  const inMemory = deadInMemory(s, filter);
  void listKept(core, cmd, filter, inMemory, view).then(respond, (e: unknown) => {
    if (codeOf(e) >= 500) core.deps.log.error(`queue list failed: ${describeError(e)}`);
    respond(resultFromError(e));
  });
}

async function listKept(
  core: QueueCore,
  cmd: ListCommand,
  filter: KeptFilter,
  inMemory: QueueEntry[],
  view: QueueView,
): Promise<Result> {
  const { store } = core.deps;
  if (cmd.groupBy !== undefined && cmd.value === undefined) {
    refuseCollidingGroupBy(cmd.groupBy);
    const counts = await store.kept.group(filter, cmd.groupBy);
    for (const e of inMemory) countInto(counts, attributeOf(e, cmd.groupBy));
    return groupsResult(counts, view);
  }
  const page = cmd.page;
  if (page) {
    // the page from the store's index; the dead entries still in memory come after the stored ones
    const { keys, total } = await store.kept.page(filter, page.offset, page.limit ?? Number.MAX_SAFE_INTEGER);
    const limit = page.limit ?? Infinity;
    const fromMemory = Math.max(0, page.offset - total);
    for (const e of inMemory.slice(fromMemory, fromMemory + Math.max(0, limit - keys.length))) keys.push(e.key);
    return statusResult(view, { objects: keys, total: [String(total + inMemory.length)] });
  }
  const listed = new ListedKeys(undefined);
  await store.kept.read(filter, false, (rows) => {
    for (const r of rows) listed.add(r.key);
  });
  for (const e of inMemory) listed.add(e.key);
  return listed.result(view);
}

/** `fetch` of a key not in memory: the kept entry, with its whole history. */
export async function fetchKept(
  core: QueueCore,
  key: string,
  view: QueueView,
  respond: (r: Result) => void,
): Promise<void> {
  const row = await core.deps.store.kept.get(key);
  if (!row) throw new NotFoundError(`no entry with key '${key}'`);
  respond(fetchResult(fromStored(row.doc), view));
}

/**
 * Makes a dead entry waiting again: attempts from 0, history kept (the replay noted in replayedAt).
 * It gets a new seq, so it queues behind what is already waiting: a replay is a new decision to
 * deliver, and replaying a backlog of dead entries must not jump ahead of work that waited first.
 */
function revive(e: QueueEntry, seq: number, now: number, edits: ReplayEdits): void {
  e.seq = seq;
  e.state = EntryState.Waiting;
  e.attempts = 0;
  e.dueAt = now;
  delete e.deadReason;
  delete e.endedAt;
  (e.replayedAt ??= []).push(new Date(now).toISOString());
  for (const [field, values] of Object.entries(edits.data)) e.message.Data[field] = values;
  if (edits.channel !== undefined) e.channel = edits.channel;
  if (edits.mode !== undefined) e.mode = edits.mode as QueueEntry['mode'];
}

/**
 * Replays dead entries: durably back among the live entries (and out of the kept ones) before they
 * are visible; `fromStore` entries count against Capacity (those in memory are there already).
 */
async function replayBatch(
  core: QueueCore,
  s: QueueState,
  batch: { entries: QueueEntry[]; fromStore: boolean; done: number },
  edits: ReplayEdits,
): Promise<void> {
  const { entries, fromStore, done } = batch;
  const { config, store, stats } = core.deps;
  if (fromStore && s.entries.size + entries.length > config.Capacity) {
    throw new StorageFullError(
      `the queue is full: ${s.entries.size} of ${config.Capacity} entries; ${done} entries were replayed, ${entries.length} more would exceed the capacity`,
    );
  }
  const now = Date.now();
  // a dead entry still in memory may be being handed to its dead-letter target: replayed, it is not
  if (!fromStore) core.cancelDeadLetter(...entries.map((e) => e.key));
  // GroupOrder: a replayed entry keeps its place in its group's order (it held the group)
  for (const e of entries) revive(e, core.deps.groups?.order ? e.seq : s.nextSeq++, now, edits);
  const ops: StoreOp[] = entries.map(putOp);
  if (fromStore) ops.push({ type: 'unkeep', keys: entries.map((e) => e.key) });
  await store.write(ops);
  if (fromStore) stats.deadKept -= entries.length;
  for (const e of entries) {
    s.entries.set(e.key, e);
    s.ready.push(rankOf(e), e.key);
  }
}

const notDead = (key: string, state: string, verb: string): BadInputError =>
  new BadInputError(`entry '${key}' is ${state}: ${verb}`);

/** `replay`: one dead entry by key (with edits), or every dead entry the filter matches. Answers `replayed`. */
export async function replay(
  core: QueueCore,
  s: QueueState,
  cmd: Extract<KeptCommand, { type: 'replay' }>,
  respond: (r: Result) => void,
): Promise<void> {
  const { target, edits } = cmd;
  if (edits.channel !== undefined) allowedChannel(core.deps.gate, edits.channel, 'channel');
  let replayed = 0;
  if (target.key !== undefined) {
    const live = s.entries.get(target.key);
    if (live && live.state !== EntryState.Dead) throw notDead(target.key, live.state, 'only dead entries are replayed');
    const row = live ? undefined : await core.deps.store.kept.get(target.key);
    if (!live && !row) throw new NotFoundError(`no entry with key '${target.key}'`);
    if (row && row.state !== EntryState.Dead) throw notDead(target.key, row.state, 'only dead entries are replayed');
    await replayBatch(core, s, { entries: [live ?? fromStored(row!.doc)], fromStore: !live, done: 0 }, edits);
    replayed = 1;
  } else {
    const inMemory = deadInMemory(s, target.filter);
    if (inMemory.length > 0) await replayBatch(core, s, { entries: inMemory, fromStore: false, done: 0 }, edits);
    replayed = inMemory.length;
    await core.deps.store.kept.read(target.filter, true, async (rows) => {
      await replayBatch(
        core,
        s,
        { entries: rows.map((r) => fromStored(r.doc)), fromStore: true, done: replayed },
        edits,
      );
      replayed += rows.length;
    });
  }
  respond(statusResult(core.view(s), { replayed: [String(replayed)] }));
}

/** `purge`: removes for good one dead or done entry by key, or every one the filter matches. Answers `purged`. */
export async function purge(
  core: QueueCore,
  s: QueueState,
  cmd: Extract<KeptCommand, { type: 'purge' }>,
  respond: (r: Result) => void,
): Promise<void> {
  const { store, stats } = core.deps;
  const { target } = cmd;
  const counter = (state: string): 'deadKept' | 'doneKept' => (state === EntryState.Dead ? 'deadKept' : 'doneKept');
  let purged = 0;
  if (target.key !== undefined) {
    const live = s.entries.get(target.key);
    if (live && live.state !== EntryState.Dead)
      throw notDead(target.key, live.state, 'purge removes dead and done entries (delete removes a live one)');
    const row = live ? undefined : await store.kept.get(target.key);
    if (!live && !row) throw new NotFoundError(`no entry with key '${target.key}'`);
    if (live) {
      s.entries.delete(target.key);
      core.cancelDeadLetter(target.key);
    }
    await store.write([live ? { type: 'remove', key: target.key } : { type: 'unkeep', keys: [target.key] }]);
    if (row) stats[counter(row.state)]--;
    purged = 1;
  } else {
    const inMemory = deadInMemory(s, target.filter);
    for (const e of inMemory) s.entries.delete(e.key);
    core.cancelDeadLetter(...inMemory.map((e) => e.key));
    if (inMemory.length > 0) await store.write(inMemory.map((e) => ({ type: 'remove', key: e.key })));
    const removed = await store.kept.purge(target.filter);
    stats[counter(target.filter.state)] -= removed;
    purged = inMemory.length + removed;
  }
  respond(statusResult(core.view(s), { purged: [String(purged)] }));
}
