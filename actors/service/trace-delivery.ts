/**
 * A delivery's hop of its message's trace (docs/ARCHITECTURE.md, Tracing): the serve kit makes every
 * delivery to a service a span, child of the traceparent the message came with, and hands the
 * service the message carrying the span's own traceparent, so whatever the service sends on (an
 * HTTP request, a queue entry, a reply's Control) continues from it. The span ends with the answer.
 */
import type { Delivery } from '../hive/transport.js';
import type { Hop } from '../shared/tracing.js';
import { messageHop, withHop } from '../shared/trace-message.js';
import type { NodeFacilities } from './context.js';

/**
 * The delivery in its trace, or undefined when tracing is off or the message carries no trace and
 * none is recorded. `endOnAck`: the service answers a successful execute by acknowledging it only
 * (the queue), so the acknowledgement ends the span too.
 */
export function tracedDelivery(ctx: NodeFacilities, delivery: Delivery, endOnAck: boolean): { delivery: Delivery; hop: Hop } | undefined {
  const { message } = delivery;
  const hop = messageHop(message, 'server', false, () => ({
    name: `${ctx.name} ${message.Class}/${message.Operation}`,
    service: ctx.name,
    attributes: { 'hivenode.channel': delivery.channel, 'hivenode.mode': delivery.mode, 'hivenode.class': message.Class, 'hivenode.operation': message.Operation },
  }));
  if (hop === undefined) return undefined;
  // nothing recorded: the message already carries the trace, and the delivery goes on as it came
  if (hop.span === undefined) return { delivery, hop };
  let ended = false;
  const end = (code: number, text?: string): void => {
    if (ended) return;
    ended = true;
    hop.end(code, text);
  };
  return {
    hop,
    delivery: {
      mode: delivery.mode,
      channel: delivery.channel,
      message: withHop(message, hop),
      respond(result) {
        end(result.Code, result.Message);
        delivery.respond(result);
      },
      ack() {
        if (endOnAck) end(200);
        delivery.ack();
      },
    },
  };
}
