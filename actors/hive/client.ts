/**
 * What services hold of the hive: call, execute, emit and listen, all through the bridge actor.
 * Calls always resolve with a Result (never reject), so every failure has a Code.
 */
import { Code } from '../../protocol/codes.js';
import type { Message, Result } from '../../protocol/message.js';
import { failure } from '../../protocol/message.js';
import type { ActorRef, Runtime } from '../../supervisors/runtime.js';
import { onUndelivered } from '../../supervisors/runtime.js';
import type { BridgeMsg } from './bridge.js';
import type {
  ChannelHold,
  HiveTransport,
  Listener,
  SharedBucket,
  SharedLog,
  SharedLogOptions,
  Subscription,
  TemplateBucket,
  TransportStats,
} from './transport.js';

/** A call or execute for the bridge; answered 503 if the bridge cannot take it (see undelivered.ts on the class). */
class BridgeRequest {
  constructor(
    readonly type: 'call' | 'execute',
    readonly channel: string,
    readonly message: Message,
    readonly timeoutMs: number,
    readonly reply: (r: Result) => void,
  ) {}

  [onUndelivered](): void {
    this.reply(failure(Code.Unavailable, 'the hive bridge is not running'));
  }
}

/** An emit for the bridge; counts as not delivered if the bridge cannot take it. */
class BridgeEmit {
  readonly type = 'emit';
  constructor(
    readonly channel: string,
    readonly message: Message,
    readonly reply: (delivered: boolean) => void,
  ) {}

  [onUndelivered](): void {
    this.reply(false);
  }
}

export class HiveClient {
  constructor(
    private readonly runtime: Runtime,
    private readonly bridge: ActorRef<BridgeMsg>,
    private readonly transport: HiveTransport,
  ) {}

  /** The transport kind, for status pages. */
  get kind(): 'memory' | 'nats' {
    return this.transport.kind;
  }

  isConnected(): boolean {
    return this.transport.isConnected();
  }

  stats(): TransportStats {
    return this.transport.stats();
  }

  /** Request-reply: resolves with the listener's Result, or 404/503/504 from the hive. */
  call(channel: string, message: Message, timeoutMs: number): Promise<Result> {
    return this.send('call', channel, message, timeoutMs);
  }

  /** Acknowledged hand-over: resolves with 200 once a listener has received the message. */
  execute(channel: string, message: Message, timeoutMs: number): Promise<Result> {
    return this.send('execute', channel, message, timeoutMs);
  }

  private send(type: 'call' | 'execute', channel: string, message: Message, timeoutMs: number): Promise<Result> {
    return new Promise<Result>((resolve) =>
      this.runtime.tell(this.bridge, new BridgeRequest(type, channel, message, timeoutMs, resolve)),
    );
  }

  /** Fire-and-forget; resolves with whether a listener got it (drops are counted by the transport). */
  emit(channel: string, message: Message): Promise<boolean> {
    return new Promise<boolean>((resolve) => this.emitTold(channel, message, resolve));
  }

  /**
   * `emit` for a hot path: `delivered` is told once the bridge has passed the message on (or could
   * not), with no promise of its own — a syslog receiver emits one message per frame.
   */
  emitTold(channel: string, message: Message, delivered: (delivered: boolean) => void): void {
    this.runtime.tell(this.bridge, new BridgeEmit(channel, message, delivered));
  }

  /** Listens on a channel; rejects with the reason when the channel name is invalid. */
  listen(channel: string, listener: Listener): Promise<Subscription> {
    return new Promise<Subscription>((resolve, reject) => {
      const msg: BridgeMsg & { [onUndelivered]?: (e: unknown) => void } = {
        type: 'listen',
        channel,
        listener,
        reply: (s) => (s instanceof Error ? reject(s) : resolve(s)),
        [onUndelivered]: reject,
      };
      this.runtime.tell(this.bridge, msg);
    });
  }

  /** The transport's own template bucket for a template channel, when it has one (NATS). */
  templateBucket(channel: string): Promise<TemplateBucket> | undefined {
    return this.transport.templates?.(channel);
  }

  /** A key-value bucket shared by the nodes of the hive, when the transport has them (NATS); undefined on the embedded hive. */
  sharedBucket(name: string): Promise<SharedBucket> | undefined {
    return this.transport.sharedBucket?.(name);
  }

  /** A replicated log shared by the nodes of the hive, when the transport has them (NATS: JetStream); undefined on the embedded hive. */
  sharedLog(name: string, options: SharedLogOptions): Promise<SharedLog> | undefined {
    return this.transport.sharedLog?.(name, options);
  }

  /** Holds a channel served by one listener of the hive at a time (transport.ts, ChannelHold), when the transport can (NATS); undefined on the embedded hive. */
  holdChannel(channel: string): ChannelHold | undefined {
    return this.transport.holdChannel?.(channel);
  }

  /** Closes the transport (the NATS connection drains); later calls answer 503. */
  close(): Promise<void> {
    return this.transport.close();
  }

  unlisten(subscription: Subscription): void {
    this.runtime.tell(this.bridge, { type: 'unlisten', subscription });
  }
}
