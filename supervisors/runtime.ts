/**
 * The actor runtime: the ONLY module that imports nact (ARCHITECTURE §3).
 *
 * nact 7.6.2 is unmaintained and has defects this wrapper works around:
 * - `query` correlates replies by ids of about 2^31 values, so under load callers received other
 *   callers' answers. `ask` here carries the reply function inside the message and runs its own timer.
 * - an invalid or missing supervision decision hangs the actor, and `resume` after an escalation
 *   resumes the parent while the child stays busy forever: decisions come from policies.ts only.
 * - the default policy and the system's escalation handler print with console.log: every actor gets
 *   our onCrash, and top-level actors never escalate to the system.
 * - `spawnStateless` ignores onCrash: only stateful actors are offered.
 * - a message told to a stopped actor vanishes: `tell` fails its reply hook instead.
 * - one message per event-loop turn: the runtime keeps its own mailbox (mailbox.ts) and drains a
 *   batch per turn, handing nact only wake-up tokens.
 */
import nact from 'nact';
import { ServiceFailureError, TimeoutError, UnavailableError } from '../protocol/errors.js';
import { withFaultInjection } from './fault-injection.js';
import type { ActorContext, ActorInfo, ActorRef, ActorSpec, ParentRef, SystemRoot } from './actor-types.js';
import type { Journal } from './journal.js';
import { JournalEvent, errorSummary } from './journal.js';
import { Mailbox, failMessage, onFailure } from './mailbox.js';
import type { RestartPolicy } from './policies.js';
import { DEFAULT_RESTART_POLICY, Decision, RestartTracker, validatePolicy } from './policies.js';
import { onUndelivered } from './undelivered.js';

export { onUndelivered };

export type { ActorContext, ActorInfo, ActorRef, ActorSpec, ChildDecision, ParentRef, SystemRoot } from './actor-types.js';

interface RefImpl<M> extends ActorRef<M> {
  readonly inner: nact.Ref<M>;
  info: ActorInfo;
  tracker: RestartTracker;
  mailbox: Mailbox<M>;
}

/** The only message nact ever carries: "drain your mailbox". */
const WAKE = Object.freeze({ wake: true });
const DEFAULT_BATCH = 256;

function isThenable<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

const SYSTEM_PATH = '/' as const;

