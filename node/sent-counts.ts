/**
 * How many messages each service sent on each channel since the node started, for the console's
 * flow (every arrow labelled with its own rate) and the hive roster (other nodes draw this node's
 * arrows with theirs). Each service holds a view of the hive that counts as it sends: one counter
 * per (service, channel), made at the first send on a channel and bumped in place after that — no
 * allocation per message. A service sending to ever new channels (a queue entry's own `channel`)
 * stops getting new counters at MAX_CHANNELS; those sends are not drawn anyway.
 */
import { HiveClient } from '../actors/hive/client.js';
import type { BridgeMsg } from '../actors/hive/bridge.js';
import type { HiveTransport } from '../actors/hive/transport.js';
import type { Message, Result } from '../protocol/message.js';
import type { ActorRef, Runtime } from '../supervisors/runtime.js';

const MAX_CHANNELS = 256;

/** One count, bumped in place. */
export interface SentCounter {
  n: number;
}

/** A service's counters by channel. */
export type SentByChannel = ReadonlyMap<string, Readonly<SentCounter>>;

/** A service's hive: the node's, counting what it sends by channel. */
class CountingHive extends HiveClient {
  constructor(
    runtime: Runtime,
    bridge: ActorRef<BridgeMsg>,
    transport: HiveTransport,
    private readonly sent: Map<string, SentCounter>,
  ) {
    super(runtime, bridge, transport);
  }

  private count(channel: string): void {
    const counter = this.sent.get(channel);
    if (counter) counter.n++;
    else if (this.sent.size < MAX_CHANNELS) this.sent.set(channel, { n: 1 });
  }

  override call(channel: string, message: Message, timeoutMs: number): Promise<Result> {
    this.count(channel);
    return super.call(channel, message, timeoutMs);
  }

  override execute(channel: string, message: Message, timeoutMs: number): Promise<Result> {
    this.count(channel);
    return super.execute(channel, message, timeoutMs);
  }

  // emit goes through emitTold (client.ts), so counting here counts both — the syslog receiver emits
  // with emitTold alone
  override emitTold(channel: string, message: Message, delivered: (delivered: boolean) => void): void {
    this.count(channel);
    super.emitTold(channel, message, delivered);
  }
}

export class SentCounts {
  private readonly bySender = new Map<string, Map<string, SentCounter>>();

  constructor(
    private readonly runtime: Runtime,
    private readonly bridge: ActorRef<BridgeMsg>,
    private readonly transport: HiveTransport,
  ) {}

  /** The hive for the service `sender`: the node's, counting its sends. */
  hiveFor(sender: string): HiveClient {
    const sent = new Map<string, SentCounter>();
    this.bySender.set(sender, sent);
    return new CountingHive(this.runtime, this.bridge, this.transport, sent);
  }

  /** What `sender` has sent by channel (empty for a service that sent nothing). */
  of(sender: string): SentByChannel {
    return this.bySender.get(sender) ?? new Map();
  }
}
