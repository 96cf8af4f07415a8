/**
 * The queue actor's state and the life of an entry in it: loading the store, adding entries (stored
 * first, visible once durable), starting deliveries and taking their outcomes (remove, retry, dead
 * letter). The actor (queue-actor.ts) routes messages here; commands are in command-runner.ts. Kept
 * apart from the actor so each file holds one concept; all of it runs inside the queue actor.
 */
import { randomUUID } from 'node:crypto';
import type { ChannelGate } from '../../config/allowed-channels.js';
import { RetryOn } from '../../config/queue.js';
import { isRetryableCode, isSuccessCode } from '../../protocol/codes.js';
import { StorageFullError, describeError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { resultFromError } from '../../protocol/message.js';
import type { Logger } from '../observe/logger.js';
import { isUnserved } from '../hive/transport.js';
import { onFailure } from '../../supervisors/undelivered.js';
import type { ActorRef, Runtime } from '../../supervisors/runtime.js';
import type { DeliveryMsg } from '../service/context.js';
import type { QueueConfig } from './command-parser.js';
import { entrySettings, passedControls } from './command-parser.js';
import type { SeenKey } from './dedup.js';
import { DedupKeys } from './dedup.js';
import { MAX_SCHEDULE_MS, notBeforeOf } from './delay.js';
import { priorityOf, rank, rankOf, storedPriority } from './priority.js';
import type { ReplaceMode } from './debounce.js';
import { LiveKeys, keyedAddOf } from './debounce.js';
import { applyKeyed, newKeyedEntries, splitKeyed } from './keyed-add.js';
import type { DeadLetterMsg, DeadLetteredMsg } from './dead-letter.js';
import type { DeliverMsg, OutcomeMsg } from './delivery.js';
import { deliver } from './delivery.js';
import type { QueueEntry } from './entry.js';
import { EntryState, putOp } from './entry.js';
import { EntryTable, StoredEntry } from './entry-table.js';
import type { GroupGate, GroupLimits } from './groups.js';
import { MinHeap } from './heap.js';
import { statusResult } from './responses.js';
import type { DueMsg, RetryMsg } from './retry.js';
import { ScheduleBook } from './schedules.js';
import type { KeptState } from './kept.js';
import { keepOp } from './kept.js';
import type { QueueView } from './responses.js';
import { stateCounts } from './state-counts.js';
import type { QueueStore, StoreOp, StoredRow } from './store.js';
import type { PageNeed } from './store-paging.js';
import { Backlog } from './store-paging.js';
import { retryWaitMs } from './requeue-schedule.js';
import type { Breakers, Release } from './breaker.js';
import type { BatchSettings } from './batches.js';
import { BatchBuffers } from './batches.js';

/** Renders the queue template for one request: the entries it adds. */
export type FanOut = (request: Message, define: string) => Promise<Message[]>;

/** Messages of the queue actor. */
export type QueueMsg =
  | DeliveryMsg
  | OutcomeMsg
  | DueMsg
  | DeadLetteredMsg
  /** A dead-letter hand-over could not even be started (the dead-letter actor failed): try again later. */
  | { type: 'dead-letter-failed'; key: string }
  /** Writes of added entries are durable: make them visible and answer the caller. */
  | {
      type: 'committed';
      entries: QueueEntry[];
      seen: SeenKey[];
      generation: number;
      reply: () => void;
      adopt?: QueueEntry[];
    }
  /** Writes of added entries failed: forget them (and their idempotency keys) and answer the caller with the error. */
  | { type: 'commit-failed'; keys: string[]; seen: SeenKey[]; error: unknown; reply: (r: Result) => void }
  /** Start deliveries if there is room (sent at start and whenever something may have become due). */
  | { type: 'pump' }
  /** Answered once every earlier message is handled (the store is loaded): drain waits for it. */
  | { type: 'flush'; reply: () => void }
  /** A circuit breaker's BreakerOpenFor is over: half-open it (breaker.ts). */
  | { type: 'breaker-due'; channel: string }
  /** The schedules' timer went off: fire the schedules that are due (schedule-firing.ts). */
  | { type: 'schedule-due' }
  /** Remove kept entries past their retention (retention.ts). */
  | { type: 'sweep' }
  /** The horizon of parked entries is near: page in those due soon (backlog.ts). */
  | { type: 'page-in' };

export interface QueueDeps {
  config: QueueConfig;
  /** AllowedChannels, compiled once at start. */
  gate: ChannelGate;
  store: QueueStore;
  log: Logger;
  delivery: () => ActorRef<DeliverMsg>;
  retry: () => ActorRef<RetryMsg>;
  deadLetter: () => ActorRef<DeadLetterMsg>;
  fanOut: FanOut | undefined;
  /** Live figures shared with the status page. */
  stats: QueueStats;
  /** GroupBy with its limits (groups.ts), checked at start; undefined: no group limits. */
  groups?: GroupLimits | undefined;
  /** The keys being delivered now, kept up to date for the holder's lease (Store jetstream: queue-holder.ts). */
  inFlight?: Set<string> | undefined;
  /** The circuit breakers per target channel (breaker.ts); they outlive a restart of the queue actor. */
  breakers?: Breakers | undefined;
  /** Entries the previous holder of the queue was delivering: not delivered again before `until` (queue-holder.ts). */
  held?: { keys: readonly string[]; until: number } | undefined;
  /** BatchSize and BatchWindow (batches.ts), checked at start; undefined: no batches. */
  batches?: BatchSettings | undefined;
  /** How batches are started (batch-delivery.ts: `batching`), given with `batches`. */
  batching?: Batching | undefined;
}

/**
 * Batch delivery (batch-delivery.ts), given to the core by the queue's start rather than imported: the
 * batches use the core, so the core reaching for them would make the two files import each other.
 */
export interface Batching {
  pump(core: QueueCore, s: QueueState, b: BatchBuffers, self: ActorRef<QueueMsg>): void;
  start(core: QueueCore, s: QueueState, entries: readonly QueueEntry[], self: ActorRef<QueueMsg>): void;
}

/** How one delivery ended: its Result, how long it took, and the size of the batch it went in (batch-delivery.ts). */
export interface Ended {
  result: Result;
  durationMs?: number;
  batch?: number | undefined;
}

/** How entries are added beyond their messages (QueueCore.add). */
export interface AddOptions {
  /** Made by the queue's template from one request: the answer counts them. */
  fannedOut?: boolean;
  /** A not_before every entry takes (the request's, for fanned-out entries). */
  inheritedNotBefore?: number | undefined;
  /** Writes for the same transaction, given each message's entry key (a schedule's firing). */
  alsoWrite?: ((keys: string[]) => StoreOp[]) | undefined;
}

export interface QueueStats {
  size: number;
  paused: boolean;
  /** Entries added since start (committed to the store): the console's rate in. */
  added: number;
  delivered: number;
  retried: number;
  deadLettered: number;
  /** Entries that died since start, each death once (whatever became of its hand-over): the console's dead-letter rate. */
  died: number;
  dropped: number;
  deliveringNow: number;
  /** Entries in the dead set (kept.ts), beside `dead` ones still being handed over. */
  deadKept: number;
  /** Delivered entries kept (DoneRetention). */
  doneKept: number;
  /** Idempotency keys held for the DedupWindow. */
  idempotencyKeys: number;
  /** Waiting entries a later add of their key replaces (dedup_mode replace / keep-last-if-active: debounce.ts). */
  replaceable: number;
  /** Batch deliveries started since start (BatchSize above 1: batches.ts), and the entries they carried. */
  batches: number;
  batchedEntries: number;
  /** Entries gathered in open batches, waiting for their batch to fill or its BatchWindow to pass. */
  batchGathering: number;
}

export interface QueueState {
  /** Increases with every (re)start: a commit from before a restart may be missing from the reloaded state. */
  generation: number;
  loaded: boolean;
  entries: EntryTable;
  ready: MinHeap<string>;
  paused: boolean;
  nextSeq: number;
  delivering: number;
  /** Callers of `step` waiting for their entry's outcome. */
  stepWaiters: Map<string, (r: Result) => void>;
  /** Idempotency keys of the DedupWindow. */
  dedup: DedupKeys;
  /** Cron schedules by name (schedules.ts). */
  schedules: ScheduleBook;
  /** Group limits: in-flight counts and rate tokens start afresh with the state (a restart, a reload). */
  groups: GroupGate | undefined;
  /** Which timed entries are left in the store (backlog.ts). */
  backlog: Backlog;
  /** The idempotency keys of replace-mode entries (debounce.ts). */
  live: LiveKeys;
  /** BatchSize above 1: the open batches (batches.ts); undefined: entries go one by one. */
  batches: BatchBuffers | undefined;
  /** Batches in flight (their outcome not in yet): DeliveryConcurrency counts these when batching. */
  flights: Set<number>;
}

/** What a queue's state starts from: its generation (one per start of the actor), whether it starts paused, and what it is built with. */
export interface StateStart {
  generation: number;
  paused: boolean;
  log: Logger;
  dedupWindowMs: number;
  store: QueueStore;
  pageHorizonMs: number;
  groups?: GroupGate | undefined;
  batches?: BatchSettings | undefined;
}

export function emptyQueueState(start: StateStart): QueueState {
  const { generation, paused, log, dedupWindowMs, store, pageHorizonMs, groups, batches } = start;
  const entries = new EntryTable((key, e) =>
    log.error(`queue entry ${key} in the store is unreadable (${e.message}); it is skipped`),
  );
  return {
    generation,
    loaded: false,
    entries,
    ready: new MinHeap<string>(),
    paused,
    nextSeq: 1,
    delivering: 0,
    stepWaiters: new Map(),
    dedup: new DedupKeys(dedupWindowMs),
    schedules: new ScheduleBook(),
    groups,
    backlog: new Backlog(store, pageHorizonMs),
    live: new LiveKeys(),
    batches: batches && new BatchBuffers(batches),
    flights: new Set(),
  };
}

export class QueueCore {
  /** RetryOn any (the spec): every failure is retried; otherwise only those isRetryableCode accepts. */
  private readonly retriesEveryFailure: boolean;
  /** Whether dead / delivered entries are kept (DeadRetention, DoneRetention above 0), else removed. */
  readonly keepsDead: boolean;
  private readonly keepsDone: boolean;
  private released: { state: QueueState; fn: Release } | undefined;
  /** The longest `debounce` (debounce.ts) and how the 400 says it: within PageHorizon when the store pages, as a restart parks entries due beyond it. */
  private readonly maxDebounceMs: number;
  private readonly debounceLimit: string;
  /** The next batch flight's number: counted across restarts of the state, so a flight of an earlier state never ends one of this state. */
  nextFlight = 1;

  constructor(
    readonly runtime: Runtime,
    readonly deps: QueueDeps,
  ) {
    this.retriesEveryFailure = deps.config.RetryOn === RetryOn.Any;
    this.keepsDead = deps.config.DeadRetention > 0;
    this.keepsDone = deps.config.DoneRetention > 0;
    // GroupOrder turns paging off (queue-actor.ts): then nothing is parked
    const pages = deps.store.paging !== undefined && deps.config.PageHorizon > 0 && !deps.groups?.order;
    this.maxDebounceMs = pages ? Math.min(deps.config.PageHorizon, MAX_SCHEDULE_MS) : MAX_SCHEDULE_MS;
    this.debounceLimit = pages ? `at most the queue's PageHorizon (${deps.config.PageHorizon} ms)` : 'at most 366 days';
  }

  /** The view of status and list answers: with the entries per state. */
  countedView(s: QueueState): QueueView {
    return { ...this.view(s), counts: stateCounts(s.entries, this.deps.stats) };
  }

  /** The write for an entry that has left the live entries: kept (dead set, done) while its retention keeps any, else removed. */
  retire(e: QueueEntry, state: KeptState): StoreOp {
    if (!(state === EntryState.Dead ? this.keepsDead : this.keepsDone)) return { type: 'remove', key: e.key };
    this.deps.stats[state === EntryState.Dead ? 'deadKept' : 'doneKept']++;
    return keepOp(e, state, Date.now());
  }

  view(s: QueueState): { size: number; paused: boolean } {
    return { size: s.entries.size, paused: s.paused };
  }

  /** A write nobody waits for (a removal or retry state): a lost one only means a redelivery. */
  persist(ops: StoreOp[]): void {
    this.deps.store
      .write(ops)
      .catch((e: unknown) => this.deps.log.error(`queue store write failed: ${describeError(e)}`));
  }

  /** A write the caller is answered about once it is durable. */
  durably(ops: StoreOp[], respond: (r: Result) => void, answer: () => Result): void {
    this.deps.store.write(ops).then(
      () => respond(answer()),
      (e: unknown) => respond(resultFromError(e)),
    );
  }

  refresh(s: QueueState): void {
    const { stats } = this.deps;
    stats.size = s.entries.size;
    stats.paused = s.paused;
    stats.deliveringNow = s.delivering;
    stats.idempotencyKeys = s.dedup.size;
    stats.replaceable = s.live.size;
    if (s.batches) stats.batchGathering = s.batches.entries;
  }

  /**
   * Loads the store: entries are scheduled by their stored state and due time and stay unparsed
   * until needed (entry-table.ts); rows from before those columns existed are parsed now. A store
   * that pages keeps the entries waiting for a time beyond the horizon (backlog.ts): only counted.
   */
  async load(s: QueueState): Promise<void> {
    const { store, config, log } = this.deps;
    const horizon = s.backlog.startHorizon(Date.now());
    const meta = await store.load((rows) => {
      for (const row of rows) this.place(s, row, false);
    }, horizon);
    if (horizon !== undefined) {
      for (const { state, n } of await store.paging!.countTimedAfter(horizon)) s.entries.park(state as EntryState, n);
      // new entries' seqs must pass the parked ones' too (a seq is the row's primary key)
      s.nextSeq = Math.max(s.nextSeq, (await store.paging!.lastSeq()) + 1);
      await s.backlog.findNextDue();
    }
    s.paused = config.StartPaused || meta.get('paused') === 'true';
    const kept = await store.kept.count();
    this.deps.stats.deadKept = kept.dead;
    this.deps.stats.doneKept = kept.done;
    if (s.dedup.enabled) {
      // only the keys of the window come back; the older ones go from the store now
      const before = Date.now() - s.dedup.windowMs;
      s.dedup.load(await store.loadSeen(before));
      this.persist([{ type: 'forget-seen', before }]);
    }
    if (this.deps.held) this.holdBack(s, this.deps.held);
    await this.refreshHolds(s);
    const missed = s.schedules.load(await store.loadSchedules(), Date.now(), log);
    if (missed.length > 0) this.persist(missed);
    // a schedule's overlap counts its entries still in the queue by key: those are in memory
    await this.pageIn(s, { keys: s.schedules.list().flatMap((sc) => sc.doc.liveKeys) });
    s.loaded = true;
    const parked =
      s.entries.parkedCount > 0
        ? `, ${s.entries.parkedCount} of them due after ${new Date(horizon!).toISOString()} left in the store until then`
        : '';
    log.info(
      `queue loaded ${s.entries.size} entr${s.entries.size === 1 ? 'y' : 'ies'}${parked} and ${s.dedup.size} idempotency key(s) (${s.paused ? 'paused' : 'running'}, ${store.durable ? 'durable' : 'memory only'})`,
    );
  }

  /** Puts a stored row among the entries and schedules it by its state; `paged`: it was counted as parked. */
  private place(s: QueueState, row: StoredRow, paged: boolean): void {
    s.nextSeq = Math.max(s.nextSeq, row.seq + 1);
    const stored = new StoredEntry(row.key, row.seq, row.state as EntryState, row.dueAt ?? 0, row.doc);
    if (paged) s.entries.pageIn(stored);
    else s.entries.setStored(stored);
    // a replace-mode entry is read now, for its key (debounce.ts); every other stays unparsed
    if (row.doc.includes('"dedupKey":')) {
      const e = s.entries.get(row.key);
      if (e) s.live.opened(e);
    }
    // GroupOrder: an entry that retries or is dead holds its group (read now, for its group)
    if (s.groups?.holds && (row.state === EntryState.Retrying || row.state === EntryState.Dead)) {
      const e = s.entries.get(row.key);
      if (e) s.groups.failed(e, row.state === EntryState.Dead);
    }
    if (row.state === EntryState.Waiting) s.ready.push(rank(row.seq, storedPriority(row.doc)), row.key);
    else if ((row.state === EntryState.Retrying || row.state === EntryState.Scheduled) && row.dueAt !== null)
      this.runtime.tell(this.deps.retry(), { type: 'schedule', key: row.key, dueAt: row.dueAt });
    else {
      // dead entries are handed over now, and rows without a state column must be read to know theirs
      const e = s.entries.get(row.key);
      if (e?.state === EntryState.Waiting) s.ready.push(rankOf(e), e.key);
      else if (e?.state === EntryState.Retrying || e?.state === EntryState.Scheduled)
        this.runtime.tell(this.deps.retry(), { type: 'schedule', key: e.key, dueAt: e.dueAt });
      else if (e?.state === EntryState.Dead)
        this.runtime.tell(this.deps.deadLetter(), { type: 'dead-letter', entry: e, tries: 0 });
    }
  }

  /** Pages in what `need` names from the store (backlog.ts); nothing when no entry is parked. */
  async pageIn(s: QueueState, need: PageNeed): Promise<void> {
    if (s.entries.parkedCount === 0) return;
    for (const row of await s.backlog.read(need, (key) => s.entries.has(key))) this.place(s, row, true);
  }

  /** Moves the horizon on: the parked entries due before the new one come into memory. */
  async advanceHorizon(s: QueueState): Promise<void> {
    if (s.entries.parkedCount === 0) return;
    for (const row of await s.backlog.advance(Date.now(), (key) => s.entries.has(key))) this.place(s, row, true);
  }

  /**
   * Entries another node was delivering when it stopped holding the queue wait until `until` (its
   * last report of them plus AckWait) before they are delivered again, as a retry waits: the other
   * node's delivery may still be running at the target.
   */
  private holdBack(s: QueueState, held: { keys: readonly string[]; until: number }): void {
    if (held.until <= Date.now()) return;
    let n = 0;
    for (const key of held.keys) {
      const e = s.entries.get(key);
      if (e?.state !== EntryState.Waiting) continue;
      e.state = EntryState.Retrying;
      e.dueAt = held.until;
      this.runtime.tell(this.deps.retry(), { type: 'schedule', key, dueAt: held.until });
      n++;
    }
    if (n > 0)
      this.deps.log.info(
        `${n} entr${n === 1 ? 'y' : 'ies'} the previous holder was delivering wait until ${new Date(held.until).toISOString()} (AckWait) before being delivered again`,
      );
  }

  /**
   * `inherited`: the request's `delay` / `not_before` time, for fan-out entries that set none of
   * their own. `keyed`: the idempotency key and mode of a replace-mode entry (debounce.ts).
   */
  private newEntry(
    s: QueueState,
    message: Message,
    now: number,
    inherited: number | undefined,
    keyed?: { key: string; mode: ReplaceMode; debounceMs: number | undefined },
  ): QueueEntry {
    const settings = entrySettings(message.Control, this.deps.config, this.deps.gate);
    // a debounce is a delay counted from this add (drop mode: the control is read here; replace modes: by the caller)
    const debounceMs = keyed
      ? keyed.debounceMs
      : keyedAddOf(message.Control, this.maxDebounceMs, this.debounceLimit)?.debounceMs;
    const notBefore = debounceMs !== undefined ? now + debounceMs : (notBeforeOf(message.Control, now) ?? inherited);
    const seq = s.nextSeq++;
    const priority = priorityOf(message.Control, this.deps.config.DefaultPriority);
    return {
      key: randomUUID(),
      seq,
      ...(priority !== 0 ? { priority } : {}),
      message: {
        Class: message.Class,
        Operation: message.Operation,
        Control: passedControls(message.Control),
        Data: message.Data,
      },
      ...settings,
      attempts: 0,
      state: EntryState.Pending,
      dueAt: notBefore ?? now,
      createdAt: new Date(now).toISOString(),
      history: [],
      ...(keyed ? { dedupKey: keyed.key, dedupMode: keyed.mode } : {}),
    };
  }

  /**
   * Adds entries: stored first, visible (waiting, or scheduled until their time) and answered once
   * durable. An enqueue repeating an idempotency key of the window creates nothing (dedup.ts); its
   * answer waits until the first entry is durable. A replace-mode enqueue (debounce.ts) replaces the
   * waiting entry of its key instead, answered once the new document is durable. `alsoWrite` gets
   * the entry key of each message (a duplicate's: the first entry's) and returns writes for the same
   * transaction (a schedule's firing).
   */
  add(
    s: QueueState,
    messages: Message[],
    self: ActorRef<QueueMsg>,
    respond: (r: Result) => void,
    how: AddOptions = {},
  ): void {
    const { fannedOut = false, inheritedNotBefore, alsoWrite } = how;
    const { config, log, store } = this.deps;
    const now = Date.now();
    const split = splitKeyed(messages, this.maxDebounceMs, this.debounceLimit);
    // a replace-mode message's other controls are read before anything changes, as a new entry's are (400)
    if (split) for (const { message } of split.keyed) this.checkControls(message, now);
    const plan = s.dedup.plan(split ? split.rest : messages, now);
    const entry = (key: string): QueueEntry | undefined => s.entries.get(key);
    const adding = plan.fresh.length + (split ? newKeyedEntries(split, s.live, entry) : 0);
    if (s.entries.size + adding > config.Capacity) {
      throw new StorageFullError(
        `the queue is full: ${s.entries.size} of ${config.Capacity} entries; adding ${adding} would exceed the capacity`,
      );
    }
    const created = plan.fresh.map((f) => this.newEntry(s, f.message, now, inheritedNotBefore));
    for (const e of created) s.entries.set(e.key, e);
    const entryKeys = created.map((e) => e.key);
    const seen = s.dedup.remember(plan, entryKeys, now);
    const swept = s.dedup.sweep(now);
    const firsts = s.dedup.firsts(plan, entryKeys, now);
    const { repeated } = firsts;
    let keys = firsts.keys;
    let replaced: QueueEntry[] = [];
    if (split) {
      const make = (message: Message, key: string, mode: ReplaceMode, debounceMs: number | undefined): QueueEntry => {
        const e = this.newEntry(s, message, now, inheritedNotBefore, { key, mode, debounceMs });
        s.entries.set(e.key, e);
        return e;
      };
      const keyed = applyKeyed(split, s.live, now, {
        entry,
        make,
        reschedule: (e, before) => this.reschedule(e, before),
      });
      created.push(...keyed.created);
      replaced = keyed.replaced;
      const all = new Array<string>(messages.length);
      split.restAt.forEach((at, i) => (all[at] = keys[i]!));
      for (const [at, key] of keyed.keysAt) all[at] = key;
      keys = all;
    }
    const ops: StoreOp[] = created.map(putOp);
    for (const e of replaced) ops.push(putOp(e));
    for (const k of seen) ops.push(k);
    if (swept) ops.push(swept);
    if (alsoWrite) ops.push(...alsoWrite(keys));
    const answer = (): Result =>
      !fannedOut && created.length === 0
        ? statusResult(this.view(s), {
            key: keys,
            ...(replaced.length > 0 ? { replaced: ['true'] } : { duplicate: ['true'] }),
          })
        : statusResult(
            { size: fannedOut ? created.length : s.entries.size, paused: s.paused },
            {
              keys,
              ...(repeated.length > 0 ? { duplicates: [String(repeated.length)] } : {}),
              ...(replaced.length > 0 ? { replaced: [String(replaced.length)] } : {}),
            },
          );
    const reply = (): void =>
      void Promise.all(repeated.map((r) => r.durable)).then(
        () => respond(answer()),
        (e: unknown) => respond(resultFromError(e)),
      );
    if (config.DEBUG_TEMPLATE && fannedOut)
      for (const e of created)
        log.info(`template created entry ${e.key} for channel '${e.channel}': ${JSON.stringify(e.message)}`);
    // a replaced entry whose own first write was still under way: should that write fail, this one
    // stored it, so it is taken back in once this write is committed (queue-actor.ts, committed)
    const adopt = replaced.filter((e) => e.state === EntryState.Pending);
    if (created.length === 0 && replaced.length === 0) {
      if (ops.length > 0) this.persist(ops);
      return reply();
    }
    store.write(ops).then(
      () =>
        this.runtime.tell(self, {
          type: 'committed',
          entries: created,
          seen,
          generation: s.generation,
          reply,
          ...(adopt.length > 0 ? { adopt } : {}),
        }),
      (error: unknown) =>
        created.length > 0
          ? this.runtime.tell(self, {
              type: 'commit-failed',
              keys: created.map((e) => e.key),
              seen,
              error,
              reply: respond,
            })
          : respond(resultFromError(error)),
    );
  }

  /** Reads an entry's controls as newEntry does, for their 400 only. */
  private checkControls(message: Message, now: number): void {
    entrySettings(message.Control, this.deps.config, this.deps.gate);
    notBeforeOf(message.Control, now);
    priorityOf(message.Control, this.deps.config.DefaultPriority);
  }

  /**
   * A replaced entry's due time moved (debounce): a waiting one waits for it again. The retry
   * scheduler is told only when the time came nearer or the entry was waiting: a timer set for an
   * earlier time finds the entry not due yet and sets itself again (queue-actor.ts, due), so a burst
   * of replacements leaves one timer, not one per replacement.
   */
  private reschedule(e: QueueEntry, dueBefore: number): void {
    const wasWaiting = e.state === EntryState.Waiting;
    if (wasWaiting) e.state = EntryState.Scheduled;
    if (e.state === EntryState.Scheduled && (wasWaiting || e.dueAt < dueBefore))
      this.runtime.tell(this.deps.retry(), { type: 'schedule', key: e.key, dueAt: e.dueAt });
  }

  /** Starts deliveries while the queue runs and there is room. */
  pump(s: QueueState, self: ActorRef<QueueMsg>): void {
    if (s.batches && this.deps.batching) return this.deps.batching.pump(this, s, s.batches, self);
    if (s.groups) return this.pumpGroups(s, s.groups, self);
    while (!s.paused && s.delivering < this.deps.config.DeliveryConcurrency && s.ready.size > 0) {
      const key = s.ready.pop()!;
      const e = s.entries.get(key);
      if (!e || e.state !== EntryState.Waiting || s.live.holds(e)) continue;
      if (this.deps.breakers && !this.deps.breakers.admit(e)) continue;
      this.start(s, e, self);
    }
  }

  /** Puts a key a breaker held back into the ready heap, in its place by priority and arrival, if its entry still waits (made once per state: every outcome passes it). */
  release(s: QueueState): Release {
    if (this.released?.state !== s) {
      const fn: Release = (key) => {
        const e = s.entries.get(key);
        if (e?.state !== EntryState.Waiting) return false;
        s.ready.push(rankOf(e), key);
        return true;
      };
      this.released = { state: s, fn };
    }
    return this.released.fn;
  }

  /** With group limits the gate picks each entry, setting aside those of groups at their limit (groups.ts). */
  private pumpGroups(s: QueueState, gate: GroupGate, self: ActorRef<QueueMsg>): void {
    const { breakers } = this.deps;
    // an entry an open breaker holds is taken out of the gate's reach (breaker.ts): its group never sees it until released
    const waiting = (key: string): QueueEntry | undefined => {
      const e = s.entries.get(key);
      return e?.state === EntryState.Waiting && !breakers?.holds(e) && !s.live.holds(e) ? e : undefined;
    };
    while (!s.paused && s.delivering < this.deps.config.DeliveryConcurrency) {
      const e = gate.take(s.ready, waiting);
      if (!e) return;
      if (breakers && !breakers.admit(e)) {
        gate.finished(e.key); // a half-open breaker's probe went out meanwhile: held, its group's room given back
        continue;
      }
      this.start(s, e, self);
    }
  }

  start(s: QueueState, e: QueueEntry, self: ActorRef<QueueMsg>): void {
    // batching: a `step` too is a batch (of one), in the shape the target reads
    if (s.batches && this.deps.batching) return this.deps.batching.start(this, s, [e], self);
    e.state = EntryState.Delivering;
    e.attempts++;
    s.delivering++;
    this.deps.inFlight?.add(e.key);
    s.live.started(e);
    deliver(this.runtime, this.deps.delivery(), self, {
      type: 'deliver',
      key: e.key,
      channel: e.channel,
      mode: e.mode,
      message: e.message,
      attempt: e.attempts,
    });
  }

  /** One entry's outcome; `batch`: the size of the batch it went in (batch-delivery.ts), which its history records. */
  outcome(s: QueueState, key: string, self: ActorRef<QueueMsg>, ended: Ended): void {
    const { result, durationMs = 0, batch } = ended;
    const { config, log, stats } = this.deps;
    this.deps.inFlight?.delete(key);
    this.attemptEnded(s, key);
    const e = s.entries.get(key);
    // counted before anything else: a probe's outcome counts even if its entry was deleted while out
    this.deps.breakers?.record(
      key,
      e?.state === EntryState.Delivering ? e.channel : undefined,
      { result, durationMs },
      this.release(s),
    );
    if (!e || e.state !== EntryState.Delivering) return; // cleared or deleted meanwhile
    s.delivering--;
    // GroupOrder: a failure holds the group before its room is given back (groups.ts, failed)
    if (!isSuccessCode(result.Code)) s.groups?.failed(e, e.attempts > e.requeueCount || !this.worthRetrying(result));
    s.groups?.finished(key);
    e.history.push({
      time: new Date().toISOString(),
      duration: durationMs,
      code: result.Code,
      message: result.Message,
      ...(batch !== undefined ? { batch } : {}),
    });
    if (isSuccessCode(result.Code)) {
      s.entries.delete(key);
      stats.delivered++;
      this.persist([this.retire(e, EntryState.Done)]);
      if (config.AutoPause && s.entries.size === 0 && !s.paused) {
        s.paused = true;
        this.persist([{ type: 'meta', name: 'paused', value: 'true' }]);
        log.info('queue run completed: paused (AutoPause)');
      }
    } else if (e.attempts > e.requeueCount || !this.worthRetrying(result)) {
      const notRetryable = e.attempts <= e.requeueCount;
      e.state = EntryState.Dead;
      stats.died++;
      e.deadReason = notRetryable
        ? `${result.Code} is not retryable (RetryOn retryable); no retry after ${e.attempts} attempt(s)`
        : `no success after ${e.attempts} attempt(s)`;
      e.endedAt = new Date().toISOString();
      if (e.deadLetter === '') {
        s.entries.delete(key);
        // without a target a dead entry goes to the dead set when it keeps any: only otherwise is it dropped
        if (!this.keepsDead) stats.dropped++;
        this.persist([this.retire(e, EntryState.Dead)]);
        this.deadLeft(s, key);
        log.warn(
          `entry ${key} for '${e.channel}' ${this.keepsDead ? 'kept in the dead set' : 'dropped'} after ${e.attempts} attempt(s)${notRetryable ? ', not retryable' : ''}: ${result.Code} ${result.Message} (no dead-letter target)`,
        );
      } else {
        this.persist([putOp(e)]);
        this.sendDeadLetter(e, self);
      }
    } else {
      e.state = EntryState.Retrying;
      stats.retried++;
      // requeue_timer, doubled or not, or the requeue_schedule's step; a target's Retry-After when later
      e.dueAt = Date.now() + retryWaitMs(e, result, config.RequeueBackoff === 'exponential');
      this.persist([putOp(e)]);
      this.runtime.tell(this.deps.retry(), { type: 'schedule', key, dueAt: e.dueAt });
    }
    const waiter = s.stepWaiters.get(key);
    if (waiter) {
      s.stepWaiters.delete(key);
      waiter(
        statusResult(this.view(s), {
          key: [key],
          result_code: [String(result.Code)],
          result_message: [result.Message],
        }),
      );
    }
  }

  /** An attempt ended (outcome, or its entry deleted): a keep-last-if-active entry held behind it is ready again (debounce.ts). */
  attemptEnded(s: QueueState, key: string): void {
    const next = s.live.ended(key);
    const e = next === undefined ? undefined : s.entries.get(next);
    if (e?.state === EntryState.Waiting) s.ready.push(rankOf(e), e.key);
  }

  /**
   * Whether a failed delivery is given another attempt (attempts left aside). A channel nobody serves
   * on a NATS hive is retried: a node serving it may be restarting (transport.ts, unservedResult).
   */
  private worthRetrying(result: Result): boolean {
    return this.retriesEveryFailure || isRetryableCode(result.Code) || isUnserved(result);
  }

  /** Ends the hand-overs of these dead entries (replayed, purged, deleted): none is tried again. */
  cancelDeadLetter(...keys: string[]): void {
    if (keys.length > 0) this.runtime.tell(this.deps.deadLetter(), { type: 'cancel', keys });
  }

  /**
   * The hand-over was refused DeadLetterRetries times over: the entry stays dead, in the dead set
   * while DeadRetention keeps any (replay or purge it there), else in the queue until the next start
   * tries again. One line says so; the retries before it were not warned about one by one.
   */
  gaveUpDeadLetter(s: QueueState, key: string, tries: number, last: string): void {
    const e = s.entries.get(key);
    if (e?.state !== EntryState.Dead) return;
    if (this.keepsDead) {
      s.entries.delete(key);
      this.persist([this.retire(e, EntryState.Dead)]);
      this.deadLeft(s, key);
    }
    this.deps.log.warn(
      `dead-letter target '${e.deadLetter}' refused entry ${key} ${tries} time(s), last ${last}; no more tries: it stays dead${this.keepsDead ? ' in the dead set (list, replay or purge it there)' : ' in the queue until the next start'}`,
    );
  }

  /**
   * GroupOrder: a dead entry left the live entries; kept in the dead set it holds its group from
   * there (strict), dropped it holds it no more (nothing is left to replay or purge).
   */
  deadLeft(s: QueueState, key: string): void {
    if (this.keepsDead) s.groups?.kept(key);
    else s.groups?.release(key);
  }

  /**
   * GroupOrder strict: counts the dead set's entries per group in the store, and lets go of the
   * holds of entries no longer retrying or dead (at load, after a replay or purge).
   */
  async refreshHolds(s: QueueState): Promise<void> {
    const gate = s.groups;
    if (!gate?.holds) return;
    gate.setDeadKept(
      gate.holds.order === 'strict'
        ? await this.deps.store.kept.group({ state: EntryState.Dead }, gate.limits.groupBy)
        : new Map(),
    );
    for (const key of gate.holds.keys()) {
      const e = s.entries.get(key);
      if (e?.state !== EntryState.Retrying && e?.state !== EntryState.Dead) gate.release(key);
    }
  }

  sendDeadLetter(e: QueueEntry, self: ActorRef<QueueMsg>): void {
    this.runtime.tell(
      this.deps.deadLetter(),
      onFailure({ type: 'dead-letter', entry: e, tries: 0 } as DeadLetterMsg, () =>
        setTimeout(() => this.runtime.tell(self, { type: 'dead-letter-failed', key: e.key }), 1000).unref(),
      ),
    );
  }
}
