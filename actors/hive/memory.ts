/**
 * The embedded hive: in-process channels with round-robin load sharing between the listeners of a
 * channel. Messages are passed by reference (no JSON copy): services treat received messages as
 * read-only.
 */
import { Code } from '../../protocol/codes.js';
import type { Message, Result } from '../../protocol/message.js';
import { failure } from '../../protocol/message.js';
import type { DeliveryMode, HiveTransport, Listener, Subscription, TransportStats } from './transport.js';
import { deliverTo } from './transport.js';

interface ChannelListeners {
  listeners: Listener[];
  next: number;
}

export class MemoryTransport implements HiveTransport {
  readonly kind = 'memory' as const;
  private readonly channels = new Map<string, ChannelListeners>();
  private open = true;
  private readonly counters: TransportStats = { calls: 0, executes: 0, emits: 0, dropped: 0, failures: 0 };

  async connect(): Promise<void> {
    this.open = true;
  }

  async close(): Promise<void> {
    this.open = false;
    this.channels.clear();
  }

  isConnected(): boolean {
    return this.open;
  }

  stats(): TransportStats {
    return { ...this.counters };
  }

  private pick(channel: string): Listener | undefined {
    const c = this.channels.get(channel);
    if (!c || c.listeners.length === 0) return undefined;
    const l = c.listeners[c.next % c.listeners.length];
    c.next = (c.next + 1) % c.listeners.length;
    return l;
  }

  private unserved(channel: string): Result {
    this.counters.failures++;
    return this.open ? failure(Code.NotFound, `no service listens on channel '${channel}'`) : failure(Code.Unavailable, 'the hive is closed');
  }

  call(channel: string, message: Message, timeoutMs: number): Promise<Result> {
    this.counters.calls++;
    return this.deliver('call', channel, message, timeoutMs);
  }

  execute(channel: string, message: Message, timeoutMs: number): Promise<Result> {
    this.counters.executes++;
    return this.deliver('execute', channel, message, timeoutMs);
  }

  private deliver(mode: DeliveryMode, channel: string, message: Message, timeoutMs: number): Promise<Result> {
    const listener = this.open ? this.pick(channel) : undefined;
    if (!listener) return Promise.resolve(this.unserved(channel));
    return new Promise<Result>((resolve) => {
      let done = false;
      const finish = (r: Result): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(r);
      };
      const timer = setTimeout(() => {
        if (done) return;
        this.counters.failures++;
        finish(failure(Code.Timeout, `channel '${channel}' did not ${mode === 'call' ? 'answer' : 'acknowledge'} within ${timeoutMs} ms`));
      }, timeoutMs);
      deliverTo(listener, mode, channel, message, finish);
    });
  }

  emit(channel: string, message: Message): boolean {
    this.counters.emits++;
    const listener = this.open ? this.pick(channel) : undefined;
    if (!listener) {
      this.counters.dropped++;
      return false;
    }
    deliverTo(listener, 'emit', channel, message, () => undefined);
    return true;
  }

  listen(channel: string, listener: Listener): Subscription {
    let c = this.channels.get(channel);
    if (!c) this.channels.set(channel, (c = { listeners: [], next: 0 }));
    c.listeners.push(listener);
    const entry = c;
    return {
      channel,
      close: () => {
        const i = entry.listeners.indexOf(listener);
        if (i >= 0) entry.listeners.splice(i, 1);
      },
    };
  }
}
