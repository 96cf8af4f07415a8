/**
 * The serve kit: what every service that answers on a hive channel does alike, written once
 * (docs/ARCHITECTURE.md, The life of one request). A service gives its `handle` (and what to
 * close and show); the kit spawns the worker actor, acknowledges each delivery, counts it in flight,
 * refuses it past `maxInFlight`, answers a failure with its Code, counts answers and failures,
 * drains at shutdown and, when the worker crashes or is gone, answers the caller through the
 * undelivered path instead of letting it wait for its timeout.
 */
import { isSuccessCode } from '../../protocol/codes.js';
import type { HiveError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { resultFromError } from '../../protocol/message.js';
import type { ActorRef } from '../../supervisors/runtime.js';
import { onUndelivered } from '../../supervisors/runtime.js';
import type { Delivery, Listener, Subscription } from '../hive/transport.js';
import type { ScopeTrace } from '../observe/trace-scope.js';
import { enterScope, leaveScope } from '../observe/trace-scope.js';
import type { DeliveryMsg, NodeFacilities, RunningService } from './context.js';
import { deliveryHop, deliveryHopName, recordedDelivery } from './trace-delivery.js';
import { traceIdOf } from '../observe/trace-context.js';
import type { Hop } from '../observe/tracing.js';
import { recording, tracingMode } from '../observe/tracing.js';

/** Counts work in flight and lets a drain wait for it to reach zero. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];
  get size(): number {
    return this.count;
  }
  begin(): void {
    this.count++;
  }
  end(): void {
    this.count = Math.max(0, this.count - 1);
    if (this.count === 0) for (const w of this.waiters.splice(0)) w();
  }
  /** Resolves when nothing is in flight or after `deadlineMs`. */
  idle(deadlineMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, deadlineMs);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

/**
 * A delivery told to a service actor: a crash on it answers 500 with the reason, a stopped service 503.
 * When nothing records, the delivery is its own trace scope: its message's trace id is read from
 * the Control only when a log line asks for it, so a message that logs nothing costs no hop object
 * and no reads of its Control (callgrind: ~500 instructions a message, a third of what carrying a
 * trace cost the gateway bench's echo).
 */
class DeliveryMessage implements DeliveryMsg, ScopeTrace {
  readonly type = 'delivery';
  readonly trace: ScopeTrace | undefined;
  constructor(
    readonly delivery: Delivery,
    hop: Hop | undefined,
  ) {
    this.trace = hop ?? (tracingMode() === 'off' ? undefined : this);
  }

  get traceId(): string | undefined {
    return traceIdOf(this.delivery.message.Control);
  }

  // a method, not a closure per message (see supervisors/undelivered.ts)
  [onUndelivered](error: unknown): void {
    this.delivery.respond(resultFromError(error));
  }
}

/**
 * Listens on the service's input channel and tells `ref` a DeliveryMsg per delivery. If the actor
 * is gone or crashes on the message, the caller is answered at once rather than at its timeout.
 * Services whose actor takes more than deliveries (the queue) serve through it with `serveActor`.
 */
function serveChannel(ctx: NodeFacilities, ref: ActorRef<DeliveryMsg>, endOnAck = false): Promise<Subscription> {
  const hopName = deliveryHopName(ctx.name);
  const listener: Listener = (delivery) => {
    // nothing recorded: the message already carries the trace, and the delivery goes on as it came
    if (!recording()) {
      ctx.runtime.tell(ref, new DeliveryMessage(delivery, undefined));
      return;
    }
    const hop = deliveryHop(ctx, delivery, hopName);
    ctx.runtime.tell(
      ref,
      new DeliveryMessage(hop?.span === undefined ? delivery : recordedDelivery(delivery, hop, endOnAck), hop),
    );
  };
  listener.onAnswer = (code, ms) => ctx.record(code, ms / 1000);
  return ctx.hive.listen(ctx.inputChannel, listener);
}

/** How a handler answers one message: exactly once, with a Result or with what went wrong. */
export interface Answer {
  result(result: Result): void;
  /** Answers with the error's Code and message (resultFromError). */
  error(error: unknown): void;
}

/**
 * Handles one delivery and answers it through `answer`, now or later. A handler that throws at once
 * crashes the worker actor: its supervisor restarts it and the caller gets 500 with the reason.
 */
export type Handler = (delivery: Delivery, answer: Answer) => void;

/** A handler from an async function: its Result answers, its rejection answers with its Code. */
export function handleAsync(fn: (message: Message, delivery: Delivery) => Promise<Result>): Handler {
  return (delivery, answer) => {
    fn(delivery.message, delivery).then(
      (r) => answer.result(r),
      (e: unknown) => answer.error(e),
    );
  };
}

/** What the service adds to the kit: its handler (or actor), what to close and what to show. */
interface ServeCommon {
  /** Called after in-flight work ended (or the deadline passed) at shutdown, and when listening fails. */
  close?(deadlineMs: number): Promise<void> | void;
  /** The service's own figures for the status page, beside the kit's. */
  status?(): Record<string, unknown>;
}

export interface ServeOptions extends ServeCommon {
  /** The worker actor's name under the service supervisor ('commands', 'statements', …). */
  worker: string;
  handle: Handler;
  /** Deliveries beyond this many in flight are refused with the error `overloaded` builds (429, 503). */
  maxInFlight?: number;
  overloaded?: () => HiveError;
  /** Told every answer's Code and, for a failure, the error: a service's own logging. */
  observe?(code: number, error?: unknown): void;
}

/** The kit's own figures, beside each service's. */
interface ServeFigures {
  handled: number;
  failed: number;
  refused: number;
}

/** One delivery's answer: leaves the in-flight count, counts, tells the observer and responds. */
class DeliveryAnswer implements Answer {
  private answered = false;
  constructor(
    private readonly delivery: Delivery,
    private readonly kit: Kit,
    private readonly trace: ScopeTrace | undefined,
  ) {}
  result(result: Result): void {
    if (this.answered) return;
    this.answered = true;
    this.kit.answered(result.Code, undefined, this.trace);
    this.delivery.respond(result);
  }
  error(error: unknown): void {
    if (this.answered) return;
    this.answered = true;
    const result = resultFromError(error);
    this.kit.answered(result.Code, error, this.trace);
    this.delivery.respond(result);
  }
}

class Kit {
  readonly inFlight = new InFlight();
  readonly figures: ServeFigures = { handled: 0, failed: 0, refused: 0 };
  constructor(private readonly opts: ServeOptions) {}

  answered(code: number, error: unknown, trace: ScopeTrace | undefined): void {
    this.inFlight.end();
    this.figures.handled++;
    if (!isSuccessCode(code)) this.figures.failed++;
    // the observer's log lines are about this message: they carry its trace
    const observe = this.opts.observe;
    if (observe === undefined) return;
    const before = enterScope(trace);
    try {
      observe(code, error);
    } finally {
      leaveScope(before);
    }
  }

  receive(delivery: Delivery, trace: ScopeTrace | undefined): void {
    delivery.ack();
    const { maxInFlight, overloaded } = this.opts;
    if (maxInFlight !== undefined && overloaded && this.inFlight.size >= maxInFlight) {
      this.figures.refused++;
      delivery.respond(resultFromError(overloaded()));
      return;
    }
    this.inFlight.begin();
    // the handler's synchronous part runs in the message's trace: its log lines carry it
    const before = enterScope(trace);
    try {
      this.opts.handle(delivery, new DeliveryAnswer(delivery, this, trace));
    } catch (e) {
      // the crash goes to the supervisor, and the caller is answered through the undelivered path
      this.inFlight.end();
      throw e;
    } finally {
      leaveScope(before);
    }
  }
}

/** Spawns the worker, listens on the input channel and returns the running service. */
export async function serve(ctx: NodeFacilities, opts: ServeOptions): Promise<RunningService> {
  const kit = new Kit(opts);
  const worker = ctx.runtime.spawn<undefined, DeliveryMsg>(ctx.supervisor, {
    name: opts.worker,
    init: () => undefined,
    receive: (state, msg) => {
      kit.receive(msg.delivery, msg.trace);
      return state;
    },
  });
  return runningOn(ctx, worker, opts, {
    inFlight: kit.inFlight,
    figures: () => ({ inFlight: kit.inFlight.size, ...kit.figures }),
    endOnAck: false,
  });
}

/** Serves the input channel through an actor of the service's own that takes DeliveryMsg among its messages. */
export function serveActor(
  ctx: NodeFacilities,
  actor: ActorRef<DeliveryMsg>,
  opts: ServeCommon,
): Promise<RunningService> {
  // such an actor answers a successful execute by its acknowledgement alone: that ends the span
  return runningOn(ctx, actor, opts, { inFlight: undefined, figures: () => ({}), endOnAck: true });
}

/** How the service's actor is served: `inFlight` the kit's (none for a bare actor), `figures` its status, `endOnAck` whether an acknowledgement ends the span. */
interface Serving {
  inFlight: InFlight | undefined;
  figures: () => Record<string, unknown>;
  endOnAck: boolean;
}

async function runningOn(
  ctx: NodeFacilities,
  ref: ActorRef<DeliveryMsg>,
  opts: ServeCommon,
  serving: Serving,
): Promise<RunningService> {
  const { inFlight, figures, endOnAck } = serving;
  let subscription: Subscription;
  try {
    subscription = await serveChannel(ctx, ref, endOnAck);
  } catch (e) {
    // the node never learns of this service, so nothing else would release what it holds
    await opts.close?.(2_000);
    throw e;
  }
  return {
    async drain(deadlineMs) {
      const until = Date.now() + deadlineMs;
      // bounded: a drain on a hive connection that is down would wait for it to come back
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        void Promise.resolve(subscription.close()).finally(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      // deliveries told to the actor before the subscription closed wait in its mailbox, not yet in
      // flight: a service replaced by a reload (docs/ARCHITECTURE.md, Reloading a node) has its actors
      // stopped after this drain, which would answer them 503
      while (Date.now() < until && (ctx.runtime.actorInfos().find((a) => a.path === ref.path)?.mailbox ?? 0) > 0)
        await new Promise((r) => setTimeout(r, 5));
      await inFlight?.idle(Math.max(0, until - Date.now()));
      await opts.close?.(Math.max(0, until - Date.now()));
    },
    status: () => ({ channel: ctx.inputChannel, ...figures(), ...opts.status?.() }),
  };
}