function isRoot(p: ParentRef): p is SystemRoot {
  return p.path === SYSTEM_PATH;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One actor system with its journal and the registry the dashboard reads. */
export class Runtime {
  readonly root: SystemRoot;
  private readonly system: nact.Ref<never>;
  private readonly actors = new Map<string, RefImpl<unknown>>();
  private readonly byInner = new WeakMap<object, RefImpl<unknown>>();
  private stopped = false;

  constructor(
    readonly journal: Journal,
    name = 'hivenode',
  ) {
    this.system = nact.start({ name: `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}` } as never);
    this.root = { path: SYSTEM_PATH, name };
  }

  /** Spawns a supervised stateful actor under `parent`. */
  spawn<S, M>(parent: ParentRef, spec: ActorSpec<S, M>): ActorRef<M> {
    // test hook, off unless HIVENODE_FAULT_INJECTION=1: one place covers every service actor
    spec = { ...spec, receive: withFaultInjection(spec.receive) };
    if (this.stopped) throw new UnavailableError('the actor system is stopped');
    if (!/^[A-Za-z0-9_.-]+$/.test(spec.name)) throw new ServiceFailureError(`invalid actor name '${spec.name}'`);
    const policy = validatePolicy(spec.policy ?? DEFAULT_RESTART_POLICY, `policy of ${spec.name}`);
    const childPolicy = validatePolicy(spec.childPolicy ?? DEFAULT_RESTART_POLICY, `child policy of ${spec.name}`);
    const parentPath = isRoot(parent) ? '' : parent.path;
    const path = `${parentPath}/${spec.name}`;
    const topLevel = isRoot(parent);
    const childTrackers = new Map<string, RestartTracker>();
    const journal = this.journal;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const runtime = this;
    let ctxCache: ActorContext<M> | undefined;
    const contextOf = (inner: nact.Ref<M>): ActorContext<M> => {
      if (ctxCache) return ctxCache;
      const self = runtime.wrap(inner, path, spec.name, parentPath, policy);
      ctxCache = { self, path, name: spec.name, runtime };
      return ctxCache;
    };

    const onCrash = async (msg: M | undefined, error: Error | undefined, nctx: nact.SupervisionContext<M, nact.Ref<unknown>>, child?: nact.Ref<unknown>): Promise<symbol> => {
      try {
        if (child !== undefined) return await decideForChild(msg, error, nctx, child);
        journal.record({ event: JournalEvent.Crash, path, error: errorSummary(error) });
        const me = runtime.actors.get(path) as RefImpl<M> | undefined;
        failMessage(me?.mailbox.current ?? msg, new ServiceFailureError(`${path} crashed: ${errorSummary(error).message}`, { cause: error }));
        if (me) me.mailbox.current = undefined;
        const tracker = me?.tracker ?? new RestartTracker(policy);
        const verdict = tracker.onCrash(Date.now());
        let decision: Decision = verdict.decision;
        // The system root would print and stop: top-level actors stop, logged, instead.
        if (decision === Decision.Escalate && topLevel) decision = Decision.Stop;
        journal.record({ event: JournalEvent.Decision, path, decision, delayMs: verdict.delayMs, restarts: verdict.restartsInWindow });
        if (decision === Decision.Restart) {
          if (verdict.delayMs > 0) await sleep(verdict.delayMs);
          journal.record({ event: JournalEvent.Restart, path, restarts: verdict.restartsInWindow });
          if (me) this.rewake(me);
          return nctx.reset as symbol;
        }
        if (decision === Decision.Escalate) {
          journal.record({ event: JournalEvent.Escalation, path, error: errorSummary(error) });
          // queued messages wait for the parent's verdict; a wake-up token waits in nact's mailbox
          if (me) this.rewake(me);
          return nctx.escalate as symbol;
        }
        this.markStopped(path);
        if (me) this.failQueued(me);
        return nctx.stop as symbol;
      } catch (e) {
        // Deciding must never fail: a decision that throws would hang the actor.
        journal.record({ event: JournalEvent.Decision, path, decision: Decision.Stop, error: errorSummary(e) });
        return nctx.stop as symbol;
      }
    };

    const decideForChild = async (_msg: M | undefined, error: Error | undefined, nctx: nact.SupervisionContext<M, nact.Ref<unknown>>, child: nact.Ref<unknown>): Promise<symbol> => {
      const childImpl = this.byInner.get(child as object);
      const childPath = childImpl?.path ?? `${path}/?`;
      const childName = childImpl?.name ?? '?';
      let tracker = childTrackers.get(childName);
      if (!tracker) childTrackers.set(childName, (tracker = new RestartTracker(childPolicy)));
      const verdict = tracker.onCrash(Date.now());
      let decision: Decision = verdict.decision;
      if (decision === Decision.Escalate && topLevel) decision = Decision.Stop;
      journal.record({ event: JournalEvent.Decision, path: childPath, decision: `${decision} (by ${path})`, delayMs: verdict.delayMs, restarts: verdict.restartsInWindow });
      if (decision === Decision.Restart) {
        if (verdict.delayMs > 0) await sleep(verdict.delayMs);
        childImpl?.tracker.reset();
        journal.record({ event: JournalEvent.Restart, path: childPath, restarts: verdict.restartsInWindow });
        return nctx.resetChild as symbol;
      }
      if (decision === Decision.Escalate) {
        journal.record({ event: JournalEvent.Escalation, path, error: errorSummary(error) });
        return nctx.escalate as symbol;
      }
      this.markStopped(childPath);
      return nctx.stopChild as symbol;
    };

    const batch = spec.batch ?? DEFAULT_BATCH;
    /** Continues draining after a handler returned a promise. */
    const drainAsync = async (pending: Promise<S>, me: RefImpl<M>, ctx: ActorContext<M>, handled: number): Promise<S> => {
      let state = (await pending) as S;
      const box = me.mailbox;
      for (; handled < batch && box.size > 0; handled++) {
        const msg = box.shift();
        box.current = msg;
        const next = spec.receive(state, msg, ctx);
        state = isThenable(next) ? ((await next) as S) : next;
      }
      this.afterBatch(me);
      return state;
    };
    /** Handles one wake-up: up to `batch` queued messages, then yields the event loop. */
    const drain = (state: S, _wake: unknown, nctx: nact.ActorContext<M, nact.Ref<unknown>>): S | Promise<S> => {
      const ctx = contextOf(nctx.self);
      const me = ctx.self as RefImpl<M>;
      const box = me.mailbox;
      for (let handled = 0; handled < batch && box.size > 0; handled++) {
        const msg = box.shift();
        box.current = msg;
        const next = spec.receive(state, msg, ctx);
        if (isThenable(next)) return drainAsync(next, me, ctx, handled + 1);
        state = next;
      }
      this.afterBatch(me);
      return state;
    };

    const parentInner = isRoot(parent) ? this.system : (parent as RefImpl<never>).inner;
    const inner = nact.spawn(
      parentInner as nact.Ref<never>,
      drain,
      spec.name,
      {
        initialStateFunc: (nctx: nact.ActorContext<M, nact.Ref<unknown>>) => spec.init(contextOf(nctx.self)),
        onCrash: onCrash as unknown as nact.SupervisionActorFunc<M, nact.Ref<unknown>, nact.Ref<unknown>>,
        afterStop: async (state: S) => {
          this.markStopped(path);
          const me = this.actors.get(path);
          this.actors.delete(path);
          // Messages still queued can never be handled now: their callers learn it at once.
          if (me) this.failQueued(me);
          journal.record({ event: JournalEvent.Stop, path });
          if (spec.afterStop) {
            try {
              await spec.afterStop(state);
            } catch (e) {
              journal.record({ event: JournalEvent.Crash, path, error: errorSummary(e) });
            }
          }
        },
      } as nact.ActorProps<S, M, nact.Ref<unknown>>,
    );
    journal.record({ event: JournalEvent.Start, path });
    return this.wrap(inner, path, spec.name, parentPath, policy);
  }

  private wrap<M>(inner: nact.Ref<M>, path: string, name: string, parent: string, policy: RestartPolicy): RefImpl<M> {
    const known = this.byInner.get(inner as object);
    if (known) return known as RefImpl<M>;
    const impl: RefImpl<M> = {
      inner,
      path,
      name,
      info: { path, name, parent, startedAt: new Date().toISOString(), mailbox: 0, stopped: false },
      tracker: new RestartTracker(policy),
      mailbox: new Mailbox<M>(),
    };
    this.byInner.set(inner as object, impl as RefImpl<unknown>);
    this.actors.set(path, impl as RefImpl<unknown>);
    return impl;
  }

  /** Sends a message; if the actor is gone, the message's undelivered hook is failed with 503. */
  tell<M>(ref: ActorRef<M>, msg: M): void {
    const impl = ref as RefImpl<M>;
    if (impl.info.stopped || this.stopped) {
      failMessage(msg, new UnavailableError(`${ref.path} is stopped`));
      return;
    }
    const box = impl.mailbox;
    box.push(msg);
    if (!box.scheduled) {
      box.scheduled = true;
      nact.dispatch(impl.inner, WAKE as M);
    }
  }

  /** After a batch: yield and come back if messages remain, else wait for the next tell. */
  private afterBatch<M>(me: RefImpl<M>): void {
    me.mailbox.current = undefined;
    if (me.mailbox.size > 0) nact.dispatch(me.inner, WAKE as M);
    else me.mailbox.scheduled = false;
  }

  /** After a crash: the wake-up being handled is gone; queue a new one if messages wait. */
  private rewake<M>(me: RefImpl<M>): void {
    me.mailbox.scheduled = me.mailbox.size > 0;
    if (me.mailbox.scheduled) nact.dispatch(me.inner, WAKE as M);
  }

  private failQueued<M>(me: RefImpl<M>): void {
    for (const msg of me.mailbox.drain()) failMessage(msg, new UnavailableError(`${me.path} stopped`));
  }

  /**
   * Request-reply: `build` receives the reply function and returns the message carrying it.
   * Rejects with TimeoutError after `timeoutMs`, or with the crash error if the actor crashes on it.
   */
  ask<M extends object, R>(ref: ActorRef<M>, build: (reply: (r: R) => void) => M, timeoutMs: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let done = false;
      const timer = setTimeout(() => {
        if (done) return;
        done = true;
        reject(new TimeoutError(`${ref.path} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const built = build((r: R) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(r);
      });
      const msg = onFailure(built, (error: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        reject(error);
      });
      this.tell(ref, msg);
    });
  }

  /** Stops an actor and its children. */
  stop<M>(ref: ActorRef<M>): void {
    this.markStopped(ref.path);
    nact.stop((ref as RefImpl<M>).inner);
  }

  /** Marks an actor and its descendants stopped at once, so tells fail instead of vanishing. */
  private markStopped(path: string): void {
    for (const [p, a] of this.actors) {
      if (p === path || p.startsWith(`${path}/`)) a.info.stopped = true;
    }
  }

  /** Facts about every live actor, sorted by path. */
  actorInfos(): ActorInfo[] {
    return [...this.actors.values()].map((a) => ({ ...a.info, mailbox: a.mailbox.size })).sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Stops every actor; later tells fail their hooks. */
  shutdown(): void {
    if (this.stopped) return;
    this.stopped = true;
    nact.stop(this.system);
  }
}

let guardsInstalled = false;

/**
 * Logs unhandled promise rejections as supervision events instead of letting Node kill the process
 * or lose them; installed once per process.
 */
export function installProcessGuards(journal: Journal): void {
  if (guardsInstalled) return;
  guardsInstalled = true;
  process.on('unhandledRejection', (reason: unknown) => {
    journal.record({ event: JournalEvent.UnhandledRejection, path: '/process', error: errorSummary(reason) });
  });
}
