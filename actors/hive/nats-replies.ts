/**
 * Request-reply on the NATS hive over ONE wildcard inbox subscription per connection: each request
 * publishes with the reply subject `<inbox>.<n>` and waits in a map for the message arriving there.
 *
 * Why not `nc.request`: nats.js builds two Error objects per request (a stack for a possible failure,
 * and one more when it cancels the already-answered request), which measured as a third of the CPU
 * of a hive call at 64 in flight. Here nothing is allocated for a failure that does not happen; the
 * protocol is the same (nats-server answers a request nobody listens to with a 503 status message on
 * the reply subject, which nats.js's own mux reads the same way).
 */
import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';
import { createInbox } from '@nats-io/transport-node';
import type { Deadline } from '../shared/deadlines.js';
import { Deadlines } from '../shared/deadlines.js';
import { describeError } from '../../protocol/errors.js';

/** Why a request got no answer. */
export const NoReply = {
  /** nats-server found no subscriber for the subject. */
  NoResponders: 'no-responders',
  Timeout: 'timeout',
  /** The connection dropped or closed while the request waited. */
  Disconnected: 'disconnected',
  /** The listener that had the request is known to be gone (a queue's holder replaced: ReplyMux.failSent). */
  ListenerGone: 'listener-gone',
} as const;
export type NoReply = (typeof NoReply)[keyof typeof NoReply];

export class NoReplyError extends Error {
  override readonly name = 'NoReplyError';
  constructor(
    readonly reason: NoReply,
    message: string,
  ) {
    super(message);
  }
}

interface Pending {
  resolve: (m: Msg) => void;
  reject: (e: NoReplyError) => void;
  /** Under the mux's shared timer, as every hive call's deadline (see actors/shared/deadlines.ts). */
  deadline: Deadline;
  subject: string;
  /** When it was published (Date.now()). */
  sent: number;
}

export class ReplyMux {
  private readonly inbox = createInbox();
  private readonly pending = new Map<string, Pending>();
  private readonly sub: Subscription;
  private readonly deadlines = new Deadlines();
  private next = 0;

  constructor(private readonly nc: NatsConnection) {
    this.sub = nc.subscribe(`${this.inbox}.*`, { callback: (_err, msg) => this.settle(msg) });
  }

  request(subject: string, payload: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Msg> {
    const reply = `${this.inbox}.${(this.next++).toString(36)}`;
    return new Promise<Msg>((resolve, reject) => {
      const deadline = this.deadlines.start(timeoutMs, () => {
        this.pending.delete(reply);
        reject(new NoReplyError(NoReply.Timeout, `no answer within ${timeoutMs} ms`));
      });
      this.pending.set(reply, { resolve, reject, deadline, subject, sent: Date.now() });
      try {
        this.nc.publish(subject, payload, headers ? { reply, headers } : { reply });
      } catch (e) {
        this.fail(reply, NoReply.Disconnected, describeError(e));
      }
    });
  }

  /** Fails every waiting request at once (the connection dropped: their answers cannot come). */
  failAll(reason: NoReply, message: string): void {
    for (const reply of [...this.pending.keys()]) this.fail(reply, reason, message);
  }

  /**
   * Fails the requests to `subject` published before `sentBefore` (Date.now() time) as ListenerGone:
   * the listener that took them is known to be gone, so their answers will not come.
   */
  failSent(subject: string, sentBefore: number, message: string): number {
    let failed = 0;
    for (const [reply, p] of [...this.pending]) {
      if (p.subject !== subject || p.sent >= sentBefore) continue;
      this.fail(reply, NoReply.ListenerGone, message);
      failed++;
    }
    return failed;
  }

  close(): void {
    this.failAll(NoReply.Disconnected, 'the hive connection closed');
    this.sub.unsubscribe();
  }

  private fail(reply: string, reason: NoReply, message: string): void {
    const p = this.pending.get(reply);
    if (!p) return;
    this.pending.delete(reply);
    this.deadlines.settle(p.deadline);
    p.reject(new NoReplyError(reason, message));
  }

  private settle(msg: Msg): void {
    const p = this.pending.get(msg.subject);
    if (!p) return; // answered after its timeout: nobody waits for it any more
    if (msg.data.length === 0 && msg.headers?.code === 503)
      return this.fail(msg.subject, NoReply.NoResponders, 'no responders');
    this.pending.delete(msg.subject);
    this.deadlines.settle(p.deadline);
    p.resolve(msg);
  }
}
