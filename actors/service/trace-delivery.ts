/**
 * A delivery's hop of its message's trace (docs/ARCHITECTURE.md, Tracing): the serve kit makes every
 * delivery to a service a span, child of the traceparent the message came with, and hands the
 * service the message carrying the span's own traceparent, so whatever the service sends on (an
 * HTTP request, a queue entry, a reply's Control) continues from it. The span ends with the answer.
 */
import type { Delivery } from '../hive/transport.js';
import { HopName } from '../observe/trace-hop.js';
import type { Hop } from '../observe/tracing.js';
import { recordedMessageHop, withHop } from '../observe/trace-message.js';
import type { NodeFacilities } from './context.js';

/** The span names of one service's deliveries: `<service> <Class>/<Operation>`. */
export const deliveryHopName = (service: string): HopName =>
  new HopName((cls, operation) => `${service} ${cls}/${operation}`);

/**
 * The hop of a delivery's message when spans are recorded (`recording()` true: see messageHop). When
 * nothing records, the serve kit makes no hop at all: the delivery is its own lazy trace scope
 * (serve.ts). `name`: the service's deliveryHopName.
 */
export function deliveryHop(ctx: NodeFacilities, delivery: Delivery, name: HopName): Hop | undefined {
  const { message } = delivery;
  return recordedMessageHop(message, 'server', name.of(message.Class, message.Operation), ctx.name, {
    'hivenode.channel': delivery.channel,
    'hivenode.mode': delivery.mode,
    'hivenode.class': message.Class,
    'hivenode.operation': message.Operation,
  });
}

/**
 * The delivery of a recorded hop (`hop.span` set): its message carries the span's traceparent, and
 * the answer ends the span. `endOnAck`: the service answers a successful execute by acknowledging
 * it only (the queue), so the acknowledgement ends the span too. One object per delivery (a literal
 * with closures for respond, ack and the end they share was four).
 */
export function recordedDelivery(delivery: Delivery, hop: Hop, endOnAck: boolean): Delivery {
  return new RecordedDelivery(delivery, hop, endOnAck);
}

class RecordedDelivery implements Delivery {
  readonly mode: Delivery['mode'];
  readonly channel: string;
  readonly message: Delivery['message'];
  private ended = false;

  constructor(
    private readonly delivery: Delivery,
    private readonly hop: Hop,
    private readonly endOnAck: boolean,
  ) {
    this.mode = delivery.mode;
    this.channel = delivery.channel;
    this.message = withHop(delivery.message, hop);
  }

  respond(result: Parameters<Delivery['respond']>[0]): void {
    this.end(result.Code, result.Message);
    this.delivery.respond(result);
  }

  ack(): void {
    if (this.endOnAck) this.end(200);
    this.delivery.ack();
  }

  private end(code: number, text?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.hop.end(code, text);
  }
}
