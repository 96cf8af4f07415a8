/**
 * The syslog messages of one send request (README, The syslog service): each string of a Data key is one
 * message with the severity the key names (error, warn, info, critical; any other key debug), in
 * the order of the keys and of their values. With SendJSON the whole Data is one message, its JSON
 * text, with the most severe severity among its keys — so a JSON message carrying an 'error' value
 * is still an error to the syslog server's filters. Empty Data sends nothing.
 */
import type { ValueMap } from '../../protocol/message.js';
import type { OutgoingMessage } from './format.js';
import { USER_FACILITY, severityOfKey } from './severity.js';

/** Who sends: the parts every message shares. */
export interface SenderIdentity {
  /** Facility of every message; user (1) when not given. */
  facility?: number;
  hostname: string;
  /** SendTag. */
  tag: string;
  pid: number | string;
}

/** The messages for one request's Data. */
export function outgoingMessages(
  data: ValueMap,
  who: SenderIdentity,
  json: boolean,
  date: Date = new Date(),
): OutgoingMessage[] {
  const base = { facility: who.facility ?? USER_FACILITY, hostname: who.hostname, tag: who.tag, pid: who.pid, date };
  const keys = Object.keys(data);
  if (json) {
    if (keys.length === 0) return [];
    const severity = Math.min(...keys.map((k) => severityOfKey(k)));
    return [{ ...base, severity, message: JSON.stringify(data) }];
  }
  const out: OutgoingMessage[] = [];
  for (const key of keys)
    for (const message of data[key] ?? []) out.push({ ...base, severity: severityOfKey(key), message });
  return out;
}
