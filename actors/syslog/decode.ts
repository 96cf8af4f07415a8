/**
 * One received UDP datagram or TCP frame → the Data of the emitted message
 * (docs/ARCHITECTURE.md, Result shapes).
 *
 * The format is detected per message, whatever the Format parameter says, so no message is lost:
 * a line starting `<PRI>1 ` that passes the strict RFC 5424 parser is RFC 5424; every other line
 * (including one that starts like RFC 5424 but breaks its grammar) is read leniently as RFC 3164.
 * So with Format RFC3164 a genuine RFC 5424 line is accepted as RFC 5424 (that is what "clearly is
 * one" means here), and with Format RFC5424 an RFC 3164 line is still forwarded, read leniently.
 * `expected` says whether the message matched the configured Format (RFC6587 and bare CEF always
 * do), for the receiver's counters. Format `auto` (beyond the spec) expects of each message the
 * format its header announces: RFC 5424 when a version follows the PRI, RFC 3164 otherwise; so it
 * is unexpected only when it announces RFC 5424 and breaks it (it is still forwarded, read as RFC
 * 3164). CEF is decoded on either (DecodeCEF). The Data key `format` says which parser matched.
 *
 * Bytes that are not UTF-8 become U+FFFD; nothing here throws on any input.
 */
import type { ValueMap } from '../../protocol/message.js';
import { decodeCef, parseCef } from './cef.js';
import type { SyslogRecord } from './record.js';
import { RecordFormat, recordData } from './record.js';
import { parseRfc3164 } from './rfc3164.js';
import { looksLikeRfc5424, parseRfc5424 } from './rfc5424.js';
import { assertNever } from '../../protocol/never.js';

/** The Format parameter (README, The syslog service, plus `auto`). RFC6587 is TCP framing; its messages are RFC 5424 or RFC 3164. */
const InputFormat = { rfc3164: 'RFC3164', rfc5424: 'RFC5424', rfc6587: 'RFC6587', auto: 'auto' } as const;
export type InputFormatName = (typeof InputFormat)[keyof typeof InputFormat];

export interface DecodeOptions {
  /** The configured Format: only decides `expected`, never whether a message is decoded. */
  format: InputFormatName;
  /** Decode CEF (DecodeCEF): adds `cef_*` keys; a bare CEF line gets format 'CEF'. */
  decodeCEF: boolean;
  /** The sender's address, reported as `remoteaddress`. */
  remoteAddress: string;
  /** The receive time, for the year of BSD timestamps; the current time when not given. */
  now?: Date;
}

export type Decoded =
  | {
      ok: true;
      /** The Data of the message to emit (a value map, emptyMap: every value a one-element list except repeated cef_* keys). */
      data: ValueMap;
      record: SyslogRecord;
      /** True when the message is of the configured Format. */
      expected: boolean;
      /** Why a line that started like RFC 5424 was read as RFC 3164 instead (for debug logs). */
      rfc5424Failure?: string;
    }
  | { ok: false; reason: string };

/** The text without the transport's line end (LF, CR LF, NUL); a loop, as a `/[\r\n]+$/` regex is quadratic on long runs. */
function withoutTrailer(text: string): string {
  let end = text.length;
  for (let c = text.charCodeAt(end - 1); c === 0x0a || c === 0x0d || c === 0x00; c = text.charCodeAt(end - 1)) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** Parses one line (already text) into a record; never fails. */
function parseLine(line: string, now: Date | undefined): { record: SyslogRecord; rfc5424Failure?: string } {
  if (looksLikeRfc5424(line)) {
    const strict = parseRfc5424(line);
    if (strict.ok) return { record: strict.record };
    return { record: parseRfc3164(line, now ?? new Date()), rfc5424Failure: strict.reason };
  }
  return { record: parseRfc3164(line, now ?? new Date()) };
}

/** Adds the CEF event of the line, if any; a line that is nothing but CEF becomes format 'CEF'. */
function addCef(record: SyslogRecord, line: string): void {
  if (line.startsWith('CEF:')) {
    const bare = parseCef(line);
    if (bare.ok) {
      record.format = RecordFormat.cef;
      record.message = line;
      record.cef = bare.event;
      return;
    }
  }
  const event = decodeCef(record.message);
  if (event) record.cef = event;
}

/** Whether a decoded message is of the configured Format (see the file comment). */
function isExpected(format: InputFormatName, record: SyslogRecord, rfc5424Failure: string | undefined): boolean {
  if (record.format === RecordFormat.cef) return true;
  switch (format) {
    case InputFormat.rfc6587:
      return true;
    case InputFormat.auto:
      return rfc5424Failure === undefined;
    case InputFormat.rfc5424:
      return record.format === RecordFormat.rfc5424;
    case InputFormat.rfc3164:
      return record.format !== RecordFormat.rfc5424;
    default:
      return assertNever(format, 'input format');
  }
}

/** Decodes one message; `ok: false` only for an empty one. */
export function decodeSyslog(bytes: Buffer, opts: DecodeOptions): Decoded {
  const line = withoutTrailer(bytes.toString('utf8'));
  if (line.trim() === '') return { ok: false, reason: 'empty message' };
  const { record, rfc5424Failure } = parseLine(line, opts.now);
  if (opts.decodeCEF) addCef(record, line);
  const expected = isExpected(opts.format, record, rfc5424Failure);
  const data = recordData(record, opts.remoteAddress);
  return rfc5424Failure === undefined
    ? { ok: true, data, record, expected }
    : { ok: true, data, record, expected, rfc5424Failure };
}
