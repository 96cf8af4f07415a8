/**
 * The run state machine (docs/ARCHITECTURE.md, The life of a run), driven by the flow actor
 * (flow-actor.ts) one message at a time. A run's document is written to the store and committed
 * before its next step starts; a step's attempt reports back as a `step-done` message; waits and
 * retries wait on a timer that tells `due`. After a restart every run in progress goes on at the
 * step it was at: at least once per step, never skipped.
 */
import { randomUUID } from 'node:crypto';
import { Code, isSuccessCode } from '../../protocol/codes.js';
import { describeError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { emptyRecord, failure, resultFromError } from '../../protocol/message.js';
import type { ActorRef, Runtime } from '../../supervisors/runtime.js';
import type { HiveClient } from '../hive/client.js';
import type { Logger } from '../observe/logger.js';
import type { QueueStore, StoreOp } from '../queue/store.js';
import type { HeldEntries } from '../queue/queue-holder.js';
import type { ParkedNeed } from './parked-runs.js';
import { ParkedRuns } from './parked-runs.js';
import type { FlowDefinition, MapStep, ParallelStep, SendSpec, SendStep, Step } from './definition.js';
import type { FlowScope } from './flow-text.js';
import { fallThrough } from './graph.js';
import { choose, dueOf, failResult, successAnswer } from './local-steps.js';
import { Callers } from './callers.js';
import { StartsSeen } from './starts-seen.js';
import type { AfterStore, FanElementEnded, FlowMsg } from './flow-messages.js';
import type { Run } from './run.js';
import { RunState, isFinal, putOp, stepKey } from './run.js';
import type { ChannelGate } from '../../config/allowed-channels.js';
import type { SendRequest } from './step-send.js';
import { renderMap, retryDelay, sendStep } from './step-send.js';
import type { FanHost } from './fan.js';
import { fanDone, startFan } from './fan.js';
import type { Live } from './live.js';
import { newLive, nextToken } from './live.js';

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
  /** PageHorizon: runs waiting beyond it are held in the store only (0: every run in memory). */
  readonly pageHorizonMs: number;
  readonly stats: FlowStats;
  /** Store jetstream: the runs the previous holder had a step under way for, held back until then (queue-holder.ts, AckWait). */
  readonly held?: HeldEntries | undefined;
}

/**
 * TEST ONLY: the machine-loss row (spec/reliability/flow-machine-loss.spec.ts) sets
 * HIVENODE_TEST_BROKEN_WRITE_AFTER_STEP=1 to build the flow deliberately broken — a new run is
 * answered and its first step sent before it is written, its first write made only after that step's
 * Result — and shows that its test then finds acknowledged runs lost; nothing else may set it.
 */
const WRITE_AFTER_STEP = process.env.HIVENODE_TEST_BROKEN_WRITE_AFTER_STEP === '1';

/** The longest one timer waits; a longer wait re-arms (Node's timers hold at most 2^31-1 ms). */
const MAX_TIMER_MS = 3_600_000;

export class FlowCore implements FanHost {
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
  /** Runs waiting beyond the horizon, held in the store only (parked-runs.ts). */
  readonly parked: ParkedRuns;

  constructor(readonly deps: FlowDeps) {
    this.callers = new Callers(deps.answerWithinMs);
    this.seen = new StartsSeen(deps.dedupWindowMs);
    this.parked = new ParkedRuns(deps.store, deps.pageHorizonMs);
  }

  /** Reads the stored runs (those waiting beyond the horizon only counted) and the dedup window's keys; runs in progress go on. */
  async load(): Promise<void> {
    const rows: Run[] = [];
    const { lastSeq, horizon } = await this.parked.load((run) => rows.push(run));
    this.seq = Math.max(this.seq, lastSeq);
    if (this.seen.on) this.seen.load(await this.deps.store.loadSeen(Date.now() - this.deps.dedupWindowMs));
    const resumed = rows.filter((r) => !isFinal(r.state)).length;
    const parked =
      this.parked.count > 0
        ? `; ${this.parked.count} waiting until after ${new Date(horizon!).toISOString()} stay in the store until then`
        : '';
    if (resumed + this.parked.count > 0)
      this.deps.log.info(`flow resumes ${resumed} run${resumed === 1 ? '' : 's'} in progress${parked}`);
    for (const run of rows) this.place(run);
  }

  /** Puts a run read from the store among the runs; one in progress goes on (a waiting one at its time). */
  private place(run: Run): void {
    this.runs.set(run.key, run);
    if (run.state === RunState.Waiting) this.arm(run);
    else if (!isFinal(run.state) && !this.heldBack(run)) this.advance(run);
  }

  /**
   * Store jetstream: a run whose step the previous holder was still sending waits until AckWait has
   * passed since that holder's report (the step may still be running at its target), as a queue
   * holds back the entries it was delivering; then it sends its step again, with the same key.
   */
  private heldBack(run: Run): boolean {
    const held = this.deps.held;
    if (
      !held ||
      held.until <= Date.now() ||
      !held.keys.includes(run.key) ||
      this.deps.def.byName.get(run.step ?? '')?.kind === 'wait'
    )
      return false;
    run.state = RunState.Waiting;
    run.dueAt = held.until;
    this.arm(run);
    return true;
  }

