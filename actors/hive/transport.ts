/**
 * The pluggable hive transport (docs/ARCHITECTURE.md, The hive): the memory transport and the NATS
 * transport implement this one interface, and the bridge actor is the only user of it. Every call
 * and execute is answered exactly once with a Result: failures are Results with their Code (404 no
 * listener, 503 unavailable, 504 timeout), so no caller can forget to handle one. The answer is a
 * callback the bridge passes straight through, not a promise: a promise per call (and a reaction to
 * forward it) sat on the path of every message.
 */
import { performance } from 'node:perf_hooks';
import type { Message, Result } from '../../protocol/message.js';
import { failure, resultFromError, success } from '../../protocol/message.js';
import { Code } from '../../protocol/codes.js';
import { BadInputError, UnavailableError } from '../../protocol/errors.js';

const UNSERVED = new WeakSet<Result>();

/**
 * The Result (404) of a call or execute that found no listener on a hive where one may come any
 * moment — NATS: a node of another process starting or restarting, a queue changing hands. The queue
 * retries it under RetryOn retryable (isUnserved); a listener's own 404 (no such entry) and the
 * embedded hive's (its listeners are the node's own services) stay final. Marked by identity, not
 * in the Result, so what the caller sees is the plain 404.
 */
export function unservedResult(channel: string): Result {
  const r = failure(Code.NotFound, `no service listens on channel '${channel}'`);
  UNSERVED.add(r);
  return r;
}

/** Whether a Result is the hive's own "no listener, yet" (unservedResult). */
export function isUnserved(r: Result): boolean {
  return UNSERVED.has(r);
}

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
  /**
   * Stops listening. Resolves once nothing more can reach the listener: on NATS, after the requests the
   * server had already routed to this node were delivered (a plain unsubscribe would drop them and
   * leave their callers waiting for their whole timeout — a 504 while a queue changes hands).
   */
  close(): void | Promise<void>;
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
  /** A replicated log shared by the nodes of the hive (NATS: a JetStream stream); absent on the embedded hive. */
  sharedLog?(name: string, options: SharedLogOptions): Promise<SharedLog>;
  /** Holds a channel served by one listener of the hive at a time (ChannelHold); absent on the embedded hive. */
  holdChannel?(channel: string): ChannelHold;
}

/**
 * A channel served by one listener of the hive at a time, which may be changing hands: a queue on
 * JetStream (actors/queue/queue-holder.ts). While a node holds it, that node's requests to the channel
 * that find no listener wait for one until their timeout, then answer 503 — never 404, which says
 * "nobody serves this" and which no client retries (docs/ARCHITECTURE.md, The queue on JetStream).
 */
export interface ChannelHold {
  /** Whether a listener answers on the channel now (a probe the listening side's transport answers itself). */
  served(): Promise<boolean>;
  /**
   * The listener that took the requests sent before `sentBefore` (Date.now() time) is gone (a holder
   * SIGKILLed): answer them 503 now instead of at their timeout.
   */
  listenerGone(sentBefore: number): void;
  /** Stops holding: requests that find no listener answer 404 again. */
  release(): void;
}

/** How a shared log is made: its replication, and its size limit (0: none). */
export interface SharedLogOptions {
  /** Servers holding a copy (1, 3 or 5): an append is acknowledged once that many (a majority of them) have it. */
  replicas: number;
  maxBytes: number;
}

/** One record of a shared log: its position, its topic and its bytes. */
export interface LogRecord {
  seq: number;
  topic: string;
  data: Uint8Array;
}

/**
 * An append-only log of records under topics (dot-separated words; `*` matches one word and `>` the
 * rest in the topic patterns of read, count and purge), replicated by the hive (JetStream: Raft).
 * What one store writes and reads back at its next start (the queue on JetStream: actors/queue/jetstream-store.ts).
 */
export interface SharedLog {
  /** The most bytes one record may hold. */
  readonly maxRecordBytes: number;
  /**
   * Appends a record; resolves with its position once the log holds it at its replication. With
   * `after`, only if the topic's last record is at that position (0: the topic has none): else it
   * rejects with a LogFencedError, and nothing is appended — what keeps a second writer out. `id`
   * (Nats-Msg-Id) makes an append sent again within the servers' duplicate window a no-op answering the
   * first one's position (a random one when not given).
   */
  append(topic: string, data: Uint8Array, after?: number, id?: string): Promise<number>;
  /**
   * What the servers show a client about their durability: the version in INFO and the stream's
   * persist_mode (actors/queue/durability.ts). Absent on a log that is not a server's.
   */
  readonly servers?: { version: string; persistMode?: string };
  /** Names this log apart from any other, one deleted and made again under the same name included. */
  readonly identity?: string;
  /** Calls `listener` each time the connection to the servers comes back after a drop; returns the unsubscribe. */
  onReconnect?(listener: () => void): () => void;
  /** Hands the records matching the pattern from position `from` on, in order, to `onRecords` (in chunks, each awaited); ends at the last record that existed when the read began. */
  read(pattern: string, onRecords: (records: LogRecord[]) => void | Promise<void>, from?: number): Promise<void>;
  /** How many records match the pattern. */
  count(pattern: string): Promise<number>;
  /** The last record of one topic. */
  last(topic: string): Promise<LogRecord | undefined>;
  /** The position of the last record of the log (any topic; 0 when empty). */
  end(): Promise<number>;
  /** Removes the records matching the pattern (those before position `before`, when given); resolves with how many. */
  purge(pattern: string, before?: number): Promise<number>;
}

/** An append with `after` found another writer's record there: this writer no longer holds the log. */
export class LogFencedError extends UnavailableError {
  /** Marks the error apart from other 503s (its name stays UnavailableError's). */
  readonly fenced = true;
}

/** A value of a shared bucket and its revision (each write of a key gives it a higher one). */
export interface Revised {
  value: string;
  revision: number;
}

/**
 * A key-value bucket shared by the nodes of one hive, with compare-and-set writes: what several
 * nodes decide together (one active poller and its high-water mark: actors/hive/lease.ts)
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
  /**
   * Tells `listener` when a key is removed (a holder giving its lease up), where the bucket can: a
   * hint that may be missed — whoever relies on it polls as well. Returns the unsubscribe.
   */
  onRemoved?(key: string, listener: () => void): () => void;
}

/**
 * A service NAME as a word of a shared bucket's key or a shared log's name: itself when the key
 * alphabet holds it, else `x-` and its hex (the two never collide).
 */
export function sharedNameWord(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : `x-${Buffer.from(name).toString('hex')}`;
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
export function deliverTo(
  listener: Listener,
  mode: DeliveryMode,
  channel: string,
  message: Message,
  answer: (r: Result) => void,
): void {
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
