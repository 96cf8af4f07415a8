/**
 * Strict RFC 5424 parsing (§6): `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [SP MSG]`,
 * single spaces, `-` for nil values, header fields of printable US-ASCII within their lengths.
 * "Strict" so that a line accepted here really is RFC 5424; anything else is the lenient RFC 3164
 * parser's business. A UTF-8 BOM before MSG is removed as the character U+FEFF; the text "BOM"
 * (the RFC's placeholder, which syslog-pro sent literally) is ordinary message text.
 */
import type { SyslogRecord } from './record.js';
import { RecordFormat } from './record.js';
import { MAX_PRIORITY } from './severity.js';
import type { SdElement } from './structured-data.js';
import { parseStructuredData } from './structured-data.js';
import { strictIso } from './timestamp.js';

/** Why a line is not RFC 5424. */
export const Rfc5424Failure = {
  /** No `<PRI>` at the start. */
  priority: 'priority',
  /** Not version 1 followed by a space. */
  version: 'version',
  /** The line ends inside the header. */
  truncated: 'truncated',
  /** TIMESTAMP is neither `-` nor an RFC 3339 date-time of a real date. */
  timestamp: 'timestamp',
  /** HOSTNAME, APP-NAME, PROCID or MSGID is empty, too long or not printable US-ASCII. */
  field: 'field',
  /** STRUCTURED-DATA does not follow §6.3. */
  structuredData: 'structured-data',
} as const;
type Rfc5424FailureCode = (typeof Rfc5424Failure)[keyof typeof Rfc5424Failure];

export type Rfc5424Parse =
  { ok: true; record: SyslogRecord; sd: SdElement[] } | { ok: false; code: Rfc5424FailureCode; reason: string };

const BOM = '\uFEFF';

/** Whether line[from, to) is PRINTUSASCII (%d33-126) throughout. */
function printable(line: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = line.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

/** Header fields after TIMESTAMP with their RFC 5424 §6 maximum lengths. */
const FIELDS = [
  ['HOSTNAME', 255],
  ['APP-NAME', 48],
  ['PROCID', 128],
  ['MSGID', 32],
] as const;

const fail = (code: Rfc5424FailureCode, reason: string): Rfc5424Parse => ({ ok: false, code, reason });
const clip = (s: string): string => (s.length > 40 ? `${s.slice(0, 40)}…` : s);

/** True when a line starts like RFC 5424 (`<PRI>1 `): worth trying the strict parser on. */
export function looksLikeRfc5424(line: string): boolean {
  return /^<\d{1,3}>1 /.test(line);
}

/** Reads a header field ending at the next space. */
function field(line: string, pos: number): [string, number] | undefined {
  const end = line.indexOf(' ', pos);
  return end < 0 ? undefined : [line.slice(pos, end), end + 1];
}

/** Parses one RFC 5424 message (already decoded from UTF-8, transport line end removed). */
export function parseRfc5424(line: string): Rfc5424Parse {
  const head = /^<(\d{1,3})>/.exec(line);
  if (!head) return fail(Rfc5424Failure.priority, 'RFC 5424 needs <PRI> at the start');
  const pri = Number(head[1]);
  if (pri > MAX_PRIORITY) return fail(Rfc5424Failure.priority, `priority ${pri} is over ${MAX_PRIORITY}`);
  let pos = head[0].length;
  if (!line.startsWith('1 ', pos)) return fail(Rfc5424Failure.version, 'RFC 5424 needs VERSION 1 after <PRI>');
  pos += 2;

  const ts = field(line, pos);
  if (!ts) return fail(Rfc5424Failure.truncated, 'RFC 5424 header ends in TIMESTAMP');
  let timestamp = '';
  if (ts[0] !== '-') {
    const iso = strictIso(ts[0]);
    if (iso === undefined) return fail(Rfc5424Failure.timestamp, `TIMESTAMP '${clip(ts[0])}' is not RFC 3339`);
    timestamp = iso;
  }
  pos = ts[1];

  const values: string[] = [];
  for (const [name, max] of FIELDS) {
    // scanned in place (no slice of a field that is refused, no regular expression a field)
    const end = line.indexOf(' ', pos);
    if (end < 0) return fail(Rfc5424Failure.truncated, `RFC 5424 header ends in ${name}`);
    if (end === pos || end - pos > max || !printable(line, pos, end))
      return fail(
        Rfc5424Failure.field,
        `${name} '${clip(line.slice(pos, end))}' is not 1..${max} printable ASCII characters`,
      );
    values.push(end === pos + 1 && line.charCodeAt(pos) === 45 ? '' : line.slice(pos, end));
    pos = end + 1;
  }
  const [hostname = '', appname = '', procid = '', msgid = ''] = values;

  let structureddata = '';
  let sd: SdElement[] = [];
  if (line[pos] === '-') {
    pos++;
  } else {
    const parsed = parseStructuredData(line, pos);
    if (!parsed.ok) return fail(Rfc5424Failure.structuredData, parsed.reason);
    structureddata = line.slice(pos, parsed.end);
    sd = parsed.elements;
    pos = parsed.end;
  }

  let message = '';
  if (pos < line.length) {
    if (line[pos] !== ' ')
      return fail(Rfc5424Failure.structuredData, 'STRUCTURED-DATA must be followed by a space or the end');
    message = line.slice(pos + 1);
    if (message.startsWith(BOM)) message = message.slice(1);
  }
  return {
    ok: true,
    record: {
      format: RecordFormat.rfc5424,
      priority: pri,
      timestamp,
      hostname,
      appname,
      procid,
      msgid,
      structureddata,
      message,
    },
    sd,
  };
}
