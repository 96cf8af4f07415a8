/**
 * Formatting of sent messages and their RFC 6587 TCP framing.
 *
 * - RFC 3164: `<PRI>Mmm dd HH:MM:SS HOST TAG[PID]: MSG`, local time on a 24-hour clock, the day
 *   padded with a space (`Mar  5`), as rsyslog's traditional format.
 * - RFC 5424: `<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD [SP MSG]`, the timestamp with
 *   milliseconds and the local offset. A non-ASCII MSG starts with the UTF-8 BOM — the three bytes
 *   EF BB BF once encoded (U+FEFF in the string), never the text 'BOM'; an ASCII MSG has none, as
 *   ASCII is UTF-8 already and many receivers show a BOM as garbage. Header fields are made valid
 *   (printable ASCII, length limits, '-' when empty) so our own strict parser and others accept them.
 * - Newlines stay in the message: with octet counting (and in UDP datagrams) they are safe.
 *   frameLf must not let them split a message at the receiver, so it sends each LF, CR LF and NUL
 *   inside a message as one space (lossy, but unambiguous: an escape such as `\n` could not be told
 *   apart from a message that contains a backslash and an n).
 */
import type { SdElement } from './structured-data.js';
import { formatStructuredData } from './structured-data.js';
import { priority } from './severity.js';
import { formatBsdTimestamp, formatRfc3339 } from './timestamp.js';

export interface OutgoingMessage {
  facility: number;
  severity: number;
  hostname: string;
  /** The tag (RFC 3164) or APP-NAME (RFC 5424): SendTag. */
  tag: string;
  /** PROCID; '' for none. */
  pid: number | string;
  message: string;
  date: Date;
  /** RFC 5424 MSGID; '-' when not given. */
  msgid?: string;
  /** RFC 5424 STRUCTURED-DATA elements; '-' when none. */
  structuredData?: readonly SdElement[];
}

const BOM = '\uFEFF';

/** Printable US-ASCII only, at most `max` characters; '-' for an empty result (RFC 5424 NILVALUE). */
function headerField(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '_').slice(0, max);
  return clean === '' ? '-' : clean;
}

/** An RFC 3164 TAG: no space, colon or brackets (they would end it early), at most 32 characters (§4.1.3). */
function tagOf(tag: string): string {
  return tag.replace(/[\s:[\]]/g, '_').slice(0, 32);
}

/** An RFC 3164 line (a string; encode as UTF-8). */
export function formatRfc3164(m: OutgoingMessage): string {
  const host = m.hostname.replace(/\s/g, '_') || '-';
  const tag = tagOf(m.tag);
  const pid = String(m.pid).replace(/[\s\]]/g, '');
  const header = tag === '' ? '' : pid === '' ? `${tag}: ` : `${tag}[${pid}]: `;
  return `<${priority(m.facility, m.severity)}>${formatBsdTimestamp(m.date)} ${host} ${header}${m.message}`;
}

/** An RFC 5424 line (a string; U+FEFF becomes the BOM bytes EF BB BF when encoded as UTF-8). */
export function formatRfc5424(m: OutgoingMessage): string {
  const head = [
    `<${priority(m.facility, m.severity)}>1`,
    formatRfc3339(m.date),
    headerField(m.hostname, 255),
    headerField(m.tag, 48),
    headerField(String(m.pid), 128),
    headerField(m.msgid ?? '', 32),
    formatStructuredData(m.structuredData ?? []),
  ].join(' ');
  if (m.message === '') return head;
  // eslint-disable-next-line no-control-regex
  const bom = /^[\x00-\x7f]*$/.test(m.message) ? '' : BOM;
  return `${head} ${bom}${m.message}`;
}

const toBytes = (msg: string | Buffer): Buffer => (typeof msg === 'string' ? Buffer.from(msg, 'utf8') : msg);

/** Octet-counting framing (RFC 6587 §3.4.1): `LEN SP MSG`, LEN in bytes; the message is sent unchanged. */
export function frameOctetCounted(msg: string | Buffer): Buffer {
  const body = toBytes(msg);
  return Buffer.concat([Buffer.from(`${body.length} `, 'latin1'), body]);
}

/**
 * Non-transparent framing (RFC 6587 §3.4.2): the message, LF. An LF, CR LF or NUL inside the
 * message becomes one space (in UTF-8 these bytes never occur inside a multi-byte character).
 */
export function frameLf(msg: string | Buffer): Buffer {
  const body = toBytes(msg);
  const out = Buffer.allocUnsafe(body.length + 1);
  let n = 0;
  for (let i = 0; i < body.length; i++) {
    const b = body[i]!;
    if (b === 0x0d && body[i + 1] === 0x0a) continue;
    out[n++] = b === 0x0a || b === 0x00 ? 0x20 : b;
  }
  out[n++] = 0x0a;
  return out.subarray(0, n);
}
