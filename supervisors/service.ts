/**
 * The contract between the node and a service implementation: the node compiles the configuration,
 * spawns a supervisor actor for the service and hands it this context; the service spawns its actors
 * under that supervisor and returns a handle the node drains at shutdown.
 */
import type { HiveClient } from '../actors/hive/client.js';
import type { Delivery, Listener, Subscription } from '../actors/hive/transport.js';
import { resultFromError } from '../protocol/message.js';
import type { ConfigOf, ParamTable } from '../config/params.js';
import type { ServiceInfo } from '../config/registry.js';
import type { Journal } from './journal.js';
import type { Logger } from './logger.js';
import type { ReadinessView } from './readiness.js';
import type { ActorRef, Runtime } from './runtime.js';
import { onUndelivered } from './runtime.js';

export interface ServiceContext<C> {
  readonly info: ServiceInfo;
  /** Instance name (NAME, or `<kind>-<n>`). */
  readonly name: string;
  readonly config: C;
  /** Parameters the user set (not defaults). */
  readonly explicit: ReadonlySet<string>;
  readonly runtime: Runtime;
  /** The service's supervisor actor: spawn the service's actors under it. */
  readonly supervisor: ActorRef<never>;
  readonly hive: HiveClient;
  readonly log: Logger;
  readonly journal: Journal;
  /** Channel to listen on: INPUTCHANNEL, else NAME, else the kind's default. */
  readonly inputChannel: string;
  /** Records each answered message (requests and latency per service). */
  readonly record: (code: number, seconds: number) => void;
  /** Whether every service of the node has started (a health check answers 503 until then). */
  readonly readiness: ReadinessView;
}

/** A started service. */
export interface RunningService {
  /** Stops taking new work and waits until in-flight work is done or the deadline passes. */
  drain(deadlineMs: number): Promise<void>;
  /** Live figures for the status page. */
  status(): Record<string, unknown>;
}

export interface ServiceDefinition<T extends ParamTable = ParamTable> {
  readonly info: ServiceInfo;
  start(ctx: ServiceContext<ConfigOf<T>>): Promise<RunningService>;
}

/** The message an actor gets for a hive delivery. */
export interface DeliveryMsg {
  type: 'delivery';
  delivery: Delivery;
}

/** A delivery told to a service actor: a crash on it answers 500 with the reason, a stopped service 503. */
class DeliveryMessage implements DeliveryMsg {
  readonly type = 'delivery';
  constructor(readonly delivery: Delivery) {}

  // a method, not a closure per message (see undelivered.ts)
  [onUndelivered](error: unknown): void {
    this.delivery.respond(resultFromError(error));
  }
}

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
 * Listens on the service's input channel and tells `ref` a DeliveryMsg per delivery. If the actor
 * is gone or crashes on the message, the caller is answered at once rather than at its timeout.
 */
export function serveChannel<M extends DeliveryMsg | { type: string }>(ctx: ServiceContext<unknown>, ref: ActorRef<M>): Promise<Subscription> {
  const listener: Listener = (delivery) => ctx.runtime.tell(ref as unknown as ActorRef<DeliveryMsg>, new DeliveryMessage(delivery));
  listener.onAnswer = (code, ms) => ctx.record(code, ms / 1000);
  return ctx.hive.listen(ctx.inputChannel, listener);
}
