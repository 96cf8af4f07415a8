/**
 * The NATS hive (docs/ARCHITECTURE.md, The hive): subject `hive.<channel>`, queue group = channel
 * (so listeners on a channel share its load across processes), request timeouts passed explicitly
 * (the client's default is 1 s), reconnecting forever. A message published while disconnected would
 * be lost by the client, so calls fail at once with 503 instead; no responders → 404 at once; a
 * payload over the server's maximum → 413. `execute` is a request answered by the listener's
 * acknowledgement of receipt (header Hive-Mode: execute).
 */
import { connect } from '@nats-io/transport-node';
import type { Msg, NatsConnection, Subscription as NatsSubscription } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { Code } from '../../protocol/codes.js';
import { describeError } from '../../protocol/errors.js';
import type { HiveAccess } from '../../config/hive-access.js';
import type { Message, Result } from '../../protocol/message.js';
import { failure, resultFromError } from '../../protocol/message.js';
import { decodeMessage, decodeResult } from '../../protocol/wire.js';
import type { Logger } from '../observe/logger.js';
import type {
  ChannelHold,
  DeliveryMode,
  HiveTransport,
  Listener,
  SharedBucket,
  SharedLog,
  SharedLogOptions,
  Subscription,
  TemplateBucket,
  TransportStats,
} from './transport.js';
import { NatsSharedLog } from './nats-log.js';
import { deliverTo, unservedResult } from './transport.js';
import { NoReply, NoReplyError, ReplyMux } from './nats-replies.js';
import { connectError, natsAccessOptions, probeTls } from './nats-access.js';

const MODE_HEADER = 'Hive-Mode';
/** The Hive-Mode of a probe: the listening side's transport answers it itself (ChannelHold.served). */
const PROBE = 'probe';
const PROBE_TIMEOUT_MS = 1_000;
/** A request to a held channel that found no listener is sent again after these pauses (ms; the last repeats). */
const HOLD_PAUSES = [25, 50, 100, 200] as const;
/** A held channel's wait ends this long before the request's timeout, so its 503 reaches the caller before the caller gives up. */
const HOLD_MARGIN_MS = 100;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/**
 * Payloads are encoded with Buffer.from, not TextEncoder: a hive payload is short, and Buffer.from
 * slices it out of Node's 8 KiB pool where TextEncoder allocates an ArrayBuffer for each (measured
 * 118 ns against 306–428 ns for a 110-byte message, and fewer buffers for the collector). Decoding
 * stays with TextDecoder, the faster of the two there (74 ns against 158 ns).
 */
const encode = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const decoder = new TextDecoder();

export interface NatsOptions {
  /** `nats://host:port` or `tls://host:port` (several separated by commas). */
  servers: string;
  /** Credential and TLS material (config/hive-access.ts), read and checked already. */
  access: HiveAccess;
  name: string;
  log: Logger;
}

/** The subject of a channel. */
export function subjectOf(channel: string): string {
  return `hive.${channel}`;
}

/**
 * How often the client pings its server, and how many pings may go unanswered before it takes the
 * connection for dead and moves to another server. The client's defaults (2 minutes, 2) leave a node
 * whose server was cut off from the network — its TCP connection silent, not closed — sending into
 * the void for up to 6 minutes, its requests unanswered and its queue lease unrenewed; with these it
 * notices within 6–8 s and moves to another server (spec/reliability/partition.spec.ts, three hosts).
 */
const PING_INTERVAL_MS = 2_000;
const MAX_PINGS_OUT = 3;
/**
 * How long one connection attempt may take. The client's default (20 s) is spent in full on a server
 * whose host is cut off (its SYN unanswered) before the next server of the list is tried.
 */
const CONNECT_TIMEOUT_MS = 5_000;

export class NatsTransport implements HiveTransport {
  readonly kind = 'nats' as const;
  private nc: NatsConnection | undefined;
  private replies: ReplyMux | undefined;
  private connected = false;
  private readonly counters: TransportStats = { calls: 0, executes: 0, emits: 0, dropped: 0, failures: 0 };
  /** Held channels (ChannelHold) and how many holds each has. */
  private readonly held = new Map<string, number>();

  constructor(private readonly opts: NatsOptions) {}

