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
import { emptyMap, emptyRecord, failure, resultFromError, success } from '../../protocol/message.js';
import type { ActorRef, Runtime } from '../../supervisors/runtime.js';
import type { HiveClient } from '../hive/client.js';
import type { Logger } from '../observe/logger.js';
import type { QueueStore, StoreOp } from '../queue/store.js';
import type { FlowDefinition, MapStep, ParallelStep, SendStep, Step, WaitStep } from './definition.js';
import type { FlowScope } from './flow-text.js';
import { holds } from './flow-text.js';
import { fallThrough } from './graph.js';
import { Callers } from './callers.js';
import { StartsSeen } from './starts-seen.js';
import type { AfterStore, FlowMsg } from './flow-messages.js';
import type { Run } from './run.js';
import { RunState, isFinal, putOp, runOf, stepKey } from './run.js';
import type { ChannelGate } from '../../config/allowed-channels.js';
import { renderMap, retryDelay, sendStep, sendWithRetry } from './step-send.js';
import { mapItems } from './map-items.js';

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
  /** The flow's NAME. */
  readonly name: string;
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

/** What a run is doing in this process (never stored: a restart begins each run afresh at its step). */
interface Live {
  /** Answers of `stored` and `step-done` from before this one are stale. */
  token: number;
  sending: boolean;
  queued: boolean;
  timer: NodeJS.Timeout | undefined;
  cancelRequested: boolean;
  /** A map or parallel under way: `fan-done` of an earlier one is stale; elements sending now; the next element to send. */
  fanToken: number;
  fanActive: number;
  fanNext: number;
  /** A new run's first write: its caller (execute) is answered with the key once it is durable. */
  onStored: ((ok: boolean, error?: unknown) => void) | undefined;
}

/**
 * Tokens of writes and sends, unique in the process: a report from before an actor restart (an old
 * core's send answering late) never passes for one of the new core's.
 */
let lastToken = 0;

/** The longest one timer waits; a longer wait re-arms (Node's timers hold at most 2^31-1 ms). */
const MAX_TIMER_MS = 3_600_000;

export class FlowCore {
  readonly runs = new Map<string, Run>();
  private readonly live = new Map<string, Live>();
  /** Runs in line for a place (MaxRuns), oldest first. */
  private readonly ready: string[] = [];
  private sending = 0;
  private seq = 0;
  /** Idempotency keys of starts within DedupWindow. */
  readonly seen: StartsSeen;
  self: ActorRef<FlowMsg> | undefined;
  /** Callers of runs they started, answered when their run ends. */
  readonly callers: Callers;
  /** Set at shutdown: nothing is written or sent any more (the store is closing). */
  private stopped = false;
  /** Set when the service drains: no step starts (a run goes on at its step after the restart), writes still end. */
  draining = false;
  /** Writes submitted and not yet answered. */
  private writing = 0;