  /** The runs with a step under way in this process (a holder's report to the node that may take over). */
  *inFlight(): IterableIterator<string> {
    for (const [key, live] of this.live) if (live.sending) yield key;
  }

  /**
   * Reads the parked runs a command needs (after this core's earlier writes committed): those of
   * `keys` come into memory and go on at their time; 'all' answers every parked run, not kept (a list).
   */
  async readParked(need: ParkedNeed): Promise<Run[]> {
    const runs = await this.parked.read(need, (key) => this.runs.has(key));
    if (need === 'all') return runs;
    for (const run of runs) this.pageIn(run);
    return [];
  }

  /** The `page-in` timer: the parked runs due before the new horizon come into memory. */
  async advanceHorizon(): Promise<void> {
    try {
      for (const run of await this.parked.advance((key) => this.runs.has(key))) this.pageIn(run);
    } catch (e) {
      this.deps.log.error(`flow could not read runs due soon from its store: ${describeError(e)}; trying again in 5 s`);
    }
  }

  private pageIn(run: Run): void {
    this.parked.pagedIn();
    this.place(run);
  }

  /** After every message: the timer that moves the horizon on, while runs are parked. */
  armPaging(): void {
    if (!this.stopped) this.parked.arm(() => this.tell({ type: 'page-in' }));
  }

  /** A waiting run just written leaves memory when it is due beyond the horizon (its store row holds it). */
  private park(run: Run): boolean {
    if (!this.parked.park(run)) return false;
    const live = this.live.get(run.key);
    if (live?.timer) clearTimeout(live.timer);
    this.live.delete(run.key);
    this.runs.delete(run.key);
    return true;
  }

  liveOf(key: string): Live {
    let l = this.live.get(key);
    if (!l) this.live.set(key, (l = newLive()));
    return l;
  }

  tell(msg: FlowMsg): void {
    this.deps.runtime.tell(this.self!, msg);
  }

