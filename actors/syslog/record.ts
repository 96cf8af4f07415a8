/** A parsed syslog message, whatever its format; becomes the Data of ARCHITECTURE §7. */
import type { ValueMap } from '../../protocol/message.js';
import { emptyMap } from '../../protocol/message.js';
import { FACILITY_NAMES, SEVERITY_NAMES } from './severity.js';

export interface SyslogRecord {
  priority: number;
  timestamp: string;
  hostname: string;
  appname: string;
  procid: string;
  msgid: string;
  structureddata: string;
  message: string;
  format: 'RFC5424' | 'RFC3164' | 'CEF';
  /** Decoded CEF fields (cef_*), when DecodeCEF found CEF. */
  cef?: Record<string, string>;
}

export function recordData(r: SyslogRecord, remoteAddress: string): ValueMap {
  const d = emptyMap();
  const facility = r.priority >> 3;
  const severity = r.priority & 7;
  d.facility = [FACILITY_NAMES[facility] ?? String(facility)];
  d.severity = [SEVERITY_NAMES[severity] ?? String(severity)];
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
  if (r.cef) for (const [k, v] of Object.entries(r.cef)) d[`cef_${k}`] = [v];
  return d;
}
