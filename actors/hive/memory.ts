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
import { Deadlines } from '../shared/deadlines.js';

interface ChannelListeners {
  listeners: Listener[];
  next: number;
}

export class MemoryTransport implements HiveTransport {
  readonly kind = 'memory' as const;
  private readonly channels = new Map<string, ChannelListeners>();
  private open = true;
  private readonly counters: TransportStats = { calls: 0, executes: 0, emits: 0, dropped: 0, failures: 0 };
  private readonly deadlines = new Deadlines();

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
    return this.open
      ? failure(Code.NotFound, `no service listens on channel '${channel}'`)
      : failure(Code.Unavailable, 'the hive is closed');
  }

  call(channel: string, message: Message, timeoutMs: number, answer: (r: Result) => void): void {
    this.counters.calls++;
    this.deliver('call', channel, message, timeoutMs, answer);
  }

  execute(channel: string, message: Message, timeoutMs: number, answer: (r: Result) => void): void {
    this.counters.executes++;
    this.deliver('execute', channel, message, timeoutMs, answer);
  }

  private deliver(
    mode: DeliveryMode,
    channel: string,
    message: Message,
    timeoutMs: number,
    answer: (r: Result) => void,
  ): void {
    const listener = this.open ? this.pick(channel) : undefined;
    if (!listener) return answer(this.unserved(channel));
    const deadline = this.deadlines.start(timeoutMs, () => {
      this.counters.failures++;
      answer(
        failure(
          Code.Timeout,
          `channel '${channel}' did not ${mode === 'call' ? 'answer' : 'acknowledge'} within ${timeoutMs} ms`,
        ),
      );
    });
    // the first of the listener's answer and the deadline wins; a late answer is dropped
    deliverTo(listener, mode, channel, message, (r) => {
      if (this.deadlines.settle(deadline)) answer(r);
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