  /** Writes the run (and `extra` ops) and tells `stored` once it is durable; the run goes on only then. */
  persist(run: Run, then: AfterStore, extra: StoreOp[] = []): void {
    if (this.stopped) return;
    run.updated = Date.now();
    const live = this.liveOf(run.key);
    const token = (live.token = nextToken());
    const ops =
      isFinal(run.state) && this.deps.runRetentionMs === 0 ? [{ type: 'remove', key: run.key } as const] : [putOp(run)];
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
  start(
    input: Message,
    idempotencyKey: string | undefined,
    onStored: (run: Run | undefined, error?: unknown) => void,
  ): Run {
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
    if (WRITE_AFTER_STEP) {
      onStored(run);
      this.advance(run);
      return run;
    }
    const live = this.liveOf(run.key);
    live.onStored = (ok, error) => onStored(ok ? run : undefined, error);
    // its idempotency key goes in the run's first write, wherever its first steps lead (a send, a wait, its end)
    this.advance(run, this.seen.remember(idempotencyKey, run.key, now));
    return run;
  }

  scopeOf(run: Run, result?: Result): FlowScope {
    return result === undefined
      ? { Input: run.input, Steps: run.steps }
      : { Input: run.input, Steps: run.steps, Result: result };
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
    else if (run.state === RunState.Waiting && !this.park(run)) this.arm(run);
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

  /**
   * Runs the run's steps that need no hive (choice, wait, succeed, fail) until one sends, waits or
   * ends. `unwritten`: the run changed since its last write (a new run, a step's Result kept, a catch,
   * a cancel, a replay), with the store ops to write beside it: it is written once, where it stops —
   * a sending step is sent once that write is durable (`stored`), a wait or an end is that write. The
   * steps run before it send nothing, so "written before the next step starts" holds with one write
   * where a write per step passed would be one fsync each.
   */
  advance(run: Run, unwritten?: StoreOp[]): void {
    for (let guard = 0; guard < 100_000; guard++) {
      if (isFinal(run.state)) return;
      const name = run.step;
      if (name === undefined)
        return this.end(run, RunState.Succeeded, successAnswer(this.deps.def, run, this.scopeOf(run)), unwritten);
      const step = this.deps.def.byName.get(name)!;
      try {
        switch (step.kind) {
          case 'call':
          case 'execute':
          case 'emit':
          case 'map':
          case 'parallel':
            return unwritten ? this.persist(run, 'advance', unwritten) : this.dispatch(run, step);
          case 'choice':
            this.moveTo(run, choose(this.deps.def, step, this.scopeOf(run)));
            continue;
          case 'succeed':
            return this.end(run, RunState.Succeeded, successAnswer(this.deps.def, run, this.scopeOf(run)), unwritten);
          case 'fail': {
            const result = failResult(step, this.scopeOf(run));
            run.failedStep = name;
            return this.end(run, RunState.Failed, result, unwritten);
          }
          case 'wait':
            if (run.dueAt === 0) {
              const due = dueOf(step, this.scopeOf(run));
              if (due > Date.now()) {
                run.state = RunState.Waiting;
                run.dueAt = due;
                return this.persist(run, 'none', unwritten);
              }
            }
            this.moveTo(run, fallThrough(this.deps.def, step));
            continue;
        }
      } catch (e) {
        // a condition, wait time or fail text that cannot render fails the run at that step
        run.failedStep = name;
        const r = resultFromError(e);
        return this.end(run, RunState.Failed, failure(r.Code, `step '${name}': ${describeError(e)}`), unwritten);
      }
    }
    throw new Error(`flow run ${run.key} passed 100000 steps without sending or waiting`);
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
    if (step.kind === 'map' || step.kind === 'parallel') return startFan(this, run, step, live);
    run.attempt++;
    const token = (live.token = nextToken());
    const at = Date.now();
    this.countSent();
    void sendStep(this.request(step, this.scopeOf(run), stepKey(run, step.name))).then((result) =>
      this.tell({ type: 'step-done', key: run.key, token, result, at, ms: Date.now() - at }),
    );
  }

  /** One element of a fan ended (fan.ts). */
  fanDone(key: string, token: number, ended: FanElementEnded): void {
    const run = this.runs.get(key);
    const live = this.live.get(key);
    if (!run?.fan || !live || live.fanToken !== token || !live.sending) return;
    fanDone(this, run, { step: this.deps.def.byName.get(run.step!)! as MapStep | ParallelStep, live }, ended);
  }

  /** A fan's host (fan.ts): no element starts once the service stops or drains. */
  get halted(): boolean {
    return this.stopped || this.draining;
  }

  request(spec: SendSpec & { readonly timeoutMs: number | undefined }, scope: FlowScope, key: string): SendRequest {
    return {
      hive: this.deps.hive,
      service: this.deps.name,
      step: spec,
      scope,
      key,
      timeoutMs: spec.timeoutMs ?? this.deps.defaultTimeoutMs,
      gate: this.deps.gate,
    };
  }

  countSent(): void {
    this.deps.stats.stepsSent++;
  }

  /** Gives up the run's place among the MaxRuns sending. */
  release(live: Live): void {
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
      this.deps.log.debug(
        `flow run ${run.key} step '${step.name}' failed (${result.Code} ${result.Message}) at attempt ${run.attempt} of ${retry.count + 1}; retrying in ${Math.round(wait)} ms`,
      );
      return this.persist(run, 'none');
    }
    this.failed(run, step, result);
  }

  /** A step succeeded: its Result kept (shaped by its `result`), written, and the run goes on. */
  succeeded(run: Run, step: Step, result: Result): void {
    let kept = result;
    if (step.result) {
      try {
        kept = {
          Code: result.Code,
          Message: result.Message,
          Data: renderMap(step.result, this.scopeOf(run, result)),
          List: [],
        };
      } catch (e) {
        return this.failed(
          run,
          step,
          failure(resultFromError(e).Code, `step '${step.name}' result: ${describeError(e)}`),
        );
      }
    }
    run.steps[step.name] = kept;
    run.last = step.name;
    this.moveTo(run, fallThrough(this.deps.def, step));
    this.advance(run, []);
  }

  /** A step failed for good: its `catch` leads on (the failure kept for the handler), else the run fails. */
  failed(run: Run, step: Step, result: Result): void {
    const rule = step.catches.find((c) => c.codes === undefined || c.codes.has(result.Code));
    if (rule) {
      run.steps[step.name] = result;
      this.moveTo(run, rule.next);
      return this.advance(run, []);
    }
    run.failedStep = step.name;
    this.end(run, RunState.Failed, result);
  }

  /** Ends the run: written, then its callers answered. A cancelled run whose on_cancel ran ends cancelled. */
  end(run: Run, state: RunState, result: Result, extra: StoreOp[] = []): void {
    const final = run.cancelling ? RunState.Cancelled : state;
    run.state = final;
    run.result = run.cancelling
      ? failure(
          Code.Conflict,
          `the run was cancelled${state === RunState.Failed ? `; on_cancel failed: ${result.Code} ${result.Message}` : ''}`,
        )
      : result;
    run.ended = Date.now();
    run.step = undefined;
    run.dueAt = 0;
    if (final === RunState.Succeeded) this.deps.stats.succeeded++;
    else if (final === RunState.Failed) this.deps.stats.failed++;
    else this.deps.stats.cancelled++;
    this.persist(run, 'ended', extra);
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
    live.timer = setTimeout(
      () => this.tell({ type: 'due', key: run.key }),
      Math.max(0, Math.min(MAX_TIMER_MS, run.dueAt - Date.now())),
    );
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

  cancelNow(run: Run): void {
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
      return this.advance(run, []);
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
    this.advance(run, []);
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
    if (ops.length > 0)
      this.deps.store
        .write(ops)
        .catch((e: unknown) =>
          this.deps.log.error(`flow could not remove ${ops.length} finished runs from its store: ${describeError(e)}`),
        );
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
    this.parked.stop();
    for (const l of this.live.values()) {
      if (l.timer) clearTimeout(l.timer);
    }
  }
}