  async connect(): Promise<void> {
    const servers = this.opts.servers.split(',').map((s) => s.trim());
    const access = natsAccessOptions(this.opts.access, servers);
    if (access.tls) await probeTls(servers, this.opts.access);
    try {
      this.nc = await connect({
        servers,
        name: this.opts.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        waitOnFirstConnect: false,
        pingInterval: PING_INTERVAL_MS,
        maxPingOut: MAX_PINGS_OUT,
        timeout: CONNECT_TIMEOUT_MS,
        ...access,
      });
    } catch (e) {
      throw connectError(e, this.opts.servers, this.opts.access);
    }
    this.connected = true;
    this.replies = new ReplyMux(this.nc);
    void this.watch(this.nc);
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.connected = false;
        // answers to requests sent before the drop will not come: fail them now, not at their timeout
        this.replies?.failAll(NoReply.Disconnected, `the hive connection to ${this.opts.servers} dropped`);
        this.opts.log.warn(`hive disconnected from ${this.opts.servers}; reconnecting`);
      } else if (s.type === 'reconnect') {
        this.connected = true;
        this.opts.log.info(`hive reconnected to ${this.opts.servers}`);
      }
    }
  }

  async close(): Promise<void> {
    this.connected = false;
    this.replies?.close();
    await this.nc?.drain().catch(() => undefined);
  }

  isConnected(): boolean {
    return this.connected && this.nc !== undefined && !this.nc.isClosed();
  }

  stats(): TransportStats {
    return { ...this.counters };
  }

  /** A ready connection and the payload, or the Result explaining why not. */
  private prepare(
    channel: string,
    message: Message,
  ): { nc: NatsConnection; replies: ReplyMux; payload: Uint8Array } | Result {
    if (!this.nc || !this.replies || !this.isConnected())
      return failure(Code.Unavailable, `the hive (${this.opts.servers}) is not connected`);
    const payload = encode(JSON.stringify(message));
    const max = this.nc.info?.max_payload ?? 1024 * 1024;
    if (payload.length > max)
      return failure(
        Code.TooLarge,
        `the message to '${channel}' is ${payload.length} bytes; the hive accepts at most ${max}`,
      );
    return { nc: this.nc, replies: this.replies, payload };
  }

  call(channel: string, message: Message, timeoutMs: number, answer: (r: Result) => void): void {
    this.counters.calls++;
    void this.request('call', channel, message, timeoutMs).then(answer, (e: unknown) => answer(resultFromError(e)));
  }

  execute(channel: string, message: Message, timeoutMs: number, answer: (r: Result) => void): void {
    this.counters.executes++;
    void this.request('execute', channel, message, timeoutMs).then(answer, (e: unknown) => answer(resultFromError(e)));
  }

  /** `call` as a promise, for the command line (which has no bridge). */
  callAsync(channel: string, message: Message, timeoutMs: number, mode: 'call' | 'execute' = 'call'): Promise<Result> {
    return new Promise((resolve) =>
      mode === 'call'
        ? this.call(channel, message, timeoutMs, resolve)
        : this.execute(channel, message, timeoutMs, resolve),
    );
  }

  private async request(
    mode: 'call' | 'execute',
    channel: string,
    message: Message,
    timeoutMs: number,
  ): Promise<Result> {
    const ready = this.prepare(channel, message);
    if (!('nc' in ready)) {
      this.counters.failures++;
      return ready;
    }
    // only execute carries a header: a call without one is cheaper to encode and decode
    let headers: ReturnType<typeof natsHeaders> | undefined;
    if (mode === 'execute') {
      headers = natsHeaders();
      headers.set(MODE_HEADER, mode);
    }
    // only a held channel's request may be sent again, so only it reads the clock
    const until = this.held.size > 0 ? Date.now() + timeoutMs : 0;
    try {
      const reply = await ready.replies.request(subjectOf(channel), ready.payload, timeoutMs, headers);
      return decodeResult(decoder.decode(reply.data), `answer from '${channel}'`);
    } catch (e) {
      if (e instanceof NoReplyError && e.reason === NoReply.NoResponders && this.held.has(channel))
        return this.awaitListener({ payload: ready.payload, mode, channel, headers }, until, timeoutMs);
      this.counters.failures++;
      return this.noAnswer(e, mode, channel, timeoutMs);
    }
  }

  /**
   * A held channel that has no listener is changing hands (a queue's holder died or stepped down and
   * another is taking over): the request is sent again until a listener takes it, or answered 503
   * just before its timeout. Nothing was delivered while nobody listened, so sending again cannot
   * double anything.
   */
  private async awaitListener(
    request: {
      payload: Uint8Array;
      mode: 'call' | 'execute';
      channel: string;
      headers: ReturnType<typeof natsHeaders> | undefined;
    },
    until: number,
    timeoutMs: number,
  ): Promise<Result> {
    const { payload, mode, channel, headers } = request;
    for (let i = 0; ; i++) {
      const pause = HOLD_PAUSES[Math.min(i, HOLD_PAUSES.length - 1)]!;
      if (until - Date.now() - pause <= HOLD_MARGIN_MS || !this.held.has(channel)) break;
      await sleep(pause);
      if (!this.replies || !this.isConnected()) {
        this.counters.failures++;
        return failure(Code.Unavailable, `the hive (${this.opts.servers}) is not connected`);
      }
      try {
        const reply = await this.replies.request(subjectOf(channel), payload, Math.max(1, until - Date.now()), headers);
        return decodeResult(decoder.decode(reply.data), `answer from '${channel}'`);
      } catch (e) {
        if (e instanceof NoReplyError && e.reason === NoReply.NoResponders) continue;
        this.counters.failures++;
        return this.noAnswer(e, mode, channel, timeoutMs);
      }
    }
    this.counters.failures++;
    return failure(
      Code.Unavailable,
      `no node serves channel '${channel}' yet: the queue there is changing hands (no holder within ${timeoutMs} ms); retry shortly`,
    );
  }

  /** The Result of a request that got no answer. */
  private noAnswer(e: unknown, mode: 'call' | 'execute', channel: string, timeoutMs: number): Result {
    if (!(e instanceof NoReplyError)) return resultFromError(e);
    switch (e.reason) {
      case NoReply.NoResponders:
        return unservedResult(channel);
      case NoReply.Timeout:
        return failure(
          Code.Timeout,
          `channel '${channel}' did not ${mode === 'call' ? 'answer' : 'acknowledge'} within ${timeoutMs} ms`,
        );
      case NoReply.Disconnected:
        return failure(Code.Unavailable, `the hive connection failed: ${e.message}`);
      case NoReply.ListenerGone:
        return failure(Code.Unavailable, e.message);
    }
  }

  /** Holds a channel (transport.ts, ChannelHold): its requests that find no listener wait for one. */
  holdChannel(channel: string): ChannelHold {
    this.held.set(channel, (this.held.get(channel) ?? 0) + 1);
    let released = false;
    return {
      served: () => this.probe(channel),
      listenerGone: (sentBefore) => {
        const message = `the node serving channel '${channel}' stopped while it had this request (the queue there changed hands); it may have been added before — retry (with an idempotency-key, a retry adds it once)`;
        const failed = this.replies?.failSent(subjectOf(channel), sentBefore, message) ?? 0;
        if (failed > 0)
          this.opts.log.warn(
            `${failed} request(s) to channel '${channel}' answered 503: the node serving it stopped while it had them`,
          );
      },
      release: () => {
        if (released) return;
        released = true;
        const holds = (this.held.get(channel) ?? 1) - 1;
        if (holds > 0) this.held.set(channel, holds);
        else this.held.delete(channel);
      },
    };
  }

  /** Whether any listener answers on the channel: a probe, answered by the listening side's transport without its listener. */
  private async probe(channel: string): Promise<boolean> {
    if (!this.replies || !this.isConnected()) return false;
    const headers = natsHeaders();
    headers.set(MODE_HEADER, PROBE);
    try {
      await this.replies.request(subjectOf(channel), new Uint8Array(0), PROBE_TIMEOUT_MS, headers);
      return true;
    } catch {
      return false;
    }
  }

  emit(channel: string, message: Message): boolean {
    this.counters.emits++;
    const ready = this.prepare(channel, message);
    if (!('nc' in ready)) {
      this.counters.dropped++;
      return false;
    }
    try {
      ready.nc.publish(subjectOf(channel), ready.payload);
      return true;
    } catch {
      this.counters.dropped++;
      return false;
    }
  }

  listen(channel: string, listener: Listener): Subscription {
    if (!this.nc) throw new Error('the NATS hive is not connected');
    const nc = this.nc;
    const sub: NatsSubscription = nc.subscribe(subjectOf(channel), {
      queue: channel,
      callback: (err, msg) => {
        if (err) {
          this.opts.log.warn(`subscription to '${channel}' failed: ${err.message}`);
          return;
        }
        this.deliver(channel, msg, listener);
      },
    });
    // drain, not unsubscribe: requests already on their way here are still answered
    return {
      channel,
      close: () =>
        sub
          .drain()
          .catch((e: unknown) => this.opts.log.debug(`draining the subscription to '${channel}': ${describeError(e)}`)),
    };
  }

  private deliver(channel: string, msg: Msg, listener: Listener): void {
    const modeHeader = msg.headers?.get(MODE_HEADER);
    if (modeHeader === PROBE) {
      if (msg.reply) msg.respond(encode(PROBE));
      return;
    }
    const answer = (r: Result): void => {
      if (msg.reply) msg.respond(encode(JSON.stringify(r)));
    };
    let message: Message;
    try {
      message = decodeMessage(decoder.decode(msg.data), `message on '${channel}'`);
    } catch (e) {
      answer(resultFromError(e));
      return;
    }
    const mode: DeliveryMode = !msg.reply ? 'emit' : modeHeader === 'execute' ? 'execute' : 'call';
    let answered = false;
    const once = (r: Result): void => {
      if (answered) return;
      answered = true;
      answer(r);
    };
    deliverTo(listener, mode, channel, message, once);
  }

  /** The template bucket of a template channel (hive:// templates on the NATS hive). */
  async templates(channel: string): Promise<TemplateBucket> {
    if (!this.nc) throw new Error('the NATS hive is not connected');
    const kv = await new Kvm(this.nc).create(channel);
    return {
      get: async (name) => {
        const e = await kv.get(name);
        return e && e.operation === 'PUT' ? e.string() : undefined;
      },
      put: async (name, content) => {
        await kv.put(name, content);
      },
      list: async () => {
        const names: string[] = [];
        for await (const k of await kv.keys()) names.push(k);
        return names.sort();
      },
      remove: async (name) => {
        await kv.delete(name);
      },
    };
  }

  /**
   * A KV bucket that outlives the loss of a server where it can: in a cluster it is made with three
   * replicas (a cluster of fewer JetStream servers refuses that: then one); an existing bucket is
   * opened as it was made.
   */
  private async replicatedBucket(name: string): Promise<Awaited<ReturnType<Kvm['create']>>> {
    const kvm = new Kvm(this.nc!);
    if (!this.nc!.info?.cluster) return kvm.create(name, { history: 1 });
    try {
      return await kvm.create(name, { history: 1, replicas: 3 });
    } catch (e) {
      const existing = await kvm
        .open(name)
        .then(async (kv) => ((await kv.status()) ? kv : undefined))
        .catch(() => undefined);
      if (existing) return existing;
      this.opts.log.warn(
        `the NATS cluster did not make bucket ${name} with 3 replicas (${describeError(e)}); it has one, on one server`,
      );
      return kvm.create(name, { history: 1 });
    }
  }

  /** A shared bucket (JetStream KV, one value per key kept): compare-and-set writes answer undefined when they lose. */
  async sharedBucket(name: string): Promise<SharedBucket> {
    if (!this.nc) throw new Error('the NATS hive is not connected');
    const nc = this.nc;
    const kv = await this.replicatedBucket(name);
    // a removal is told on core NATS too, so a lease given up is taken at once, not at the next poll
    const released = (key: string): string => `hivenode.released.${name}.${key}`;
    const lost = <T>(p: Promise<T>): Promise<T | undefined> =>
      p.catch((e: unknown) => {
        // JetStream refuses a write whose expected revision is not the key's (API error 10071)
        if (/wrong last sequence|10071|key exists/i.test(describeError(e))) return undefined;
        throw e;
      });
    return {
      get: async (key) => {
        const e = await kv.get(key);
        return e && e.operation === 'PUT' ? { value: e.string(), revision: e.revision } : undefined;
      },
      create: (key, value) => lost(kv.create(key, value)),
      update: (key, value, revision) => lost(kv.update(key, value, revision)),
      remove: async (key, revision) => {
        const removed = await lost(kv.delete(key, { previousSeq: revision }).then(() => true));
        if (removed) nc.publish(released(key));
      },
      onRemoved: (key, listener) => {
        const sub = nc.subscribe(released(key), { callback: () => listener() });
        return () => sub.unsubscribe();
      },
    };
  }

  /** A shared log: a JetStream stream of its own (nats-log.ts). */
  sharedLog(name: string, options: SharedLogOptions): Promise<SharedLog> {
    if (!this.nc) throw new Error('the NATS hive is not connected');
    return NatsSharedLog.open(this.nc, name, options, this.opts.log);
  }
}
