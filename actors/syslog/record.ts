/**
 * A parsed syslog message, whatever its format, and the Data it becomes
 * (docs/ARCHITECTURE.md, Result shapes): `facility severity priority timestamp hostname appname
 * procid msgid message structureddata format remoteaddress`, each a one-element list ('' when the
 * message has no such part), plus `cef_*` keys when CEF was decoded.
 */
import type { ValueMap } from '../../protocol/message.js';
import { emptyMap } from '../../protocol/message.js';
import type { CefEvent } from './cef.js';
import { cefEntries } from './cef.js';
import { priorityNames } from './severity.js';

/** Which parser produced a record: the value of the Data key `format`. */
export const RecordFormat = {
  /** A valid RFC 5424 message. */
  rfc5424: 'RFC5424',
  /** Anything else read leniently as RFC 3164 (BSD, rsyslog traditional/forward formats, Cisco…). */
  rfc3164: 'RFC3164',
  /** A bare CEF event without a syslog envelope (only with DecodeCEF). */
  cef: 'CEF',
} as const;
type RecordFormatName = (typeof RecordFormat)[keyof typeof RecordFormat];

export interface SyslogRecord {
  format: RecordFormatName;
  /** 0..191; 13 (user.notice) when the message had none. */
  priority: number;
  /** ISO 8601 in UTC with milliseconds, or '' when the message had no (valid) timestamp. */
  timestamp: string;
  hostname: string;
  /** APP-NAME, or the RFC 3164 tag. */
  appname: string;
  /** PROCID, or the RFC 3164 `[pid]`. */
  procid: string;
  /** MSGID, or the Cisco/Juniper mnemonic of an RFC 3164 message (`SYS-5-CONFIG_I`). */
  msgid: string;
  /** The STRUCTURED-DATA text as received (escapes kept), '' for none. */
  structureddata: string;
  message: string;
  /** The decoded CEF event, when DecodeCEF found one. */
  cef?: CefEvent;
}

/** The Data keys every received message carries. */
export const DATA_KEYS = [
  'facility',
  'severity',
  'priority',
  'timestamp',
  'hostname',
  'appname',
  'procid',
  'msgid',
  'message',
  'structureddata',
  'format',
  'remoteaddress',
] as const;

/** The Data of the emitted message: a value map (emptyMap), one value per key, cef_* keys possibly several. */
export function recordData(r: SyslogRecord, remoteAddress: string): ValueMap {
  const d = emptyMap();
  const names = priorityNames(r.priority);
  d.facility = [names.facility];
  d.severity = [names.severity];
  d.priority = [String(r.priority)];
  d.timestamp = [r.timestamp];
  d.hostname = [r.hostname];
  d.appname = [r.appname];
  d.procid = [r.procid];
  d.msgid = [r.msgid];
  d.message = [r.message];
  d.structureddata = [r.structureddata];
  d.format = [r.format];
  d.remoteaddress = [remoteAddress];
  if (r.cef) {
    for (const [k, v] of cefEntries(r.cef)) {
      const key = `cef_${k}`;
      // a repeated extension key keeps every value, in order (Data values are lists)
      const list = d[key];
      if (list) list.push(v);
      else d[key] = [v];
    }
  }
  return d;
}
