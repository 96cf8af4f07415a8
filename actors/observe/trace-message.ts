/**
 * A message's trace (docs/ARCHITECTURE.md, Tracing): the hop that continues the trace in its Control
 * `traceparent` (and `tracestate`), and the message passed on with the hop's traceparent, so the
 * next service's span is a child of this one. The message is copied only when the traceparent
 * changes (a recorded span): in propagate mode the message travels as it came, by reference.
 */
import type { Attributes } from '@opentelemetry/api';
import type { Message, ValueMap } from '../../protocol/message.js';
import { copyMap, firstValue } from '../../protocol/message.js';
import { TRACEPARENT, TRACESTATE } from './trace-context.js';
import type { Hop, HopKind } from './tracing.js';
import { attachSpan, messageWithSpan, spanParent } from './trace-scope.js';
import { carriedHop, recordedHop, recording, tracingMode } from './tracing.js';

/**
 * The hop of `message`'s trace (see tracing.ts: beginHop); undefined when tracing is off or there is no trace to
 * carry. `describe` names the hop and gives its attributes: called only when a span records it.
 */
export function messageHop(
  message: Message,
  kind: HopKind,
  start: boolean,
  describe: () => { name: string; service: string; attributes?: Attributes },
): Hop | undefined {
  if (tracingMode() === 'off') return undefined;
  if (!recording()) return carriedMessageHop(message, start);
  const { name, service, attributes } = describe();
  return recordedMessageHop(message, kind, name, service, attributes ?? {});
}

/**
 * messageHop (without `start`) when `recording()` is true, for the hot paths: no closure describing
 * the hop, and the Control read as carriedMessageHop reads it.
 */
export function recordedMessageHop(
  message: Message,
  kind: HopKind,
  name: string,
  service: string,
  attributes: Attributes,
): Hop | undefined {
  const control = message.Control;
  const traceparent = control[TRACEPARENT]?.[0];
  return recordedHop(
    name,
    service,
    kind,
    traceparent,
    control[TRACESTATE]?.[0],
    attributes,
    spanParent(message, traceparent),
  );
}

/**
 * messageHop when nothing records (`recording()` false). A Control is a null-prototype map, so a
 * plain read finds only its own keys: no Object.hasOwn call per key (firstValue's guard for maps
 * that might not be).
 */
function carriedMessageHop(message: Message, start: boolean): Hop | undefined {
  if (tracingMode() === 'off') return undefined;
  const control = message.Control;
  return carriedHop(control[TRACEPARENT]?.[0], control[TRACESTATE]?.[0], start);
}

/** Puts `hop`'s trace into a Control map of the caller's own (a message being built). */
function putHop(control: ValueMap, hop: Hop | undefined): void {
  if (hop === undefined) return;
  control[TRACEPARENT] = [hop.traceparent];
  if (hop.tracestate) control[TRACESTATE] = [hop.tracestate];
  // only when there is one to delete (a Control is a null-prototype map: a plain read finds only its own keys)
  else if (control[TRACESTATE] !== undefined) delete control[TRACESTATE];
}

/**
 * Puts `hop`'s trace into the Control of a message a front door has just made (its own), and carries
 * the hop's span on it for the service the message reaches in this process (trace-scope.ts: spanParent).
 */
export function putMessageHop(message: Message, hop: Hop | undefined): void {
  if (hop === undefined) return;
  putHop(message.Control, hop);
  attachSpan(message, hop.span);
}

/**
 * `message` carrying `hop`'s trace in its Control: itself when it already does, else a copy. A
 * recorded span's traceparent is new (its own span id), so it is not compared: a span's is put
 * together from its ids, and comparing it with the one the message came with flattened it and read
 * the 36 characters both begin with (~500 instructions a delivery).
 */
export function withHop(message: Message, hop: Hop | undefined): Message {
  if (hop === undefined || (hop.span === undefined && firstValue(message.Control, TRACEPARENT) === hop.traceparent))
    return message;
  const control = copyMap(message.Control);
  putHop(control, hop);
  return messageWithSpan(message, control, hop.span);
}
