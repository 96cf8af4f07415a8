/**
 * The actor runtime: the ONLY module that imports nact
 * (docs/ARCHITECTURE.md, Supervision and observability).
 *
 * nact 7.6.2 is unmaintained and has defects this wrapper works around:
 * - `query` correlates replies by ids of about 2^31 values, so under load callers received other
 *   callers' answers. `ask` here carries the reply function inside the message and runs its own timer.
 * - an invalid or missing supervision decision hangs the actor, and `resume` after an escalation
 *   resumes the parent while the child stays busy forever: decisions come from supervision.ts only.
 * - the default policy and the system's escalation handler print straight to the console: every actor
 *   gets our onCrash, and top-level actors never escalate to the system.
 * - `spawnStateless` ignores onCrash: only stateful actors are offered.
 * - a message told to a stopped actor vanishes: `tell` fails its reply hook instead.
 * - every message costs an event-loop turn (nact schedules each with setImmediate): mail is the
 *   runtime's own (actor-cell.ts, run by dispatcher.ts). nact keeps the actor tree — children, stop,
 *   restart — and supervises: a handler's error reaches nact as a crash token its handler rethrows.
 */
import nact from 'nact';
import { ServiceFailureError, TimeoutError, UnavailableError } from '../protocol/errors.js';
import { ActorCell } from './actor-cell.js';
import type { CellHost } from './actor-cell.js';
import { withFaultInjection } from './fault-injection.js';
import type { ActorInfo, ActorRef, ActorSpec, ParentRef, Runtime, SystemRoot } from './actor-types.js';
import type { Journal } from './journal.js';
import { JournalEvent, errorSummary } from './journal.js';
import { DEFAULT_RESTART_POLICY, Decision, RestartTracker, validatePolicy } from './policies.js';
import { decideForChild, decideOwnCrash } from './supervision.js';
import { failMessage, onFailure, onUndelivered } from './undelivered.js';

export { onUndelivered };

export type { ActorInfo, ActorRef, ActorSpec, ParentRef, Runtime, SystemRoot } from './actor-types.js';

type Cell = ActorCell<unknown, unknown>;

/** The only message nact ever carries: a handler's error, rethrown inside nact so it supervises. */
interface CrashToken {
  readonly crash: unknown;
}

const SYSTEM_PATH = '/' as const;

function isRoot(p: ParentRef): p is SystemRoot {
  return p.path === SYSTEM_PATH;
}

/** One actor system with its journal and the registry the dashboard reads. */
export class ActorRuntime implements Runtime, CellHost {
  readonly root: SystemRoot;
  private readonly system: nact.Ref<never>;
  private readonly actors = new Map<string, Cell>();
  private readonly byInner = new WeakMap<object, Cell>();
  private halted = false;

  constructor(
    readonly journal: Journal,
    name = 'hivenode',
  ) {
    this.system = nact.start({ name: `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}` } as never);
    this.root = { path: SYSTEM_PATH, name };
  }

