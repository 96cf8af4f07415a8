/**
 * Formatting sent messages: RFC 3164 (`<PRI>Mmm dd HH:MM:SS host tag[pid]: msg`, 24-hour clock, day
 * space-padded) or RFC 5424 (ISO timestamp with milliseconds and offset; the BOM as real bytes
 * before a non-ASCII message), and RFC 6587 framing for TCP. With LF framing a newline inside a
 * message would start a new message at the receiver, so it is sent as a space; octet counting
 * (the default) keeps the message as it is.
 */
import { priority } from './severity.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number): string => String(n).padStart(2, '0');

export interface OutgoingMessage {
  facility: number;
  severity: number;
  hostname: string;
  tag: string;
  pid: number;
  message: string;
  date: Date;
}

export function formatRfc3164(m: OutgoingMessage): string {
  const d = m.date;
  const stamp = `${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2, ' ')} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  return `<${priority(m.facility, m.severity)}>${stamp} ${m.hostname} ${m.tag}[${m.pid}]: ${m.message}`;
}

function isoWithOffset(d: Date): string {
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  const local = new Date(d.getTime() + off * 60_000).toISOString().slice(0, 23);
  return `${local}${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}

export function formatRfc5424(m: OutgoingMessage): string {
  // eslint-disable-next-line no-control-regex
  const bom = /[^\x00-\x7f]/.test(m.message) ? '\uFEFF' : '';
  return `<${priority(m.facility, m.severity)}>1 ${isoWithOffset(m.date)} ${m.hostname || '-'} ${m.tag || '-'} ${m.pid} - - ${bom}${m.message}`;
}

export function frameOctetCounted(line: string): Buffer {
  const body = Buffer.from(line, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `), body]);
}

export function frameLf(line: string): Buffer {
  return Buffer.from(`${line.replace(/\r?\n/g, ' ')}\n`, 'utf8');
}
