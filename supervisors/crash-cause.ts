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

export function crashCause(msg: unknown): string | undefined {
  if (msg === undefined) return undefined;
  const delivery = isRecord(msg) && isRecord(msg.delivery) ? msg.delivery : undefined;
  const message = hiveMessage(delivery?.message) ?? (isRecord(msg) ? hiveMessage(msg.message) : undefined);
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
