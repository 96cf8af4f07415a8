/**
 * The durable queue actor (ARCHITECTURE §3: a durable-state actor). It owns the entries; every
 * change a caller is answered about is written to the store and fsynced first. An added entry is
 * invisible to delivery until its write is committed, so nothing is delivered that a crash could
 * still lose. Deliveries, retry timers and dead-letter hand-overs are done by its sibling actors,
 * which report back here; if the actor itself crashes it is restarted and reloads the store.
 */
import { randomUUID } from 'node:crypto';
import { Code, isSuccessCode } from '../../protocol/codes.js';
import { BadInputError, NotFoundError, StorageFullError, codeOf, describeError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { failure, resultFromError } from '../../protocol/message.js';
import type { Logger } from '../../supervisors/logger.js';
import type { ActorContext, ActorRef, ParentRef, Runtime } from '../../supervisors/runtime.js';
import type { DeliveryMsg } from '../../supervisors/service.js';
import type { QueueCommand, QueueConfig } from './commands.js';
import { entrySettings, parseCommand, passedControls } from './commands.js';
import type { DeadLetterMsg, DeadLetteredMsg } from './dead-letter.js';
import type { DeliverMsg, OutcomeMsg } from './delivery.js';
import { deliver } from './delivery.js';
import type { QueueEntry } from './entry.js';
import { EntryState, MAX_HISTORY, fromStored, toStored } from './entry.js';
import { MinHeap } from './heap.js';
import { fetchResult, listResult, statusResult } from './responses.js';
import type { DueMsg, RetryMsg } from './retry.js';
import type { QueueStore, StoreOp } from './store.js';
import { onFailure } from '../../supervisors/mailbox.js';

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
  | { type: 'committed'; entries: QueueEntry[]; generation: number; reply: () => void }
  /** Writes of added entries failed: forget them and answer the caller with the error. */
  | { type: 'commit-failed'; keys: string[]; error: unknown; reply: (r: Result) => void }
  /** Start deliveries if there is room (sent at start and whenever something may have become due). */
  | { type: 'pump' };

export interface QueueDeps {
  config: QueueConfig;
  store: QueueStore;
  log: Logger;
  delivery: () => ActorRef<DeliverMsg>;
  retry: () => ActorRef<RetryMsg>;
  deadLetter: () => ActorRef<DeadLetterMsg>;
  fanOut: FanOut | undefined;
  /** Live figures shared with the status page. */
  stats: QueueStats;
}

export interface QueueStats {
  size: number;
  paused: boolean;
  delivered: number;
  retried: number;
  deadLettered: number;
  dropped: number;
  deliveringNow: number;
}

interface QueueState {
  /** Increases with every (re)start: a commit from before a restart may be missing from the reloaded state. */
  generation: number;
  loaded: boolean;
  entries: Map<string, QueueEntry>;
  ready: MinHeap<string>;
  paused: boolean;
  nextSeq: number;
  delivering: number;
  /** Callers of `step` waiting for their entry's outcome. */
  stepWaiters: Map<string, (r: Result) => void>;
}

function assertNever(x: never): never {
  throw new Error(`unexpected queue message ${JSON.stringify(x)}`);
}

export function spawnQueueActor(runtime: Runtime, parent: ParentRef, deps: QueueDeps): ActorRef<QueueMsg> {
  const { config, store, log, stats } = deps;
  const view = (s: QueueState) => ({ size: s.entries.size, paused: s.paused });
  const persist = (ops: StoreOp[]): void => {
    store.write(ops).catch((e: unknown) => log.error(`queue store write failed: ${describeError(e)}`));
  };
  const refresh = (s: QueueState): void => {
    stats.size = s.entries.size;
    stats.paused = s.paused;
    stats.deliveringNow = s.delivering;
  };

  async function load(s: QueueState): Promise<void> {
    let unreadable = 0;
    const meta = await store.load((docs) => {
      for (const doc of docs) {
        let e: QueueEntry;
        try {
          e = fromStored(doc);
        } catch {
          unreadable++;
          continue;
        }
        s.entries.set(e.key, e);
        s.nextSeq = Math.max(s.nextSeq, e.seq + 1);
        if (e.state === EntryState.Waiting) s.ready.push(e.seq, e.key);
        else if (e.state === EntryState.Retrying) runtime.tell(deps.retry(), { type: 'schedule', key: e.key, dueAt: e.dueAt });
        else if (e.state === EntryState.Dead) runtime.tell(deps.deadLetter(), { type: 'dead-letter', entry: e, tries: 0 });
      }
    });
    const storedPaused = meta.get('paused');
    s.paused = config.StartPaused || storedPaused === 'true';
    s.loaded = true;
    if (unreadable > 0) log.error(`queue store held ${unreadable} unreadable entr${unreadable === 1 ? 'y' : 'ies'}; they were skipped`);
    log.info(`queue loaded ${s.entries.size} entr${s.entries.size === 1 ? 'y' : 'ies'} (${s.paused ? 'paused' : 'running'}, ${store.durable ? 'durable' : 'memory only'})`);
  }

  function newEntry(s: QueueState, message: Message): QueueEntry {
    const settings = entrySettings(message.Control, config);
    const seq = s.nextSeq++;
    return {
      key: randomUUID(),
      seq,
      message: { Class: message.Class, Operation: message.Operation, Control: passedControls(message.Control), Data: message.Data },
      ...settings,
      attempts: 0,
      state: EntryState.Pending,
      dueAt: Date.now(),
      createdAt: new Date().toISOString(),
      history: [],
    };
  }

  /** Adds entries: stored first, visible and answered once durable. */
  function add(s: QueueState, messages: Message[], self: ActorRef<QueueMsg>, respond: (r: Result) => void, fannedOut: boolean): void {
    if (s.entries.size + messages.length > config.Capacity) {
      throw new StorageFullError(`the queue is full: ${s.entries.size} of ${config.Capacity} entries; adding ${messages.length} would exceed the capacity`);
    }
    const created = messages.map((m) => newEntry(s, m));
    for (const e of created) s.entries.set(e.key, e);
    const keys = created.map((e) => e.key);
    if (config.DEBUG_TEMPLATE && fannedOut) for (const e of created) log.info(`template created entry ${e.key} for channel '${e.channel}': ${JSON.stringify(e.message)}`);
    store.write(created.map((e) => ({ type: 'put', key: e.key, seq: e.seq, doc: toStored(e) }))).then(
      () =>
        runtime.tell(self, {
          type: 'committed',
          entries: created,
          generation: s.generation,
          reply: () => respond(statusResult({ size: fannedOut ? created.length : s.entries.size, paused: s.paused }, { keys })),
        }),
      (error: unknown) => runtime.tell(self, { type: 'commit-failed', keys, error, reply: respond }),
    );
  }

  /** Starts deliveries while the queue runs and there is room. */
  function pump(s: QueueState, self: ActorRef<QueueMsg>): void {
    while (!s.paused && s.delivering < config.DeliveryConcurrency && s.ready.size > 0) {
      const key = s.ready.pop()!;
      const e = s.entries.get(key);
      if (!e || e.state !== EntryState.Waiting) continue;
      start(s, e, self);
    }
  }

  function start(s: QueueState, e: QueueEntry, self: ActorRef<QueueMsg>): void {
    e.state = EntryState.Delivering;
    e.attempts++;
    s.delivering++;
    deliver(runtime, deps.delivery(), self, { type: 'deliver', key: e.key, channel: e.channel, mode: e.mode, message: e.message });
  }

  function outcome(s: QueueState, key: string, result: Result, self: ActorRef<QueueMsg>): void {
    const e = s.entries.get(key);
    if (!e || e.state !== EntryState.Delivering) return; // cleared or deleted meanwhile
    s.delivering--;
    e.history.push({ time: new Date().toISOString(), code: result.Code, message: result.Message });
    if (e.history.length > MAX_HISTORY) e.history.shift();
    if (isSuccessCode(result.Code)) {
      s.entries.delete(key);
      stats.delivered++;
      persist([{ type: 'remove', key }]);
      if (config.AutoPause && s.entries.size === 0 && !s.paused) {
        s.paused = true;
        persist([{ type: 'meta', name: 'paused', value: 'true' }]);
        log.info('queue run completed: paused (AutoPause)');
      }
    } else if (e.attempts > e.requeueCount) {
      e.state = EntryState.Dead;
      e.deadReason = `no success after ${e.attempts} attempt(s)`;
      if (e.deadLetter === '') {
        s.entries.delete(key);
        stats.dropped++;
        persist([{ type: 'remove', key }]);
        log.warn(`entry ${key} for '${e.channel}' dropped after ${e.attempts} attempt(s): ${result.Code} ${result.Message} (no dead-letter target)`);
      } else {
        persist([{ type: 'put', key, seq: e.seq, doc: toStored(e) }]);
        sendDeadLetter(e, self);
      }
    } else {
      e.state = EntryState.Retrying;
      stats.retried++;
      const exponential = config.RequeueBackoff === 'exponential';
      const wait = exponential ? e.requeueTimerMs * 2 ** (e.attempts - 1) * (0.8 + Math.random() * 0.4) : e.requeueTimerMs;
      e.dueAt = Date.now() + Math.round(wait);
      persist([{ type: 'put', key, seq: e.seq, doc: toStored(e) }]);
      runtime.tell(deps.retry(), { type: 'schedule', key, dueAt: e.dueAt });
    }
    const waiter = s.stepWaiters.get(key);
    if (waiter) {
      s.stepWaiters.delete(key);
      waiter(statusResult(view(s), { key: [key], result_code: [String(result.Code)], result_message: [result.Message] }));
    }
  }

  function sendDeadLetter(e: QueueEntry, self: ActorRef<QueueMsg>): void {
    runtime.tell(
      deps.deadLetter(),
      onFailure({ type: 'dead-letter', entry: e, tries: 0 } as DeadLetterMsg, () => setTimeout(() => runtime.tell(self, { type: 'dead-letter-failed', key: e.key }), 1000).unref()),
    );
  }

  function command(s: QueueState, cmd: QueueCommand, message: Message, respond: (r: Result) => void, self: ActorRef<QueueMsg>): void | Promise<void> {
    const durably = (ops: StoreOp[], answer: () => Result): void => {
      store.write(ops).then(
        () => respond(answer()),
        (e: unknown) => respond(resultFromError(e)),
      );
    };
    switch (cmd.type) {
      case 'add':
        if (cmd.templateDefine !== undefined) {
          if (!deps.fanOut) throw new BadInputError(`template_define '${cmd.templateDefine}' needs a queue Template, and none is configured`);
          return deps.fanOut(message, cmd.templateDefine).then((created) => add(s, created, self, respond, true));
        }
        add(s, [message], self, respond, false);
        return;
      case 'status':
        respond(statusResult(view(s)));
        return;
      case 'clear': {
        const n = s.entries.size;
        s.entries.clear();
        s.ready.clear();
        s.delivering = 0;
        runtime.tell(deps.retry(), { type: 'clear' });
        durably([{ type: 'clear' }], () => statusResult(view(s), { cleared: [String(n)] }));
        return;
      }
      case 'delete': {
        const e = s.entries.get(cmd.key);
        if (e?.state === EntryState.Delivering) s.delivering--;
        s.entries.delete(cmd.key);
        durably([{ type: 'remove', key: cmd.key }], () => statusResult(view(s), { deleted: [e ? '1' : '0'], key: [cmd.key] }));
        return;
      }
      case 'pause':
      case 'resume':
        s.paused = cmd.type === 'pause';
        durably([{ type: 'meta', name: 'paused', value: String(s.paused) }], () => statusResult(view(s)));
        return;
      case 'list':
        respond(listResult(s.entries.values(), view(s), cmd));
        return;
      case 'fetch': {
        const e = cmd.key ? s.entries.get(cmd.key) : s.entries.values().next().value;
        if (!e) throw new NotFoundError(cmd.key ? `no entry with key '${cmd.key}'` : 'the queue is empty');
        respond(fetchResult(e, view(s)));
        return;
      }
      case 'step': {
        let e = cmd.key ? s.entries.get(cmd.key) : undefined;
        if (!cmd.key) for (const candidate of s.entries.values()) if (candidate.state === EntryState.Waiting || candidate.state === EntryState.Retrying) { e = candidate; break; }
        if (!e) throw new NotFoundError(cmd.key ? `no entry with key '${cmd.key}'` : 'no entry is waiting');
        if (e.state !== EntryState.Waiting && e.state !== EntryState.Retrying) throw new BadInputError(`entry '${e.key}' is ${e.state} and cannot be stepped`);
        s.stepWaiters.set(e.key, respond);
        e.state = EntryState.Waiting;
        start(s, e, self);
        return;
      }
      default:
        assertNever(cmd);
    }
  }

  let generation = 0;
  return runtime.spawn<QueueState, QueueMsg>(parent, {
    name: 'queue',
    init: (ctx) => {
      runtime.tell(ctx.self, { type: 'pump' });
      return { generation: ++generation, loaded: false, entries: new Map(), ready: new MinHeap<string>(), paused: config.StartPaused, nextSeq: 1, delivering: 0, stepWaiters: new Map() };
    },
    receive: async (s: QueueState, msg: QueueMsg, ctx: ActorContext<QueueMsg>): Promise<QueueState> => {
      // the first message after a start or restart loads the store; every other message waits for it
      if (!s.loaded) await load(s);
      const self = ctx.self;
      switch (msg.type) {
        case 'delivery': {
          const { delivery } = msg;
          delivery.ack();
          const respond = (r: Result): void => delivery.respond(r);
          try {
            const cmd = parseCommand(delivery.message, config);
            await command(s, cmd, delivery.message, respond, self);
          } catch (e) {
            if (codeOf(e) >= 500) log.error(`queue command failed: ${describeError(e)}`);
            respond(resultFromError(e));
          }
          break;
        }
        case 'committed':
          for (const committed of msg.entries) {
            let e = s.entries.get(committed.key);
            // added before a restart, committed after the store was reloaded: it is durable, so it is ours
            if (!e && msg.generation !== s.generation) s.entries.set(committed.key, (e = committed));
            if (e?.state !== EntryState.Pending) continue;
            e.state = EntryState.Waiting;
            s.ready.push(e.seq, e.key);
          }
          msg.reply();
          break;
        case 'commit-failed':
          for (const key of msg.keys) s.entries.delete(key);
          log.error(`queue could not store ${msg.keys.length} entr${msg.keys.length === 1 ? 'y' : 'ies'}: ${describeError(msg.error)}`);
          msg.reply(codeOf(msg.error) === Code.InsufficientStorage ? resultFromError(msg.error) : failure(Code.ServiceError, `the entry was not stored: ${describeError(msg.error)}`));
          break;
        case 'outcome':
          outcome(s, msg.key, msg.result, self);
          break;
        case 'due':
          for (const key of msg.keys) {
            const e = s.entries.get(key);
            if (e?.state !== EntryState.Retrying) continue;
            e.state = EntryState.Waiting;
            s.ready.push(e.seq, key);
          }
          break;
        case 'retry-restarted':
          for (const e of s.entries.values()) if (e.state === EntryState.Retrying) runtime.tell(deps.retry(), { type: 'schedule', key: e.key, dueAt: e.dueAt });
          break;
        case 'dead-lettered': {
          const e = s.entries.get(msg.key);
          if (e?.state === EntryState.Dead) {
            s.entries.delete(msg.key);
            stats.deadLettered++;
            persist([{ type: 'remove', key: msg.key }]);
          }
          break;
        }
        case 'dead-letter-failed': {
          const e = s.entries.get(msg.key);
          if (e?.state === EntryState.Dead) sendDeadLetter(e, self);
          break;
        }
        case 'pump':
          break;
        default:
          assertNever(msg);
      }
      pump(s, self);
      refresh(s);
      return s;
    },
  });
}
