/**
 * Strict RFC 5424 parsing: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD [MSG]`, nil values
 * `-`, structured data with the escapes `\"`, `\\` and `\]`, and a UTF-8 BOM before MSG removed
 * (as the character, never the text 'BOM').
 */
import type { SyslogRecord } from './record.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;
const PRINTABLE = /^[\x21-\x7e]+$/;

/** Reads a header field up to the next space; undefined when there is none. */
function field(s: string, pos: number): [string, number] | undefined {
  const end = s.indexOf(' ', pos);
  if (end < 0) return undefined;
  return [s.slice(pos, end), end + 1];
}

/** Reads the STRUCTURED-DATA part at `pos`: returns its text and the position after it. */
function structuredData(s: string, pos: number): [string, number] | string {
  if (s[pos] === '-') return ['-', pos + 1];
  if (s[pos] !== '[') return 'structured data must be - or start with ['
  let i = pos;
  while (s[i] === '[') {
    i++;
    let inValue = false;
    for (;;) {
      const c = s[i];
      if (c === undefined) return 'structured data element is not closed';
      if (inValue) {
        if (c === '\\' && (s[i + 1] === '"' || s[i + 1] === '\\' || s[i + 1] === ']')) i += 2;
        else if (c === '"') {
          inValue = false;
          i++;
        } else i++;
      } else if (c === '"') {
        inValue = true;
        i++;
      } else if (c === ']') {
        i++;
        break;
      } else i++;
    }
  }
  return [s.slice(pos, i), i];
}

export function parseRfc5424(line: string): SyslogRecord | string {
  const m = /^<(\d{1,3})>([1-9]\d?) /.exec(line);
  if (!m) return 'not RFC 5424: expected <PRI>VERSION';
  const pri = Number(m[1]);
  if (pri > 191) return `priority ${pri} is over 191`;
  let pos = m[0].length;
  const parts: string[] = [];
  for (const [name, max] of [['timestamp', 64], ['hostname', 255], ['app-name', 48], ['procid', 128], ['msgid', 32]] as const) {
    const f = field(line, pos);
    if (!f) return `RFC 5424 header ends before ${name}`;
    if (f[0].length === 0 || f[0].length > max || !PRINTABLE.test(f[0])) return `RFC 5424 ${name} '${f[0].slice(0, 40)}' is not valid`;
    parts.push(f[0]);
    pos = f[1];
  }
  const [timestamp, hostname, appname, procid, msgid] = parts as [string, string, string, string, string];
  if (timestamp !== '-' && !TIMESTAMP.test(timestamp)) return `RFC 5424 timestamp '${timestamp}' is not valid`;
  const sd = structuredData(line, pos);
  if (typeof sd === 'string') return sd;
  pos = sd[1];
  let message = '';
  if (pos < line.length) {
    if (line[pos] !== ' ') return 'RFC 5424 structured data must be followed by a space';
    message = line.slice(pos + 1);
    if (message.startsWith('\uFEFF')) message = message.slice(1);
  }
  const nil = (v: string): string => (v === '-' ? '' : v);
  const when = timestamp === '-' ? undefined : new Date(timestamp);
  if (when && Number.isNaN(when.getTime())) return `RFC 5424 timestamp '${timestamp}' is not a date`;
  const iso = when ? when.toISOString() : '';
  return { priority: pri, timestamp: iso, hostname: nil(hostname), appname: nil(appname), procid: nil(procid), msgid: nil(msgid), structureddata: sd[0] === '-' ? '' : sd[0], message, format: 'RFC5424' };
}
