/**
 * The run state machine (docs/ARCHITECTURE.md, The life of a run), driven by the flow actor
 * (flow-actor.ts) one message at a time. A run's document is written to the store and committed
 * before its next step starts; a step's attempt reports back as a `step-done` message; waits and
 * retries wait on a timer that tells `due`. After a restart every run in progress goes on at the
 * step it was at: at least once per step, never skipped.
 */
import { randomUUID } from 'node:crypto';
import { Code, isSuccessCode } from '../../protocol/codes.js';
import { parseDuration } from '../../config/values.js';
import { BadInputError, describeError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { failure, mapOf, resultFromError, success } from '../../protocol/message.js';
import type { ActorRef, Runtime } from '../../supervisors/runtime.js';
import type { HiveClient } from '../hive/client.js';
import type { Logger } from '../shared/logger.js';
import type { QueueStore, StoreOp } from '../queue/store.js';
import type { FlowDefinition, SendStep, Step, WaitStep } from './definition.js';
import type { FlowScope } from './flow-text.js';
import { holds } from './flow-text.js';
import { fallThrough } from './graph.js';
import type { AfterStore, FlowMsg } from './flow-messages.js';
import type { Run } from './run.js';
import { RunState, isFinal, putOp, runOf, stepKey } from './run.js';
import type { ChannelGate } from './step-send.js';
import { renderMap, sendStep } from './step-send.js';

/** The figures a flow's status shows beside its runs per state. */
export interface FlowStats {
  started: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  stepsSent: number;
  retried: number;
}

export interface FlowDeps {
  readonly runtime: Runtime;
  readonly hive: HiveClient;
  readonly log: Logger;
  readonly store: QueueStore;
  readonly def: FlowDefinition;
  readonly gate: ChannelGate;
  readonly maxRuns: number;
  readonly defaultTimeoutMs: number;
  readonly answerWithinMs: number;
  readonly runRetentionMs: number;
  readonly dedupWindowMs: number;
  readonly stats: FlowStats;
}

/** A caller of `call` waiting for its run to end (answered 202 with the key after AnswerWithin). */
interface Waiter {
  respond(result: Result): void;
  timer: NodeJS.Timeout;
}

/** What a run is doing in this process (never stored: a restart begins each run afresh at its step). */
interface Live {
  /** Answers of `stored` and `step-done` from before this one are stale. */
  token: number;
  sending: boolean;
  queued: boolean;
  timer: NodeJS.Timeout | undefined;
  cancelRequested: boolean;
  waiters: Waiter[];
  /** A new run's first write: its caller (execute) is answered with the key once it is durable. */
  onStored: ((ok: boolean, error?: unknown) => void) | undefined;
}

/** The longest one timer waits; a longer wait re-arms (Node's timers hold at most 2^31-1 ms). */
const MAX_TIMER_MS = 3_600_000;

export class FlowCore {
  readonly runs = new Map<string, Run>();
  private readonly live = new Map<string, Live>();
  /** Runs in line for a place (MaxRuns), oldest first. */
  private readonly ready: string[] = [];
  private sending = 0;
  private seq = 0;
  /** Idempotency keys of starts within DedupWindow → the run each started, and when. */
  readonly seen = new Map<string, { run: string; at: number }>();
  self: ActorRef<FlowMsg> | undefined;
  /** Set at shutdown: nothing is written or sent any more (the store is closing). */
  private stopped = false;
  /** Set when the service drains: no step starts (a run goes on at its step after the restart), writes still end. */
  draining = false;
  /** Writes submitted and not yet answered. */
  private writing = 0;

  constructor(readonly deps: FlowDeps) {}

  /** Reads every stored run and the dedup window's keys; runs in progress go on. */
  async load(): Promise<void> {
    const rows: Run[] = [];
    await this.deps.store.load((chunk) => {
      for (const r of chunk) rows.push(runOf(r.doc));
    });
    for (const run of rows) {
      this.runs.set(run.key, run);
      this.seq = Math.max(this.seq, run.seq);
    }
    if (this.deps.dedupWindowMs > 0) for (const s of await this.deps.store.loadSeen(Date.now() - this.deps.dedupWindowMs)) this.seen.set(s.key, { run: s.entryKey, at: s.seenAt });
    const resumed = rows.filter((r) => !isFinal(r.state));
    if (resumed.length > 0) this.deps.log.info(`flow resumes ${resumed.length} run${resumed.length === 1 ? '' : 's'} in progress`);
    for (const run of resumed) {
      if (run.state === RunState.Waiting) this.arm(run);
      else this.advance(run);
    }
  }

  private liveOf(key: string): Live {
    let l = this.live.get(key);
    if (!l) this.live.set(key, (l = { token: 0, sending: false, queued: false, timer: undefined, cancelRequested: false, waiters: [], onStored: undefined }));
    return l;
  }

  private tell(msg: FlowMsg): void {
    this.deps.runtime.tell(this.self!, msg);
  }

  /** Writes the run (and `extra` ops) and tells `stored` once it is durable; the run goes on only then. */
  persist(run: Run, then: AfterStore, extra: StoreOp[] = []): void {
    if (this.stopped) return;
    run.updated = Date.now();
    const live = this.liveOf(run.key);
    const token = ++live.token;
    const ops = isFinal(run.state) && this.deps.runRetentionMs === 0 ? [{ type: 'remove', key: run.key } as const] : [putOp(run)];
    this.writing++;
    this.deps.store.write([...ops, ...extra]).then(
      () => {
        this.writing--;
        this.tell({ type: 'stored', key: run.key, token, then });
      },
      (error: unknown) => {
        this.writing--;
        this.tell({ type: 'store-failed', key: run.key, token, then, error });
      },
    );
  }

  /** Starts a run for `input`; `answer` is told when the run is durable (or could not be stored). */
  start(input: Message, idempotencyKey: string | undefined, onStored: (run: Run | undefined, error?: unknown) => void): Run {
    const now = Date.now();
    const first = this.deps.def.steps[0]!.name;
    const run: Run = {
      key: randomUUID(),
      seq: ++this.seq,
      state: RunState.Running,
      input,
      created: now,
      updated: now,
      step: first,
      attempt: 0,
      visits: { [first]: 1 },
      dueAt: 0,
      steps: Object.create(null) as Record<string, Result>,
      last: undefined,
      attempts: [],
      result: undefined,
      failedStep: undefined,
      cancelling: false,
      idempotencyKey,
      ended: undefined,
    };
    this.runs.set(run.key, run);
    this.deps.stats.started++;
    const live = this.liveOf(run.key);
    live.onStored = (ok, error) => onStored(ok ? run : undefined, error);
    if (idempotencyKey !== undefined && this.deps.dedupWindowMs > 0) this.seen.set(idempotencyKey, { run: run.key, at: now });
    this.persist(run, 'advance', idempotencyKey !== undefined && this.deps.dedupWindowMs > 0 ? [{ type: 'seen', key: idempotencyKey, entryKey: run.key, seenAt: now }] : []);
    return run;
  }

  /** Holds a `call`er until the run ends, or answers 202 with its key after AnswerWithin. */
  await(run: Run, respond: (r: Result) => void): void {
    if (isFinal(run.state)) {
      respond(this.answerOf(run));
      return;
    }
    const live = this.liveOf(run.key);
    const waiter: Waiter = {
      respond,
      timer: setTimeout(() => {
        live.waiters = live.waiters.filter((w) => w !== waiter);
        respond({ Code: 202, Message: `the run goes on; ask with command fetch and key ${run.key}`, Data: mapOf({ key: [run.key], state: [run.state] }), List: [] });
      }, this.deps.answerWithinMs),
    };
    live.waiters.push(waiter);
  }

  /** The answer of an ended run: the flow's result, else its last step's kept Result, else its own. */
  answerOf(run: Run): Result {
    const r = run.result ?? failure(Code.ServiceError, 'the run has no result');
    return { ...r, Data: Object.assign(Object.create(null) as Record<string, string[]>, r.Data) };
  }

  scopeOf(run: Run, result?: Result): FlowScope {
    return result === undefined ? { Input: run.input, Steps: run.steps } : { Input: run.input, Steps: run.steps, Result: result };
  }

  /** A `stored` message: the run's write is durable. */
  stored(key: string, token: number, then: AfterStore): void {
    const run = this.runs.get(key);
    const live = this.live.get(key);
    if (!run || !live || live.token !== token) return;
    const onStored = live.onStored;
    live.onStored = undefined;
    onStored?.(true);
    if (then === 'advance') this.advance(run);
    else if (then === 'ended') this.answerWaiters(run);
    else if (run.state === RunState.Waiting) this.arm(run);
  }

  /** A `store-failed` message: a new run is given up (its caller told), any other tries its write again. */
  storeFailed(key: string, token: number, then: AfterStore, error: unknown): void {
    const run = this.runs.get(key);
    const live = this.live.get(key);
    if (!run || !live || live.token !== token) return;
    if (live.onStored) {
      const onStored = live.onStored;
      this.forget(run);
      onStored(false, error);
      return;
    }
    this.deps.log.error(`flow could not store run ${key}: ${describeError(error)}; trying again in 1 s`);
    live.timer = setTimeout(() => this.persist(run, then), 1000);
  }

  private forget(run: Run): void {
    const live = this.live.get(run.key);
    if (live?.timer) clearTimeout(live.timer);
    this.live.delete(run.key);
    this.runs.delete(run.key);
    if (run.idempotencyKey !== undefined && this.seen.get(run.idempotencyKey)?.run === run.key) this.seen.delete(run.idempotencyKey);
  }

  private moveTo(run: Run, name: string | undefined): void {
    run.step = name;
    run.attempt = 0;
    run.dueAt = 0;
    if (name !== undefined) run.visits[name] = (run.visits[name] ?? 0) + 1;
  }

  /** Runs the run's steps that need no hive (choice, wait, succeed, fail) until one sends, waits or ends. */
  advance(run: Run): void {
    for (let guard = 0; guard < 100_000; guard++) {
      if (isFinal(run.state)) return;
      const name = run.step;
      if (name === undefined) return this.end(run, RunState.Succeeded, this.successAnswer(run));
      const step = this.deps.def.byName.get(name)!;
      try {
        switch (step.kind) {
          case 'call':
          case 'execute':
          case 'emit':
            return this.dispatch(run, step);
          case 'choice': {
            const scope = this.scopeOf(run);
            const branch = step.branches.find((b) => holds(b.when.render(scope)));
            this.moveTo(run, branch?.next ?? step.otherwise ?? fallThrough(this.deps.def, step));
            continue;
          }
          case 'succeed':
            return this.end(run, RunState.Succeeded, this.successAnswer(run));
          case 'fail': {
            const scope = this.scopeOf(run);
            const text = step.code.render(scope).trim();
            const code = /^\d{3}$/.test(text) ? Number(text) : Code.ServiceError;
            run.failedStep = name;
            return this.end(run, RunState.Failed, failure(code, step.message.render(scope)));
          }
          case 'wait':
            if (run.dueAt === 0) {
              const due = this.dueOf(run, step);
              if (due > Date.now()) {
                run.state = RunState.Waiting;
                run.dueAt = due;
                return this.persist(run, 'none');
              }
            }
            this.moveTo(run, fallThrough(this.deps.def, step));
            continue;
        }
      } catch (e) {
        // a condition, wait time or fail text that cannot render fails the run at that step
        run.failedStep = name;
        const r = resultFromError(e);
        return this.end(run, RunState.Failed, failure(r.Code, `step '${name}': ${describeError(e)}`));
      }
    }
    throw new Error(`flow run ${run.key} passed 100000 steps without sending or waiting`);
  }

  private dueOf(run: Run, step: WaitStep): number {
    const now = Date.now();
    if (step.forMs !== undefined) return now + step.forMs;
    const scope = this.scopeOf(run);
    if (step.forText) {
      const text = step.forText.render(scope);
      try {
        return now + parseDuration(text);
      } catch {
        throw new BadInputError(`wait.for rendered '${text}', which is not a duration such as 5s, 10m or 2h`);
      }
    }
    const text = step.until!.render(scope).trim();
    const at = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text);
    if (!Number.isFinite(at)) throw new BadInputError(`wait.until rendered '${text}', which is neither an RFC 3339 time nor epoch seconds`);
    return at;
  }

  /** The answer of a run that succeeded: the flow's result template, else the last kept Result. */
  private successAnswer(run: Run): Result {
    const def = this.deps.def;
    if (def.result) return success(renderMap(def.result, this.scopeOf(run)));
    const last = run.last === undefined ? undefined : run.steps[run.last];
    return last ?? success();
  }

  /** Sends the run's step now, or puts the run in line when MaxRuns runs are sending. */
  private dispatch(run: Run, step: SendStep): void {
    const live = this.liveOf(run.key);
    if (live.sending || live.queued || this.stopped || this.draining) return;
    if (this.sending >= this.deps.maxRuns) {
      live.queued = true;
      this.ready.push(run.key);
      return;
    }
    live.sending = true;
    this.sending++;
    run.attempt++;
    const token = ++live.token;
    const at = Date.now();
    this.deps.stats.stepsSent++;
    void sendStep({ hive: this.deps.hive, step, scope: this.scopeOf(run), key: stepKey(run, step.name), timeoutMs: step.timeoutMs ?? this.deps.defaultTimeoutMs, gate: this.deps.gate }).then((result) =>
      this.tell({ type: 'step-done', key: run.key, token, result, at, ms: Date.now() - at }),
    );
  }

  /** Gives a freed place to the runs in line. */
  private pump(): void {
    while (this.sending < this.deps.maxRuns && this.ready.length > 0) {
      const key = this.ready.shift()!;
      const run = this.runs.get(key);
      const live = this.live.get(key);
      if (!run || !live?.queued) continue;
      live.queued = false;
      this.advance(run);
    }
  }

  /** A step's attempt ended: kept and on, retried, caught, or the run failed. */
  stepDone(key: string, token: number, result: Result, at: number, ms: number): void {
    const run = this.runs.get(key);
    const live = this.live.get(key);
    if (!run || !live || live.token !== token || !live.sending) return;
    live.sending = false;
    this.sending--;
    this.pump();
    const step = this.deps.def.byName.get(run.step!)! as SendStep;
    run.attempts.push({ step: step.name, attempt: run.attempt, at, ms, code: result.Code, message: result.Message });
    if (live.cancelRequested) return this.cancelNow(run);
    if (isSuccessCode(result.Code)) {
      let kept = result;
      if (step.result) {
        try {
          kept = { Code: result.Code, Message: result.Message, Data: renderMap(step.result, this.scopeOf(run, result)), List: [] };
        } catch (e) {
          return this.failed(run, step, failure(resultFromError(e).Code, `step '${step.name}' result: ${describeError(e)}`));
        }
      }
      run.steps[step.name] = kept;
      run.last = step.name;
      this.moveTo(run, fallThrough(this.deps.def, step));
      return this.persist(run, 'advance');
    }
    const retry = step.retry;
    if (retry && run.attempt <= retry.count && retry.on.has(result.Code)) {
      this.deps.stats.retried++;
      const wait = retry.backoff === 'fixed' ? retry.timerMs : retry.timerMs * 2 ** (run.attempt - 1) * (0.8 + Math.random() * 0.4);
      run.state = RunState.Waiting;
      run.dueAt = Date.now() + Math.round(wait);
      this.deps.log.debug(`flow run ${run.key} step '${step.name}' failed (${result.Code} ${result.Message}) at attempt ${run.attempt} of ${retry.count + 1}; retrying in ${Math.round(wait)} ms`);
      return this.persist(run, 'none');
    }
    this.failed(run, step, result);
  }

  /** A step failed for good: its `catch` leads on (the failure kept for the handler), else the run fails. */
  private failed(run: Run, step: Step, result: Result): void {
    const rule = step.catches.find((c) => c.codes === undefined || c.codes.has(result.Code));
    if (rule) {
      run.steps[step.name] = result;
      this.moveTo(run, rule.next);
      return this.persist(run, 'advance');
    }
    run.failedStep = step.name;
    this.end(run, RunState.Failed, result);
  }

  /** Ends the run: written, then its callers answered. A cancelled run whose on_cancel ran ends cancelled. */
  end(run: Run, state: RunState, result: Result): void {
    const final = run.cancelling ? RunState.Cancelled : state;
    run.state = final;
    run.result = run.cancelling ? failure(Code.Conflict, `the run was cancelled${state === RunState.Failed ? `; on_cancel failed: ${result.Code} ${result.Message}` : ''}`) : result;
    run.ended = Date.now();
    run.step = undefined;
    run.dueAt = 0;
    if (final === RunState.Succeeded) this.deps.stats.succeeded++;
    else if (final === RunState.Failed) this.deps.stats.failed++;
    else this.deps.stats.cancelled++;
    this.persist(run, 'ended');
  }

  private answerWaiters(run: Run): void {
    const live = this.live.get(run.key);
    if (!live) return;
    for (const w of live.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.respond(this.answerOf(run));
    }
    this.live.delete(run.key);
    if (this.deps.runRetentionMs === 0) this.runs.delete(run.key);
  }

  /** Sets the timer of a waiting run. */
  arm(run: Run): void {
    const live = this.liveOf(run.key);
    if (live.timer) clearTimeout(live.timer);
    live.timer = setTimeout(() => this.tell({ type: 'due', key: run.key }), Math.max(0, Math.min(MAX_TIMER_MS, run.dueAt - Date.now())));
  }

  /** A `due` message: a waiting run whose time came goes on (a retry sends again, a wait step passes). */
  due(key: string): void {
    const run = this.runs.get(key);
    if (run?.state !== RunState.Waiting) return;
    const live = this.liveOf(key);
    live.timer = undefined;
    if (run.dueAt > Date.now()) return this.arm(run);
    run.state = RunState.Running;
    const step = this.deps.def.byName.get(run.step!)!;
    // a wait step sees its due time passed (advance moves on); a retry sends again
    if (step.kind !== 'wait') run.dueAt = 0;
    this.advance(run);
  }

  /** `cancel`: a run in progress runs on_cancel (if any) then ends cancelled; a step under way is let finish first. */
  cancel(run: Run): void {
    const live = this.liveOf(run.key);
    if (live.sending) {
      live.cancelRequested = true;
      return;
    }
    this.cancelNow(run);
  }

  private cancelNow(run: Run): void {
    const live = this.liveOf(run.key);
    live.cancelRequested = false;
    if (live.timer) clearTimeout(live.timer);
    live.timer = undefined;
    if (live.queued) {
      live.queued = false;
      const i = this.ready.indexOf(run.key);
      if (i >= 0) this.ready.splice(i, 1);
    }
    run.failedStep = run.step;
    const onCancel = this.deps.def.onCancel;
    if (onCancel !== undefined && !run.cancelling) {
      run.cancelling = true;
      run.state = RunState.Running;
      this.moveTo(run, onCancel);
      return this.persist(run, 'advance');
    }
    run.cancelling = true;
    this.end(run, RunState.Cancelled, failure(Code.Conflict, 'the run was cancelled'));
  }

  /** `replay`: a failed or cancelled run goes on at `from` with its Input's Data fields replaced by `data`. */
  replay(run: Run, from: string, data: Record<string, string[]>): void {
    Object.assign(run.input.Data, data);
    run.state = RunState.Running;
    run.result = undefined;
    run.ended = undefined;
    run.failedStep = undefined;
    run.cancelling = false;
    this.moveTo(run, from);
    this.persist(run, 'advance');
  }

  /** Drops finished runs: those ended before `before` (retention) or the given ones (purge). */
  drop(runs: Iterable<Run>): number {
    const ops: StoreOp[] = [];
    for (const run of runs) {
      if (!isFinal(run.state)) continue;
      this.runs.delete(run.key);
      this.live.delete(run.key);
      ops.push({ type: 'remove', key: run.key });
    }
    if (ops.length > 0) this.deps.store.write(ops).catch((e: unknown) => this.deps.log.error(`flow could not remove ${ops.length} finished runs from its store: ${describeError(e)}`));
    return ops.length;
  }

  /** RunRetention and DedupWindow: finished runs and idempotency keys older than them go. */
  sweep(): void {
    const now = Date.now();
    if (this.deps.runRetentionMs > 0) {
      const before = now - this.deps.runRetentionMs;
      this.drop([...this.runs.values()].filter((r) => r.ended !== undefined && r.ended <= before));
    }
    if (this.deps.dedupWindowMs > 0) {
      const before = now - this.deps.dedupWindowMs;
      let forgot = false;
      for (const [k, s] of this.seen) {
        if (s.at > before) continue;
        this.seen.delete(k);
        forgot = true;
      }
      if (forgot) this.deps.store.write([{ type: 'forget-seen', before }]).catch(() => undefined);
    }
  }

  /** Whether the run has a step under way in this process (state `running` in the counts), else it is in line. */
  isSending(key: string): boolean {
    return this.live.get(key)?.sending === true;
  }

  /** Whether no step is under way and no write is pending (a drain waits for it). */
  get idle(): boolean {
    return this.sending === 0 && this.writing === 0;
  }

  /** Stops every timer (the actor stopped). */
  stop(): void {
    this.stopped = true;
    for (const l of this.live.values()) {
      if (l.timer) clearTimeout(l.timer);
      for (const w of l.waiters) clearTimeout(w.timer);
    }
  }
}
