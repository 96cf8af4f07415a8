/**
 * One received datagram or frame → the Data of the emitted message (ARCHITECTURE §7). The format is
 * detected per message (`<PRI>1 ` is RFC 5424, anything else is read leniently as RFC 3164), so a
 * mixed stream is never lost; the Format parameter says what the receiver expects, and messages of
 * the other format are counted as invalid but still forwarded. Bytes that are not UTF-8 become
 * U+FFFD; nothing here throws.
 */
import type { ValueMap } from '../../protocol/message.js';
import { decodeCef } from './cef.js';
import type { SyslogRecord } from './record.js';
import { recordData } from './record.js';
import { parseRfc3164 } from './rfc3164.js';
import { parseRfc5424 } from './rfc5424.js';

export interface DecodeOptions {
  format: 'RFC3164' | 'RFC5424' | 'RFC6587';
  decodeCEF: boolean;
  remoteAddress: string;
  now?: Date;
}

export type Decoded = { ok: true; data: ValueMap; expected: boolean } | { ok: false; reason: string };

export function decodeSyslog(bytes: Buffer, opts: DecodeOptions): Decoded {
  let line = bytes.toString('utf8');
  // a trailing line end belongs to the transport, not the message
  line = line.replace(/[\r\n\0]+$/, '');
  if (line.trim() === '') return { ok: false, reason: 'empty message' };
  let record: SyslogRecord | string;
  const looks5424 = /^<\d{1,3}>[1-9]\d? /.test(line);
  if (looks5424) {
    record = parseRfc5424(line);
    if (typeof record === 'string') record = parseRfc3164(line, opts.now ?? new Date());
  } else if (opts.decodeCEF && line.startsWith('CEF:')) {
    record = { priority: 13, timestamp: '', hostname: '', appname: '', procid: '', msgid: '', structureddata: '', message: line, format: 'CEF' };
  } else {
    record = parseRfc3164(line, opts.now ?? new Date());
  }
  if (typeof record === 'string') return { ok: false, reason: record };
  if (opts.decodeCEF) {
    const cef = decodeCef(record.message);
    if (cef) record.cef = cef;
  }
  const expected = opts.format === 'RFC6587' || record.format === 'CEF' || (opts.format === 'RFC5424') === (record.format === 'RFC5424');
  return { ok: true, data: recordData(record, opts.remoteAddress), expected };
}
