/**
 * Each delivery attempt of a queue entry is a span of the entry's trace (docs/ARCHITECTURE.md,
 * Tracing): the entry keeps the traceparent of the span that added it (its Control travels with it
 * through the store), so an attempt hours later, after a restart even, is that span's child, and
 * the service it reaches continues from the attempt.
 */
import type { Message } from '../../protocol/message.js';
import { messageHop, withHop } from '../observe/trace-message.js';
import type { Hop } from '../observe/tracing.js';
import type { DeliveryMode } from './entry.js';

/** What an attempt's span is named by: the delivery's message and where it goes (delivery.ts's DeliverMsg has these). */
export interface Attempt {
  readonly message: Message;
  readonly key: string;
  readonly attempt?: number | undefined;
  readonly channel: string;
  readonly mode: DeliveryMode;
  /** A batch: its entries' keys (the span is in the trace of the first). */
  readonly batch?: { readonly keys: readonly string[] } | undefined;
}

/** The attempt's hop and the entry's message carrying it. */
export function attemptHop(service: string, msg: Attempt): { hop: Hop | undefined; message: Message } {
  const hop = messageHop(msg.message, 'client', false, () => ({
    name: `${service} deliver`,
    service,
    attributes: {
      'hivenode.queue.key': msg.key,
      'hivenode.queue.attempt': msg.attempt ?? 0,
      'hivenode.channel': msg.channel,
      'hivenode.mode': msg.mode,
      ...(msg.batch ? { 'hivenode.queue.batch': msg.batch.keys.length } : {}),
    },
  }));
  return { hop, message: withHop(msg.message, hop) };
}
