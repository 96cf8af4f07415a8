/**
 * The durable queue actor (a durable-state actor:
 * docs/ARCHITECTURE.md, The life of one queue entry). It owns the entries; every change a caller is
 * answered about is written to the store and fsynced first. An added entry is invisible to delivery
 * until its write is committed, so nothing is delivered that a crash could still lose. Deliveries,
 * retry timers and dead-letter hand-overs are done by its sibling actors, which report back here;
 * if the actor itself crashes it is restarted and reloads the store.
 *
 * Messages are handled synchronously (a promise only while the store loads or a template fan-out
 * renders): every message of the hot path — add, committed, outcome — then costs no promise and no
 * extra microtask turn in the runtime.
 */
import { Code, isSuccessCode } from '../../protocol/codes.js';
import { codeOf, describeError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import { failure, resultFromError } from '../../protocol/message.js';
import type { ActorRef, ParentRef, Runtime } from '../../supervisors/runtime.js';
import { parseCommand } from './command-parser.js';
import { EntryState, isScheduled } from './entry.js';
import { runCommand } from './command-runner.js';
import type { QueueDeps, QueueMsg, QueueState } from './queue-core.js';
import { QueueCore, emptyQueueState } from './queue-core.js';
import { fireDue } from './schedule-firing.js';
import { GroupGate } from './groups.js';
import { assertNever } from '../../protocol/never.js';
import { sweepKept } from './retention.js';
import type { StateCounts } from './state-counts.js';
import { stateCounts } from './state-counts.js';
import { pageNeedOf } from './backlog.js';
import { rankOf } from './priority.js';
import { inMessageTrace, runInScope } from '../observe/trace-scope.js';
import { batchOutcome } from './batch-delivery.js';

export type { FanOut, QueueDeps, QueueMsg, QueueStats } from './queue-core.js';

/**
 * Spawns the queue actor. `countsReader` is handed, at every (re)start, a reader of the entries per
 * state of the state now current: the status figures read it when asked (the console charts them),
 * so nothing is counted per message.
 */
export function spawnQueueActor(
  runtime: Runtime,
  parent: ParentRef,
  deps: QueueDeps,
  countsReader?: (read: () => StateCounts) => void,
): ActorRef<QueueMsg> {
  const core = new QueueCore(runtime, deps);
  const { config, log } = deps;

  /** After every message: start what can be delivered, publish the figures. */
  const settle = (s: QueueState, self: ActorRef<QueueMsg>): QueueState => {
    core.pump(s, self);
    s.schedules.arm(() => runtime.tell(self, { type: 'schedule-due' }));
    s.backlog.arm(s.entries.parkedCount, () => runtime.tell(self, { type: 'page-in' }));
    core.refresh(s);
    return s;
  };

  /** A command's failure (thrown, or from its fan-out) is the caller's answer; 5xx are logged too. */
  const answerFailure = (respond: (r: Result) => void) => (e: unknown) => {
    if (codeOf(e) >= 500) log.error(`queue command failed: ${describeError(e)}`);
    respond(resultFromError(e));
  };

  /** Runs `fn` in the trace of the entry `key` (if still held): its lines carry the entry's trace_id. */
  const inEntryTrace = (s: QueueState, key: string, fn: () => void): void => {
    const e = s.entries.get(key);
    if (e) inMessageTrace(e.message, fn);
    else fn();
  };

  const handle = (s: QueueState, msg: QueueMsg, self: ActorRef<QueueMsg>): QueueState | Promise<QueueState> => {
    switch (msg.type) {
      case 'delivery': {
        const { delivery, trace } = msg;
        // An execute is acknowledged by the command's answer, not on receipt: an added entry only
        // once it is durable, and a refusal (a full store, a bad control) is answered instead of a
        // false acknowledgement. The acknowledgement itself is what it always was.
        const respond =
          delivery.mode === 'execute'
            ? (r: Result): void => (isSuccessCode(r.Code) ? delivery.ack() : delivery.respond(r))
            : (r: Result): void => delivery.respond(r);
        // the command's lines (and a failure's, after a fan-out's await too) are in the message's trace
        const failed = (e: unknown): void => runInScope(trace, () => answerFailure(respond)(e));
        let pending: void | Promise<void> = undefined;
        try {
          const cmd = parseCommand(delivery.message, config);
          // entries the command needs that are parked in the store come in first (backlog.ts)
          const need = s.entries.parkedCount > 0 ? pageNeedOf(cmd) : undefined;
          const run = (): void | Promise<void> =>
            runInScope(trace, () => runCommand(core, s, self, { cmd, message: delivery.message, respond }));
          pending = need ? core.pageIn(s, need).then(run) : run();
        } catch (e) {
          failed(e);
        }
        // a fan-out keeps the actor until its entries are added, so entries keep their arrival order
        if (pending) return pending.catch(failed).then(() => settle(s, self));
        break;
      }
      case 'committed': {
        const now = Date.now();
        const adopt = msg.adopt ?? [];
        for (const committed of adopt.length > 0 ? msg.entries.concat(adopt) : msg.entries) {
          let e = s.entries.get(committed.key);
          // added before a restart, committed after the store was reloaded: it is durable, so it is ours
          // (unless it is due beyond the horizon: then the store holds it until its page-in, as a parked
          // entry); so is a replaced entry whose first write failed but whose replacement is stored
          const ours =
            msg.generation !== s.generation || (committed.state === EntryState.Pending && adopt.includes(committed));
          if (!e && ours && !(isScheduled(committed, now) && committed.dueAt > s.backlog.parkedAfter))
            s.entries.set(committed.key, (e = committed));
          if (e?.state !== EntryState.Pending) continue;
          deps.stats.added++;
          if (isScheduled(e, now)) {
            // the retry scheduler's timer serves delayed entries too: one timer for every due time
            e.state = EntryState.Scheduled;
            runtime.tell(deps.retry(), { type: 'schedule', key: e.key, dueAt: e.dueAt });
          } else {
            e.state = EntryState.Waiting;
            s.ready.push(rankOf(e), e.key);
          }
        }
        for (const seen of msg.seen) {
          if (msg.generation !== s.generation) s.dedup.adopt(seen);
          seen.committed();
        }
        msg.reply();
        break;
      }
      case 'commit-failed': {
        // the line about one entry carries its trace (read before the entry goes)
        const one = msg.keys.length === 1 ? s.entries.get(msg.keys[0]!) : undefined;
        for (const key of msg.keys) s.entries.delete(key);
        for (const seen of msg.seen) {
          s.dedup.forget(seen);
          seen.failed(msg.error);
        }
        const line = (): void =>
          log.error(
            `queue could not store ${msg.keys.length} entr${msg.keys.length === 1 ? 'y' : 'ies'}: ${describeError(msg.error)}`,
          );
        if (one) inMessageTrace(one.message, line);
        else line();
        // a full store (507) and a store that cannot answer now (503: its stream has no leader, or
        // another node holds the queue — a fenced write) tell the client what to do: try again later or
        // elsewhere, nothing was stored; anything else is the queue's own failure (500)
        const code = codeOf(msg.error);
        msg.reply(
          failure(
            code === Code.InsufficientStorage || code === Code.Unavailable ? code : Code.ServiceError,
            `the entry was not stored: ${describeError(msg.error)}`,
          ),
        );
        break;
      }
      case 'outcome': {
        // what the outcome logs (dropped, kept dead, a retry) is about the entry: in its trace
        const retrying = (key: string, result: Result): void => {
          const e = s.entries.get(key);
          if (e?.state === EntryState.Retrying)
            log.debug(
              `entry ${e.key} for '${e.channel}' failed (${result.Code} ${result.Message}) at attempt ${e.attempts} of ${e.requeueCount + 1}; retrying at ${new Date(e.dueAt).toISOString()}`,
            );
        };
        if (msg.batch) {
          batchOutcome(
            core,
            s,
            self,
            { batch: msg.batch, result: msg.result, durationMs: msg.durationMs },
            (key, result, fn) =>
              inEntryTrace(s, key, () => {
                fn();
                retrying(key, result);
              }),
          );
          break;
        }
        inEntryTrace(s, msg.key, () => {
          core.outcome(s, msg.key, self, { result: msg.result, durationMs: msg.durationMs });
          retrying(msg.key, msg.result);
        });
        break;
      }
      case 'due': {
        const now = Date.now();
        for (const key of msg.keys) {
          const e = s.entries.get(key);
          // gone (deleted, cleared) or already delivered (stepped): the timer has nothing left to do
          if (e?.state !== EntryState.Retrying && e?.state !== EntryState.Scheduled) continue;
          // an earlier timer of an entry that got a later time since (stepped, then failed again)
          if (e.dueAt > now) {
            runtime.tell(deps.retry(), { type: 'schedule', key, dueAt: e.dueAt });
            continue;
          }
          // paused or not, it waits now; a paused queue delivers it on resume
          e.state = EntryState.Waiting;
          s.ready.push(rankOf(e), key);
        }
        break;
      }
      case 'retry-restarted':
        for (const { key, dueAt } of s.entries.timed()) runtime.tell(deps.retry(), { type: 'schedule', key, dueAt });
        break;
      case 'dead-lettered': {
        const e = s.entries.get(msg.key);
        if (e?.state === EntryState.Dead) {
          s.entries.delete(msg.key);
          deps.stats.deadLettered++;
          core.persist([core.retire(e, EntryState.Dead)]);
          core.deadLeft(s, msg.key);
        }
        break;
      }
      case 'dead-letter-gave-up':
        inEntryTrace(s, msg.key, () => core.gaveUpDeadLetter(s, msg.key, msg.tries, msg.last));
        break;
      case 'dead-letter-failed': {
        const e = s.entries.get(msg.key);
        if (e?.state === EntryState.Dead) core.sendDeadLetter(e, self);
        break;
      }
      case 'breaker-due':
        deps.breakers?.halfOpen(msg.channel, core.release(s));
        break;
      case 'pump':
        break;
      case 'flush':
        msg.reply();
        break;
      case 'schedule-due':
        fireDue(core, s, self);
        break;
      case 'sweep': {
        // the idempotency keys past DedupWindow go on this timer too, so an idle queue drops them as well
        const swept = s.dedup.sweep(Date.now());
        if (swept) core.persist([swept]);
        return sweepKept(core, self).then(() => settle(s, self));
      }
      case 'page-in':
        return core.advanceHorizon(s).then(
          () => settle(s, self),
          (e: unknown) => {
            s.backlog.postpone(Date.now());
            log.error(`queue could not read entries due soon from the store: ${describeError(e)}`);
            return settle(s, self);
          },
        );
      default:
        assertNever(msg, 'queue message');
    }
    return settle(s, self);
  };

  let generation = 0;
  return runtime.spawn<QueueState, QueueMsg>(parent, {
    name: 'queue',
    init: (ctx) => {
      runtime.tell(ctx.self, { type: 'pump' });
      // a group's next rate token wakes the actor by a pump
      const groups = deps.groups && new GroupGate(deps.groups, () => runtime.tell(ctx.self, { type: 'pump' }));
      // GroupOrder holds a group by its retrying entries, so every one of them is in memory: no paging
      const s = emptyQueueState({
        generation: ++generation,
        paused: config.StartPaused,
        log,
        dedupWindowMs: config.DedupWindow,
        store: deps.store,
        pageHorizonMs: deps.groups?.order ? 0 : config.PageHorizon,
        groups,
        batches: deps.batches,
      });
      // a fresh state reloads every entry as waiting: what the breakers held is found again as it comes up
      deps.breakers?.forgetHeld();
      deps.breakers?.setWake((channel) => runtime.tell(ctx.self, { type: 'breaker-due', channel }));
      countsReader?.(() => stateCounts(s.entries, deps.stats));
      return s;
    },
    // the first message after a start or restart loads the store; every other message waits for it
    receive: (s, msg, ctx) => (s.loaded ? handle(s, msg, ctx.self) : core.load(s).then(() => handle(s, msg, ctx.self))),
    // a stopped queue fires nothing more (after a restart the old timer wakes the new state once, for nothing)
    afterStop: (s) => {
      s.schedules.stop();
      s.backlog.stop();
      s.batches?.stop();
    },
  });
}
