/**
 * The pluggable hive transport (docs/ARCHITECTURE.md, The hive): the memory transport and the NATS
 * transport implement this one interface, and the bridge actor is the only user of it. Every call
 * and execute is answered exactly once with a Result: failures are Results with their Code (404 no
 * listener, 503 unavailable, 504 timeout), so no caller can forget to handle one. The answer is a
 * callback the bridge passes straight through, not a promise: a promise per call (and a reaction to
 * forward it) sat on the path of every message.
 */
import type { Message, Result } from '../../protocol/message.js';
import { resultFromError, success } from '../../protocol/message.js';
import { BadInputError } from '../../protocol/errors.js';

/** How a message is handed to a listener. */
export const DeliveryMode = {
  /** Request-reply: the listener answers with a Result. */
  Call: 'call',
  /** Acknowledged hand-over: the listener acknowledges receipt, then processes on its own. */
  Execute: 'execute',
  /** Fire-and-forget: nobody waits. */
  Emit: 'emit',
} as const;
export type DeliveryMode = (typeof DeliveryMode)[keyof typeof DeliveryMode];

/** One message handed to a listener. `respond` and `ack` may be called at most once; later calls are ignored. */
export interface Delivery {
  readonly mode: DeliveryMode;
  readonly channel: string;
  readonly message: Message;
  /**
   * Answers a call; answers an execute instead of its acknowledgement when it comes first (a failure
   * then reaches the caller); ignored after ack, and for emit.
   */
  respond(result: Result): void;
  /** Acknowledges receipt of an execute (no-op for call and emit). */
  ack(): void;
}

/**
 * Receives deliveries; must not throw (the transport answers 500 if it does). `onAnswer`, when set,
 * is told the Code and the milliseconds from hand-over to answer of every call and execute: the
 * transport already holds the answer callback, so measuring there costs no extra object per message.
 */
export type Listener = ((delivery: Delivery) => void) & { onAnswer?: (code: number, ms: number) => void };

export interface Subscription {
  readonly channel: string;
  close(): void;
}

export interface TransportStats {
  calls: number;
  executes: number;
  emits: number;
  /** Emits with no listener or refused by the transport. */
  dropped: number;
  /** Calls and executes that ended with a Code >= 400 produced by the transport itself. */
  failures: number;
}

export interface HiveTransport {
  readonly kind: 'memory' | 'nats';
  connect(): Promise<void>;
  close(): Promise<void>;
  isConnected(): boolean;
  /** Request-reply: `answer` gets the listener's Result, or 404/413/503/504 from the transport. */
  call(channel: string, message: Message, timeoutMs: number, answer: (r: Result) => void): void;
  /** Acknowledged hand-over: `answer` gets 200 once a listener has the message. */
  execute(channel: string, message: Message, timeoutMs: number, answer: (r: Result) => void): void;
  /** Returns false when the message was dropped (no listener, disconnected). */
  emit(channel: string, message: Message): boolean;
  listen(channel: string, listener: Listener): Subscription;
  stats(): TransportStats;
  /** Where the transport keeps hive:// templates itself (NATS: a KV bucket); absent = the storage service. */
  templates?(channel: string): Promise<TemplateBucket>;
  /** A key-value bucket shared by the nodes of the hive (NATS: JetStream KV); absent on the embedded hive. */
  sharedBucket?(name: string): Promise<SharedBucket>;
}

/** A value of a shared bucket and its revision (each write of a key gives it a higher one). */
export interface Revised {
  value: string;
  revision: number;
}

/**
 * A key-value bucket shared by the nodes of one hive, with compare-and-set writes: what several
 * nodes decide together (one active poller and its high-water mark: actors/shared/lease.ts)
 * is decided by which write the bucket accepted, never by clocks.
 */
export interface SharedBucket {
  /** The key's value, or undefined when it has none (never written, or deleted). */
  get(key: string): Promise<Revised | undefined>;
  /** Writes a key that has no value; the new revision, or undefined when it has one. */
  create(key: string, value: string): Promise<number | undefined>;
  /** Writes a key still at `revision`; the new revision, or undefined when another write came first. */
  update(key: string, value: string, revision: number): Promise<number | undefined>;
  /** Deletes a key still at `revision` (nothing when another write came first). */
  remove(key: string, revision: number): Promise<void>;
}

/** hive:// templates kept by the transport, in a bucket named after the template channel. */
export interface TemplateBucket {
  get(name: string): Promise<string | undefined>;
  put(name: string, content: string): Promise<void>;
  list(): Promise<string[]>;
  remove(name: string): Promise<void>;
}

const CHANNEL = /^[A-Za-z0-9_-]{1,200}$/;

/** What a channel name may be, for the messages that refuse one. */
export const CHANNEL_RULE = 'use 1 to 200 of A-Z a-z 0-9 _ -';

/** Channel names are `[A-Za-z0-9_-]{1,200}`: they become NATS subjects. */
export function isValidChannel(channel: string): boolean {
  return CHANNEL.test(channel);
}

/** A channel name as a message gives it: anything but a valid name is Code 400. */
export function validateChannel(channel: string): string {
  if (!isValidChannel(channel)) {
    throw new BadInputError(`channel '${channel.slice(0, 80)}' is not valid: ${CHANNEL_RULE}`);
  }
  return channel;
}

const ignore = (): void => undefined;

/**
 * Hands a message to a listener: `answer` (which must tolerate being called more than once) gets the
 * call's Result, the execute's acknowledgement, or the error if the listener throws.
 */
export function deliverTo(listener: Listener, mode: DeliveryMode, channel: string, message: Message, answer: (r: Result) => void): void {
  const hook = mode === 'emit' ? undefined : listener.onAnswer;
  if (hook) {
    const started = performance.now();
    const inner = answer;
    answer = (r) => {
      hook(r.Code, performance.now() - started);
      inner(r);
    };
  }
  let delivery: Delivery;
  if (mode === 'execute') {
    // the first of ack and respond answers: a listener that may only acknowledge what is durable
    // (the queue) answers through respond, so a refusal reaches the caller instead of a false ack
    let answered = false;
    const once = (r: Result): void => {
      if (answered) return;
      answered = true;
      answer(r);
    };
    delivery = { mode, channel, message, respond: once, ack: () => once(success(undefined, null)) };
  } else {
    delivery = { mode, channel, message, respond: mode === 'call' ? answer : ignore, ack: ignore };
  }
  try {
    listener(delivery);
  } catch (e) {
    answer(resultFromError(e));
  }
}
