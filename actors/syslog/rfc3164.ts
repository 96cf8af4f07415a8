/**
 * Lenient RFC 3164 parsing, as real devices send it. RFC 3164 describes observed practice rather
 * than a grammar, so this never fails: whatever cannot be recognised stays in the message.
 * Recognised: `<PRI>` (absent → 13, RFC 3164 §4.3.3; invalid → the whole line is the message),
 * BSD timestamps `Mmm dd hh:mm:ss` (space- or zero-padded day, optional year, fractions, a zone),
 * `yyyy Mmm dd hh:mm:ss` (NX-OS), RFC 3339 timestamps (rsyslog's forward format), Cisco prefixes
 * (a sequence number `123: `, an origin host `router1: `, `*`/`.` clock-state marks, a `:` after the
 * time), a hostname that may be missing, and tags `tag:`, `tag[pid]:`, `tag[pid]` and a bare `tag`
 * (see BARE_TAG). A year-less date takes the year that puts it nearest before `now` (see inferYear).
 */
import type { SyslogRecord } from './record.js';
import { RecordFormat } from './record.js';
import { DEFAULT_PRIORITY, MAX_PRIORITY } from './severity.js';
import type { ClockFields } from './timestamp.js';
import { fractionMs, isoOf, localMillis, monthIndex, offsetMinutes, parseRfc3339, utcMillis } from './timestamp.js';
import { zoneOffset } from './zones.js';

/** How far ahead of the receiver's clock a year-less date may be and still be this year: covers zone differences and skew. */
const FUTURE_TOLERANCE_MS = 7 * 24 * 3600 * 1000;

/** `Mmm dd [yyyy] hh:mm:ss[.frac]`, with Cisco's `*`/`.` mark before it. */
const BSD = /^[*.]?([A-Za-z]{3}) +(\d{1,2}) (?:(\d{4}) )?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?/;
/** `yyyy Mmm dd hh:mm:ss[.frac]` (NX-OS). */
const YEAR_FIRST = /^[*.]?(\d{4}) ([A-Za-z]{3}) +(\d{1,2}) (\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?/;
/** RFC 3339, or its variant with a space for the `T`. */
const ISO = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)([Zz]|[+-]\d{2}(?::?\d{2})?)?/;
/** A zone after a BSD time: a name or a numeric offset. */
const ZONE = /^ ([A-Za-z]{1,6}|[+-]\d{2}:?\d{2})(?=:? |:?$)/;
/** `tag`, `tag[pid]`, each optionally followed by `:`. */
const TAG = /^([^\s:[\]]{1,48})(?:\[([^\]\s]{0,128})\])?(:?)/;
/**
 * A tag without `:` or `[pid]`, as rsyslog's traditional forward format writes the tag of an RFC 5424
 * message without PROCID (`<163>Nov 24 08:05:02 vm viarsys m08 via rsyslog`). RFC 3164 §4.1.3 ends
 * the TAG at the first non-alphanumeric character; rsyslogd (8.2302, checked) ends it at the first
 * space or colon whatever the characters, so `my-app text` has tag `my-app`, not `my` and content
 * `-app text`. Taken here, after a timestamp and a hostname only (a sender that writes those speaks
 * RFC 3164, whose TAG comes next), when the word is made of the characters real program names use
 * (alphanumerics and `- . _ /`: `systemd-logind`, `postfix/smtpd`, `com.apple.xpc.launchd`) and text
 * follows it. Unlike rsyslog, a word with any other character (`1,2024/03/15` of Palo Alto's CSV,
 * `date=…` of key=value appliances, NXLog's tab-separated fields) or without a letter (a Cisco
 * sequence number, an address `10.0.0.1`) stays in the message rather than cutting into it; so does
 * a lone last word (rsyslog makes it the tag of an empty message).
 */
