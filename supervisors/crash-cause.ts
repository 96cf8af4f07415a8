/**
 * The message an actor was handling when it crashed, as one short line for the journal: the hive
 * message inside it (Class/Operation on its channel, its Control and Data) when there is one, else
 * the actor message's type. Values of fields named like credentials are left out here; the rest is
 * masked by the journal (its mask, set by the node as its logger's: secret parameter values,
 * Authorization and Basic/Bearer texts).
 */

const MAX_CAUSE = 600;
/** Fields whose values are never shown, whatever the journal's mask: a credential may sit in any Data field so named. */
const SENSITIVE_FIELD = /pass|secret|token|auth|credential|api[_-]?key|private/i;

/** `name=v1,v2; other=v` with the values of sensitive-looking fields as ***. */
function valuesText(map: unknown): string {
  if (!isRecord(map)) return '';
  return Object.entries(map)
    .map(([k, v]) => `${k}=${SENSITIVE_FIELD.test(k) ? '***' : Array.isArray(v) ? v.join(',') : String(v)}`)
    .join('; ');
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function hiveMessage(v: unknown): Record<string, unknown> | undefined {
  return isRecord(v) && typeof v.Class === 'string' && isRecord(v.Data) ? v : undefined;
}

/** The hive message an actor message carries (a delivery's, or its own `message`), if any. */
function carried(msg: unknown): {
  delivery: Record<string, unknown> | undefined;
  message: Record<string, unknown> | undefined;
} {
  const delivery = isRecord(msg) && isRecord(msg.delivery) ? msg.delivery : undefined;
  return {
    delivery,
    message: hiveMessage(delivery?.message) ?? (isRecord(msg) ? hiveMessage(msg.message) : undefined),
  };
}

/** A W3C traceparent's trace id (lower-case hex, not all zeros: README, Tracing). */
const TRACE_ID = /^[\da-f]{2}-((?!0{32})[\da-f]{32})-[\da-f]{16}-[\da-f]{2}/;

/**
 * The trace of the message an actor was handling when it crashed (its Control traceparent): the crash
 * happens outside the handling's trace scope, so the journal line takes it from the message, and the
 * console links the line to its trace.
 */
export function crashTrace(msg: unknown): string | undefined {
  const control = carried(msg).message?.Control;
  const value = isRecord(control) && Array.isArray(control.traceparent) ? control.traceparent[0] : undefined;
  return typeof value === 'string' ? TRACE_ID.exec(value)?.[1] : undefined;
}

export function crashCause(msg: unknown): string | undefined {
  if (msg === undefined) return undefined;
  const { delivery, message } = carried(msg);
  let text: string;
  if (message) {
    const where = typeof delivery?.channel === 'string' ? ` on '${delivery.channel}'` : '';
    text = `${String(delivery?.mode ?? 'message')}${where}: ${String(message.Class)}/${String(message.Operation)} Control {${valuesText(message.Control)}} Data {${valuesText(message.Data)}}`;
  } else if (isRecord(msg) && typeof msg.type === 'string') {
    text = `actor message '${msg.type}'`;
  } else {
    text = `actor message of type ${typeof msg}`;
  }
  return text.length > MAX_CAUSE ? `${text.slice(0, MAX_CAUSE - 1)}…` : text;
}