  /** The whole system is stopped: tells fail and no actor runs. */
  get stopped(): boolean {
    return this.halted;
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
    const site = { path, topLevel: isRoot(parent), journal: this.journal };
    const childTrackers = new Map<string, RestartTracker>();

    /** The cell of nact's reference; created on first sight (nact builds the state inside spawn). */
    const cellOf = (inner: object): ActorCell<S, M> => {
      const known = this.byInner.get(inner);
      if (known) return known as unknown as ActorCell<S, M>;
      const cell = new ActorCell<S, M>(inner, { path, name: spec.name, parent: parentPath, policy }, spec, this, this);
      this.byInner.set(inner, cell as unknown as Cell);
      this.actors.set(path, cell as unknown as Cell);
      return cell;
    };

    const onCrash = async (
      _token: unknown,
      error: unknown,
      nctx: nact.SupervisionContext<M, nact.Ref<unknown>>,
      child?: nact.Ref<unknown>,
    ): Promise<symbol> => {
      try {
        if (child !== undefined) {
          const childCell = this.byInner.get(child as object);
          const childName = childCell?.name ?? '?';
          let tracker = childTrackers.get(childName);
          if (!tracker) childTrackers.set(childName, (tracker = new RestartTracker(childPolicy)));
          const decision = await decideForChild(site, childCell, tracker, error);
          if (decision === Decision.Restart) return nctx.resetChild as symbol;
          if (decision === Decision.Escalate) return nctx.escalate as symbol;
          if (childCell) this.markStopped(childCell.path);
          return nctx.stopChild as symbol;
        }
        const cell = this.actors.get(path);
        const decision = await decideOwnCrash(site, cell, policy, error);
        // a restart builds the state again (cell.initialize), which takes up the waiting mail
        if (decision === Decision.Restart) return nctx.reset as symbol;
        if (decision === Decision.Escalate) return nctx.escalate as symbol;
        this.markStopped(path);
        if (cell) this.failQueued(cell);
        return nctx.stop as symbol;
      } catch (e) {
        // Deciding must never fail: a decision that throws would hang the actor.
        this.journal.record({ event: JournalEvent.Decision, path, decision: Decision.Stop, error: errorSummary(e) });
        return nctx.stop as symbol;
      }
    };

    const parentInner = isRoot(parent) ? this.system : ((parent as unknown as Cell).inner as nact.Ref<never>);
    const inner = nact.spawn(
      parentInner,
      (_state: undefined, token: CrashToken) => {
        throw token.crash;
      },
      spec.name,
      {
        initialStateFunc: (nctx: nact.ActorContext<CrashToken, nact.Ref<unknown>>) => cellOf(nctx.self).initialize(),
        onCrash: onCrash as unknown as nact.SupervisionActorFunc<CrashToken, nact.Ref<unknown>, nact.Ref<unknown>>,
        afterStop: async () => {
          this.markStopped(path);
          const cell = this.actors.get(path);
          this.actors.delete(path);
          // Messages still queued can never be handled now: their callers learn it at once.
          if (cell) this.failQueued(cell);
          this.journal.record({ event: JournalEvent.Stop, path });
          if (spec.afterStop && cell) {
            try {
              await spec.afterStop((cell as unknown as ActorCell<S, M>).lastState() as S);
            } catch (e) {
              this.journal.record({ event: JournalEvent.Crash, path, error: errorSummary(e) });
            }
          }
        },
      } as unknown as nact.ActorProps<never, CrashToken, nact.Ref<never>>,
    );
    this.journal.record({ event: JournalEvent.Start, path });
    return cellOf(inner);
  }

  /** A handler failed: nact's handler rethrows the error, so nact's supervision takes it from there. */
  crashed(cell: Cell, error: unknown): void {
    const token: CrashToken = { crash: error };
    try {
      nact.dispatch(cell.inner as nact.Ref<CrashToken>, token);
    } catch {
      // stopped meanwhile: its afterStop fails the mail still queued
    }
  }

  /** Sends a message; if the actor is gone, the message's undelivered hook is failed with 503. */
  tell<M>(ref: ActorRef<M>, msg: M): void {
    const cell = ref as ActorCell<unknown, M>;
    if (cell.info.stopped || this.stopped) {
      failMessage(msg, new UnavailableError(`${ref.path} is stopped`));
      return;
    }
    cell.enqueue(msg);
  }

  private failQueued(cell: Cell): void {
    for (const msg of cell.mailbox.drain()) failMessage(msg, new UnavailableError(`${cell.path} stopped`));
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
    nact.stop((ref as unknown as Cell).inner as nact.Ref<M>);
    // nact runs afterStop for the actor stopped, not for its children: without this they would stay
    // in the actor tree for good (a reload stops a replaced service's supervisor, node/node.ts)
    for (const [p, cell] of this.actors) {
      if (!p.startsWith(`${ref.path}/`)) continue;
      this.actors.delete(p);
      this.failQueued(cell);
    }
  }

  /** Marks an actor and its descendants stopped at once, so tells fail instead of vanishing. */
  private markStopped(path: string): void {
    for (const [p, a] of this.actors) {
      if (p === path || p.startsWith(`${path}/`)) a.info.stopped = true;
    }
  }

  /** Facts about every live actor, sorted by path. */
  actorInfos(): ActorInfo[] {
    return [...this.actors.values()]
      .map((a) => ({ ...a.info, mailbox: a.mailbox.size }))
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Stops every actor; later tells fail their hooks. */
  shutdown(): void {
    if (this.halted) return;
    this.halted = true;
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