const BARE_TAG = /^(?=[^A-Za-z]*[A-Za-z])[A-Za-z0-9_./-]+$/;
/** A Cisco-style mnemonic at the start of the message: `%SYS-5-CONFIG_I:`, `%ASA-6-302013:`. */
const MNEMONIC = /^%([A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*-[0-7]-[A-Za-z0-9_]+) ?:/;

interface Stamp {
  /** ISO text, or '' when the fields name no real date. */
  iso: string;
  /** Characters consumed, including the space after the timestamp. */
  length: number;
}

/**
 * The instant of a year-less local (or zoned) date: of last year, this year and next year, the
 * latest that is not more than FUTURE_TOLERANCE_MS after `now`. So a December message received in
 * January is last year's, a January message received a few seconds before New Year is next year's,
 * and a Cisco clock stuck at `Mar 1` stays in the past.
 */
export function inferYear(f: Omit<ClockFields, 'year'>, offset: number | undefined, now: Date): number | undefined {
  const limit = now.getTime() + FUTURE_TOLERANCE_MS;
  const year = offset === undefined ? now.getFullYear() : now.getUTCFullYear();
  for (const y of [year + 1, year, year - 1, year - 2, year - 3, year - 4]) {
    // a Feb 29 exists only in leap years: keep looking back (at most four years)
    const ms = offset === undefined ? localMillis({ ...f, year: y }) : zoned({ ...f, year: y }, offset);
    if (ms !== undefined && ms <= limit) return ms;
  }
  return undefined;
}

function zoned(f: ClockFields, offset: number): number | undefined {
  const utc = utcMillis(f);
  return utc === undefined ? undefined : utc - offset * 60_000;
}

/** Reads a zone and the optional `:` after a BSD time at `pos`; returns the offset (undefined = local) and the new position. */
function readZone(s: string, pos: number): [number | undefined, number] {
  const z = ZONE.exec(s.slice(pos));
  if (!z) return [undefined, pos];
  const name = z[1]!;
  const numeric = /^[+-]/.test(name) ? offsetMinutes(name) : zoneOffset(name);
  if (numeric !== undefined) return [numeric, pos + z[0].length];
  // an unknown name (`clock timezone MYTZ`) is a zone only in Cisco's `MYTZ: %FAC-…` position:
  // anywhere else it is more likely a hostname or a tag such as `alice:`
  const cisco = /^[A-Z]{2,5}$/.test(name) && s.startsWith(': %', pos + z[0].length);
  return cisco ? [undefined, pos + z[0].length] : [undefined, pos];
}

/** Ends a timestamp: an optional `:` (Cisco), then a space or the end of the line. */
function finish(s: string, pos: number, iso: string): Stamp | undefined {
  let p = pos;
  if (s[p] === ':') p++;
  if (p < s.length && s[p] !== ' ') return undefined;
  return { iso, length: Math.min(p + 1, s.length) };
}

function bsdStamp(s: string, now: Date): Stamp | undefined {
  const yearFirst = YEAR_FIRST.exec(s);
  const m = yearFirst ?? BSD.exec(s);
  if (!m) return undefined;
  const [mon, day, year] = yearFirst ? [m[2]!, m[3]!, m[1]] : [m[1]!, m[2]!, m[3]];
  const month = monthIndex(mon);
  if (month === undefined) return undefined;
  const f = {
    month,
    day: Number(day),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: Number(m[6]),
    ms: fractionMs(m[7]),
  };
  const [offset, pos] = readZone(s, m[0].length);
  let ms: number | undefined;
  if (year !== undefined)
    ms = offset === undefined ? localMillis({ ...f, year: Number(year) }) : zoned({ ...f, year: Number(year) }, offset);
  else ms = inferYear(f, offset, now);
  return finish(s, pos, isoOf(ms));
}

function isoStamp(s: string): Stamp | undefined {
  const m = ISO.exec(s);
  if (!m) return undefined;
  return finish(s, m[0].length, isoOf(parseRfc3339(`${m[1]}T${m[2]!.replace(',', '.')}${m[3] ?? ''}`, false)));
}

/** A timestamp at the start of `s`, in any of the recognised forms. */
function timestampAt(s: string, now: Date): Stamp | undefined {
  return /^\d{4}-/.test(s) ? isoStamp(s) : bsdStamp(s, now);
}

/** True when a token after the timestamp is not a hostname but the start of tag or message. */
function notHostname(token: string): boolean {
  if (token.endsWith(':') || token.startsWith('%') || token.startsWith('CEF:')) return true;
  // `tag[pid]` without a colon (no regex: `/\[[^\]]*\]$/` is quadratic on a long run of `[`)
  return token.endsWith(']') && token.lastIndexOf('[') > 0;
}

/** Whether a TAG match is a tag, given the character after it; `afterHeader`: a timestamp and a hostname precede it. */
function isTag(tag: RegExpExecArray, next: string | undefined, afterHeader: boolean): boolean {
  const ends = next === undefined || next === ' ';
  // `tag[pid]`, `tag[pid]:`
  if (tag[2] !== undefined) return ends || tag[3] === ':';
  // `tag:` needs a space (or the end) after the colon, so `http://…` or `CEF:0|…` is not a tag
  if (tag[3] === ':') return ends;
  return afterHeader && next === ' ' && BARE_TAG.test(tag[1]!);
}

/** Parses one message leniently; `now` is the receive time used for year inference. */
export function parseRfc3164(line: string, now: Date): SyslogRecord {
  const record: SyslogRecord = {
    format: RecordFormat.rfc3164,
    priority: DEFAULT_PRIORITY,
    timestamp: '',
    hostname: '',
    appname: '',
    procid: '',
    msgid: '',
    structureddata: '',
    message: line,
  };
  let rest = line;
  if (rest.startsWith('<')) {
    const p = /^<(\d{1,3})>/.exec(rest);
    // an invalid PRI makes the whole line the message (RFC 3164 §4.3.3)
    if (!p || Number(p[1]) > MAX_PRIORITY) return record;
    record.priority = Number(p[1]);
    rest = rest.slice(p[0].length);
  }

  // Cisco: `123: `, `: ` (NX-OS) or `123: origin-host: ` before the timestamp or the %mnemonic
  const seq = /^(?:\d{1,10})?: /.exec(rest);
  let stamp = timestampAt(rest, now);
  if (!stamp && seq) {
    const after = rest.slice(seq[0].length);
    const origin = /^([^\s:]{1,255}): /.exec(after);
    const viaOrigin = origin ? timestampAt(after.slice(origin[0].length), now) : undefined;
    const direct = timestampAt(after, now);
    if (direct) {
      rest = after;
      stamp = direct;
    } else if (origin && viaOrigin) {
      record.hostname = origin[1]!;
      rest = after.slice(origin[0].length);
      stamp = viaOrigin;
    } else if (MNEMONIC.test(after)) {
      rest = after;
    }
  }
  if (stamp) {
    record.timestamp = stamp.iso;
    rest = rest.slice(stamp.length);
    const sp = rest.indexOf(' ');
    // the last word of a line is message, not hostname; so is a word longer than a DNS name
    if (!record.hostname && sp > 0 && sp <= 255 && !notHostname(rest.slice(0, sp))) {
      record.hostname = rest.slice(0, sp);
      rest = rest.slice(sp + 1);
      // Cisco ASA with `logging device-id`: `asa01 : %ASA-…`
      if (rest.startsWith(': ')) rest = rest.slice(2);
    }
  }

  const tag = TAG.exec(rest);
  // an all-digit "tag" is a Cisco sequence number, a `%` one a Cisco mnemonic
  if (tag && !tag[1]!.startsWith('%') && !/^\d+$/.test(tag[1]!)) {
    const afterTag = tag[0].length;
    const next = rest[afterTag];
    if (isTag(tag, next, stamp !== undefined && record.hostname !== '')) {
      record.appname = tag[1]!;
      record.procid = tag[2] ?? '';
      rest = rest.slice(next === ' ' ? afterTag + 1 : afterTag);
    }
  }
  const mnemonic = MNEMONIC.exec(rest);
  if (mnemonic) record.msgid = mnemonic[1]!;
  record.message = rest;
  return record;
}
