/**
 * Lenient RFC 3164 parsing, as real devices send it: PRI optional (13 when absent), BSD timestamps
 * (`Mmm dd hh:mm:ss`, day space-padded, the year inferred with roll-over at New Year), ISO 8601
 * timestamps, Cisco forms (`123: *Mar  1 00:00:00.123 UTC: %SYS-5-…`), a hostname that may be
 * missing, and `tag[pid]:` prefixes. Timestamps are reported as ISO 8601 on a 24-hour clock.
 */
import type { SyslogRecord } from './record.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const BSD = /^[*.]?(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(\d{1,2}) (?:(\d{4}) )?(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?: ([A-Z]{2,5}))?:? /;
const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?) /;
const TAG = /^([^\s:[\]]{1,48})(?:\[([^\]\s]{1,128})\])?: ?/;

/** The date a year-less BSD timestamp means, received at `now`: a date far in the future is last year's. */
export function inferYear(month: number, day: number, h: number, m: number, s: number, ms: number, now: Date): Date {
  const d = new Date(now.getFullYear(), month, day, h, m, s, ms);
  if (d.getTime() - now.getTime() > 31 * 24 * 3600 * 1000) d.setFullYear(now.getFullYear() - 1);
  return d;
}

export function parseRfc3164(line: string, now: Date): SyslogRecord | string {
  let rest = line;
  let pri = 13;
  const p = /^<(\d{1,3})>/.exec(rest);
  // RFC 3164 §4.3.3: without a valid PRI the whole line is the message, with PRI 13
  if (p && Number(p[1]) <= 191) {
    pri = Number(p[1]);
    rest = rest.slice(p[0].length);
  }
  // Cisco: a sequence number before the timestamp
  const seq = /^\d{1,10}: /.exec(rest);
  if (seq && (BSD.test(rest.slice(seq[0].length)) || ISO.test(rest.slice(seq[0].length)))) rest = rest.slice(seq[0].length);
  let timestamp = '';
  const bsd = BSD.exec(rest);
  const iso = bsd ? null : ISO.exec(rest);
  if (bsd) {
    const [, mon, day, year, h, m, s, frac, zone] = bsd;
    const ms = frac ? Math.round(Number(`0.${frac}`) * 1000) : 0;
    const month = MONTHS.indexOf(mon!);
    const d = year ? new Date(Number(year), month, Number(day), Number(h), Number(m), Number(s), ms) : inferYear(month, Number(day), Number(h), Number(m), Number(s), ms, now);
    if (zone === 'UTC' || zone === 'GMT') d.setTime(Date.UTC(d.getFullYear(), month, Number(day), Number(h), Number(m), Number(s), ms));
    if (!Number.isNaN(d.getTime())) timestamp = d.toISOString();
    rest = rest.slice(bsd[0].length);
  } else if (iso) {
    const d = new Date(iso[1]!);
    if (!Number.isNaN(d.getTime())) timestamp = d.toISOString();
    rest = rest.slice(iso[0].length);
  }
  let hostname = '';
  // a hostname follows a timestamp when the next token is not itself the tag (`tag:` / `tag[pid]:`) or a Cisco %MNEMONIC
  if (timestamp) {
    const next = /^([^\s]+) /.exec(rest);
    if (next && !next[1]!.endsWith(':') && !/\[[^\]]*\]:?$/.test(next[1]!) && !next[1]!.startsWith('%')) {
      hostname = next[1]!;
      rest = rest.slice(next[0].length);
    }
  }
  let appname = '';
  let procid = '';
  // CEF carries its own header: 'CEF:0|…' is the message, not a tag named CEF
  const tag = rest.startsWith('CEF:') ? null : TAG.exec(rest);
  if (tag && !tag[1]!.startsWith('%') && (tag[0].includes(':') || tag[2] !== undefined)) {
    appname = tag[1]!;
    procid = tag[2] ?? '';
    rest = rest.slice(tag[0].length);
  }
  return { priority: pri, timestamp, hostname, appname, procid, msgid: '', structureddata: '', message: rest, format: 'RFC3164' };
}
