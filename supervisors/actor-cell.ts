/**
 * One live actor as the runtime holds it: its reference, mailbox, state and restart count, and how
 * it handles a batch of mail when the dispatcher runs it. nact keeps the actor tree and decides
 * crashes (runtime.ts); handling messages is the cell's, so it costs no event-loop turn. Owning the
 * mailbox also means queued messages can be failed (not silently lost) when an actor stops, and
 * counted for the dashboard.
 */
import type { ActorContext, ActorInfo, ActorRef, ActorSpec } from './actor-types.js';
import type { Runnable } from './dispatcher.js';
import { dispatcher } from './dispatcher.js';
import { Fifo } from './fifo.js';
import type { RestartPolicy } from './policies.js';
import { RestartTracker } from './policies.js';
import { isThenable } from './thenable.js';

/** Where a cell sits in the tree, and how its crashes are handled. */
interface CellPlace {
  path: string;
  name: string;
  parent: string;
  policy: RestartPolicy;
}

/** What a cell needs of its runtime. */
export interface CellHost {
  /** The whole system is stopped: nothing runs any more. */
  readonly stopped: boolean;
  /** Hands a crash to supervision; the cell stays suspended until a restart or stop. */
  crashed(cell: ActorCell<unknown, unknown>, error: unknown): void;
}

/** Messages an actor handles per run before others get their turn (ActorSpec.batch). */
const DEFAULT_BATCH = 256;

export class ActorCell<S, M> implements ActorRef<M>, Runnable {
  readonly info: ActorInfo;
  readonly tracker: RestartTracker;
  readonly mailbox = new Fifo<M>();
  readonly ctx: ActorContext<M>;
  /** A crash is with supervision: mail waits until the actor is restarted (or fails when it stops). */
  private suspended = false;
  /** In the dispatcher's queue or handling mail: a tell needs not wake it. */
  private scheduled = false;
  /** The message being handled, so a crash can answer its caller. */
  private current: M | undefined;
  private state: S | undefined;
  /** Counts restarts, so a handler that settles after one cannot write its stale state. */
  private generation = 0;

  readonly path: string;
  readonly name: string;

  constructor(
    /** nact's reference (opaque here: only runtime.ts knows nact). */
    readonly inner: object,
    place: CellPlace,
    private readonly spec: ActorSpec<S, M>,
    private readonly host: CellHost,
    runtime: ActorContext<M>['runtime'],
  ) {
    const { path, name, parent, policy } = place;
    this.path = path;
    this.name = name;
    this.info = { path, name, parent, startedAt: new Date().toISOString(), mailbox: 0, stopped: false };
    this.tracker = new RestartTracker(policy);
    this.ctx = { self: this, path, name, runtime };
  }

  /** Builds the state, at start and on every restart; a suspended actor takes up its mail again. */
  initialize(): void {
    try {
      this.state = this.spec.init(this.ctx);
    } catch (e) {
      this.suspended = true;
      throw e;
    }
    this.generation++;
    this.suspended = false;
    this.wake();
  }

  /** The message the actor crashed on, handed over once (supervision answers its caller). */
  takeCurrent(): M | undefined {
    const msg = this.current;
    this.current = undefined;
    return msg;
  }

  /** The state the actor stopped with. */
  lastState(): S | undefined {
    return this.state;
  }

  /** Queues a message and wakes the actor when it is idle. */
  enqueue(msg: M): void {
    this.mailbox.push(msg);
    this.wake();
  }

  private wake(): void {
    if (this.scheduled || this.suspended || this.mailbox.size === 0) return;
    this.scheduled = true;
    dispatcher.schedule(this);
  }

  /** Handles up to one batch of mail; never throws (a handler's error is a crash for supervision). */
  runBatch(): number {
    const box = this.mailbox;
    if (this.suspended || this.info.stopped || this.host.stopped) {
      this.scheduled = false;
      return 0;
    }
    const batch = this.spec.batch ?? DEFAULT_BATCH;
    let handled = 0;
    while (handled < batch && box.size > 0 && !this.info.stopped) {
      const msg = box.shift();
      this.current = msg;
      handled++;
      let next: S | Promise<S>;
      try {
        next = this.spec.receive(this.state as S, msg, this.ctx);
      } catch (e) {
        this.crash(e);
        return handled;
      }
      if (isThenable(next)) {
        this.settle(next);
        return handled;
      }
      this.state = next;
    }
    this.afterBatch();
    return handled;
  }

  /** An asynchronous handler holds the actor until it settles; then the mail goes on. */
  private settle(pending: PromiseLike<S>): void {
    const generation = this.generation;
    pending.then(
      (state) => {
        if (generation !== this.generation) return;
        this.state = state;
        this.afterBatch();
      },
      (e: unknown) => {
        if (generation === this.generation) this.crash(e);
      },
    );
  }

  private afterBatch(): void {
    this.current = undefined;
    if (this.mailbox.size > 0 && !this.suspended && !this.info.stopped && !this.host.stopped) dispatcher.schedule(this);
    else this.scheduled = false;
  }

  private crash(error: unknown): void {
    this.suspended = true;
    this.scheduled = false;
    this.host.crashed(this as ActorCell<unknown, unknown>, error);
  }
}
