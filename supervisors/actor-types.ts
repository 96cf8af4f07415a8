/**
 * The actor runtime's public types: typed references, the context a handler sees, how an actor is
 * specified, what the dashboard reads of it, and the runtime as everything above the kernel sees it.
 * Apart from runtime.ts so that file holds the runtime itself (and stays the only one that imports
 * nact), and so these types import nothing back from it.
 */
import type { Journal } from './journal.js';
import type { RestartPolicy } from './policies.js';

declare const refBrand: unique symbol;

/** A typed reference to an actor accepting messages of type M. */
export interface ActorRef<M> {
  /** Phantom member: makes refs of different message types incompatible. */
  readonly [refBrand]?: (m: M) => void;
  /** Actor path, for example `/node/echo-1/worker`. */
  readonly path: string;
  readonly name: string;
}

/** Anything that can have children: the system root or an actor. */
export type ParentRef = ActorRef<never> | SystemRoot;

/** The root of an actor system (the parent of top-level actors). */
export interface SystemRoot {
  readonly path: '/';
  readonly name: string;
}

/** What a handler sees of its actor. */
export interface ActorContext<M> {
  readonly self: ActorRef<M>;
  readonly path: string;
  readonly name: string;
  readonly runtime: Runtime;
}

/** How to create an actor. */
export interface ActorSpec<S, M> {
  name: string;
  /** Builds the state at start and after every restart. */
  init: (ctx: ActorContext<M>) => S;
  /** Handles one message; the returned state replaces the old one. Thrown errors are crashes. */
  receive: (state: S, msg: M, ctx: ActorContext<M>) => S | Promise<S>;
  /** How this actor's own crashes are answered (validated at spawn). */
  policy?: Partial<RestartPolicy>;
  /** How a child that escalated is answered; children's restarts are counted with `childPolicy`. */
  childPolicy?: Partial<RestartPolicy>;
  /** Called after the actor stopped, with its last state. */
  afterStop?: (state: S) => void | Promise<void>;
  /** Messages handled per event-loop turn before yielding (default 256). */
  batch?: number;
}

/** Live facts about one actor for the dashboard. */
export interface ActorInfo {
  path: string;
  name: string;
  parent: string;
  startedAt: string;
  /** Messages told and not yet taken up by the handler. */
  mailbox: number;
  stopped: boolean;
}

/** The actor system as actors, services and the node use it; supervisors/runtime.ts (`ActorRuntime`) is it. */
export interface Runtime {
  readonly root: SystemRoot;
  readonly journal: Journal;
  /** The whole system is stopped: tells fail and no actor runs. */
  readonly stopped: boolean;
  /** Spawns a supervised stateful actor under `parent`. */
  spawn<S, M>(parent: ParentRef, spec: ActorSpec<S, M>): ActorRef<M>;
  tell<M>(ref: ActorRef<M>, msg: M): void;
  ask<M extends object, R>(ref: ActorRef<M>, build: (reply: (r: R) => void) => M, timeoutMs: number): Promise<R>;
  stop<M>(ref: ActorRef<M>): void;
  actorInfos(): ActorInfo[];
  shutdown(): void;
}