  constructor(readonly deps: FlowDeps) {
    this.callers = new Callers(deps.answerWithinMs);
    this.seen = new StartsSeen(deps.dedupWindowMs);
  }

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
    if (this.seen.on) this.seen.load(await this.deps.store.loadSeen(Date.now() - this.deps.dedupWindowMs));
    const resumed = rows.filter((r) => !isFinal(r.state));
    if (resumed.length > 0) this.deps.log.info(`flow resumes ${resumed.length} run${resumed.length === 1 ? '' : 's'} in progress`);
    for (const run of resumed) {
      if (run.state === RunState.Waiting) this.arm(run);
      else this.advance(run);
    }
  }

  private liveOf(key: string): Live {
    let l = this.live.get(key);
    if (!l) this.live.set(key, (l = { token: 0, sending: false, queued: false, timer: undefined, cancelRequested: false, onStored: undefined, fanToken: 0, fanActive: 0, fanNext: 0 }));
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
    const token = (live.token = ++lastToken);
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
      steps: emptyRecord<Result>(),
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
    this.persist(run, 'advance', this.seen.remember(idempotencyKey, run.key, now));
    return run;
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
    this.seen.forget(run.idempotencyKey, run.key);
  }

  private moveTo(run: Run, name: string | undefined): void {
    run.step = name;
    run.fan = undefined;
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
          case 'map':
          case 'parallel':
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
  private dispatch(run: Run, step: SendStep | MapStep | ParallelStep): void {
    const live = this.liveOf(run.key);
    if (live.sending || live.queued || this.stopped || this.draining) return;
    if (this.sending >= this.deps.maxRuns) {
      live.queued = true;
      this.ready.push(run.key);
      return;
    }
    live.sending = true;
    this.sending++;
    if (step.kind === 'map' || step.kind === 'parallel') return this.startFan(run, step, live);
    run.attempt++;
    const token = (live.token = ++lastToken);
    const at = Date.now();
    this.deps.stats.stepsSent++;
    void sendStep({ hive: this.deps.hive, service: this.deps.name, step, scope: this.scopeOf(run), key: stepKey(run, step.name), timeoutMs: step.timeoutMs ?? this.deps.defaultTimeoutMs, gate: this.deps.gate }).then((result) =>
      this.tell({ type: 'step-done', key: run.key, token, result, at, ms: Date.now() - at }),
    );
  }

  /** A map's elements or a parallel's branches: the Results kept so far stay (a restart sends only the others). */
  private startFan(run: Run, step: MapStep | ParallelStep, live: Live): void {
    if (!run.fan) {
      let items: unknown[];
      try {
        items = step.kind === 'map' ? mapItems(step.items.render(this.scopeOf(run))) : step.branches.map((b) => b.name);
      } catch (e) {
        this.release(live);
        return this.failed(run, step, failure(resultFromError(e).Code, `step '${step.name}'.map.items: ${describeError(e)}`));
      }
      run.fan = { items, results: items.map(() => null) };
    }
    live.fanToken = ++lastToken;
    live.fanActive = 0;
    live.fanNext = 0;
    this.sendFan(run, step, live);
  }

  /** Sends the fan's next elements, up to its concurrency; ends the step once every element has its Result. */
  private sendFan(run: Run, step: MapStep | ParallelStep, live: Live): void {
    const fan = run.fan!;
    const limit = step.kind === 'map' ? step.concurrency : fan.items.length;
    const halted = (): boolean => this.stopped || this.draining || live.cancelRequested;
    while (live.fanActive < limit && live.fanNext < fan.items.length && !halted()) {
      const index = live.fanNext++;
      if (fan.results[index] !== null) continue;
      const item = fan.items[index];
      const sub = step.kind === 'map' ? step.each : step.branches[index]!.sub;
      const scope: FlowScope = step.kind === 'map' ? { ...this.scopeOf(run), Item: item, Index: index } : this.scopeOf(run);
      const part = step.kind === 'map' ? `:${index}` : `.${sub.name}`;
      const token = live.fanToken;
      const at = Date.now();
      live.fanActive++;
      this.deps.stats.stepsSent++;
      void sendWithRetry({ hive: this.deps.hive, service: this.deps.name, step: sub, scope, key: stepKey(run, step.name, part), timeoutMs: sub.timeoutMs ?? this.deps.defaultTimeoutMs, gate: this.deps.gate }, sub.retry, halted).then(({ result, attempts }) =>
        this.tell({ type: 'fan-done', key: run.key, token, index, result, attempts, at, ms: Date.now() - at }),
      );
    }
    if (live.fanActive > 0) return;
    this.release(live);
    if (live.cancelRequested) return this.cancelNow(run);
    if (fan.results.some((r) => r === null)) return; // halted: the run goes on at this step after the restart
    const results = fan.results as Result[];
    run.fan = undefined;
    const failedAt = results.findIndex((r) => !isSuccessCode(r.Code));
    if (step.kind === 'parallel') step.branches.forEach((b, i) => (run.steps[b.name] = results[i]!));
    if (failedAt >= 0) {
      const r = results[failedAt]!;
      const which = step.kind === 'map' ? `element ${failedAt}` : `branch '${step.branches[failedAt]!.name}'`;
      return this.failed(run, step, { ...r, Message: `step '${step.name}' ${which}: ${r.Message}` });
    }
    this.succeeded(run, step, { Code: Code.Success, Message: 'Success', Data: emptyMap(), List: results });
  }

  /** One element of a fan ended: its Result kept (and written), the next one sent. */
  fanDone(key: string, token: number, index: number, result: Result, attempts: number, at: number, ms: number): void {
    const run = this.runs.get(key);
    const live = this.live.get(key);
    if (!run?.fan || !live || live.fanToken !== token || !live.sending) return;
    live.fanActive--;
    const step = this.deps.def.byName.get(run.step!)! as MapStep | ParallelStep;
    const name = step.kind === 'map' ? `${step.name}[${index}]` : `${step.name}.${step.branches[index]!.name}`;
    run.attempts.push({ step: name, attempt: attempts, at, ms, code: result.Code, message: result.Message });
    // a failed element is kept too: the step fails once the others ended (a replay sends the fan again)
    run.fan.results[index] = result;
    if (live.fanActive > 0 || live.fanNext < run.fan.items.length) this.persist(run, 'none');
    this.sendFan(run, step, live);
  }

  /** Gives up the run's place among the MaxRuns sending. */
  private release(live: Live): void {
    if (!live.sending) return;
    live.sending = false;
    this.sending--;
    this.pump();
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
    this.release(live);
    const step = this.deps.def.byName.get(run.step!)! as SendStep;
    run.attempts.push({ step: step.name, attempt: run.attempt, at, ms, code: result.Code, message: result.Message });
    if (live.cancelRequested) return this.cancelNow(run);
    if (isSuccessCode(result.Code)) return this.succeeded(run, step, result);
    const retry = step.retry;
    if (retry && run.attempt <= retry.count && retry.on.has(result.Code)) {
      this.deps.stats.retried++;
      const wait = retryDelay(retry, run.attempt);
      run.state = RunState.Waiting;
      run.dueAt = Date.now() + Math.round(wait);
      this.deps.log.debug(`flow run ${run.key} step '${step.name}' failed (${result.Code} ${result.Message}) at attempt ${run.attempt} of ${retry.count + 1}; retrying in ${Math.round(wait)} ms`);
      return this.persist(run, 'none');
    }
    this.failed(run, step, result);
  }

  /** A step succeeded: its Result kept (shaped by its `result`), written, and the run goes on. */
  private succeeded(run: Run, step: Step, result: Result): void {
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
    // a run that ends here (the list's end, succeed, fail) is written once, by its end: no step is sent
    // before that write, so the rule "written before the next step starts" holds with one fsync less
    const next = run.step === undefined ? undefined : this.deps.def.byName.get(run.step);
    if (next === undefined || next.kind === 'succeed' || next.kind === 'fail') this.advance(run);
    else this.persist(run, 'advance');
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
    this.callers.answer(run);
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
    const forget = this.seen.sweep(now);
    if (forget) this.deps.store.write([forget]).catch(() => undefined);
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
    this.callers.stop();
    for (const l of this.live.values()) {
      if (l.timer) clearTimeout(l.timer);
    }
  }
}
