import { expect } from 'chai';
import { emptyMap } from '../../../protocol/message.js';
import type { ValueMap } from '../../../protocol/message.js';
import { decodeSyslog } from '../../../actors/syslog/decode.js';
import type { OutgoingMessage } from '../../../actors/syslog/format.js';
import { formatRfc3164, formatRfc5424, frameLf, frameOctetCounted } from '../../../actors/syslog/format.js';
import { FrameDecoder } from '../../../actors/syslog/framing.js';
import { outgoingMessages } from '../../../actors/syslog/outgoing.js';
import { Facility, Severity, priority, severityOfKey } from '../../../actors/syslog/severity.js';
import { prng } from '../../prng.js';

const base: OutgoingMessage = {
  facility: Facility.user,
  severity: Severity.error,
  hostname: 'h1',
  tag: 'platform',
  pid: 42,
  message: 'hello',
  date: new Date(2024, 2, 5, 17, 4, 9, 123),
};
const decode = (line: string | Buffer, now: Date) => {
  const d = decodeSyslog(Buffer.isBuffer(line) ? line : Buffer.from(line, 'utf8'), {
    format: 'RFC6587',
    decodeCEF: false,
    remoteAddress: '127.0.0.1',
    now,
  });
  if (!d.ok) throw new Error(d.reason);
  return d.data;
};
const one = (data: ValueMap): Record<string, string> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v[0] ?? '']));

const MESSAGES = [
  'hello',
  '',
  '  leading spaces',
  'trailing spaces  ',
  'ünïcödé ✓ 日本語 😀',
  'line one\nline two',
  'tab\there',
  'colon: [brackets] "quotes" \\ back',
  'BOM is just text',
  '%SYS-5-LOOKS_CISCO: x',
  'CEF:0|not|decoded|here|1|n|1|a=b',
  '<13>1 2024-01-01T00:00:00Z nested - - - x',
];

describe('syslog sender formatting', () => {
  it('RFC 3164: <PRI>Mmm dd HH:MM:SS host tag[pid]: msg, 24-hour clock, day padded with a space', () => {
    expect(formatRfc3164(base)).to.equal('<11>Mar  5 17:04:09 h1 platform[42]: hello');
    expect(formatRfc3164({ ...base, date: new Date(2024, 11, 25, 0, 5, 0) })).to.equal(
      '<11>Dec 25 00:05:00 h1 platform[42]: hello',
    );
    expect(formatRfc3164({ ...base, date: new Date(2024, 0, 1, 12, 0, 0), pid: '' })).to.equal(
      '<11>Jan  1 12:00:00 h1 platform: hello',
    );
    expect(formatRfc3164({ ...base, hostname: 'my host', tag: 'bad tag:[x]' })).to.equal(
      '<11>Mar  5 17:04:09 my_host bad_tag__x_[42]: hello',
    );
  });

  it('RFC 5424: ISO timestamp with milliseconds and offset, nil values, the BOM as bytes EF BB BF only before non-ASCII', () => {
    const line = formatRfc5424(base);
    expect(line).to.match(/^<11>1 2024-03-05T17:04:09\.123[+-]\d{2}:\d{2} h1 platform 42 - - hello$/);
    expect(new Date(line.split(' ')[1]!).getTime()).to.equal(base.date.getTime());
    expect(formatRfc5424({ ...base, hostname: '', tag: '', pid: '', message: '' })).to.match(/^<11>1 \S+ - - - - -$/);
    const bytes = Buffer.from(formatRfc5424({ ...base, message: 'ü' }), 'utf8');
    expect(bytes.subarray(bytes.length - 5).toString('hex')).to.equal('efbbbfc3bc');
    expect(formatRfc5424(base)).not.to.contain('\uFEFF');
    expect(formatRfc5424({ ...base, message: 'ü' })).not.to.contain('BOM');
    expect(formatRfc5424({ ...base, hostname: 'höst name', tag: 'a'.repeat(60), msgid: 'ID 1' })).to.contain(
      ' h_st_name aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 42 ID_1 - ',
    );
  });

  it('RFC 5424 structured data is escaped on the way out and read back', () => {
    const line = formatRfc5424({
      ...base,
      msgid: 'ID47',
      structuredData: [{ id: 'meta@1', params: [{ name: 'k', value: 'a"b\\c]d' }] }],
    });
    expect(line).to.contain(' ID47 [meta@1 k="a\\"b\\\\c\\]d"] hello');
    expect(one(decode(line, base.date))).to.deep.include({
      msgid: 'ID47',
      structureddata: '[meta@1 k="a\\"b\\\\c\\]d"]',
      message: 'hello',
      format: 'RFC5424',
    });
  });

  it('round trip: every message, severity and time of day formats and parses back in both formats', () => {
    const rnd = prng(3164);
    for (const message of MESSAGES) {
      for (let k = 0; k < 8; k++) {
        const date = new Date(
          2024,
          Math.floor(rnd() * 12),
          1 + Math.floor(rnd() * 28),
          Math.floor(rnd() * 24),
          Math.floor(rnd() * 60),
          Math.floor(rnd() * 60),
          Math.floor(rnd() * 1000),
        );
        const m = { ...base, severity: k, facility: Math.floor(rnd() * 24), message, date };
        const soon = new Date(date.getTime() + 60_000);
        const d3 = one(decode(formatRfc3164(m), soon));
        expect(d3, formatRfc3164(m)).to.deep.include({
          priority: String(priority(m.facility, k)),
          hostname: 'h1',
          appname: 'platform',
          procid: '42',
          message,
          format: 'RFC3164',
        });
        expect(d3.timestamp).to.equal(new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString());
        const d5 = one(decode(formatRfc5424(m), soon));
        expect(d5, formatRfc5424(m)).to.deep.include({
          priority: String(priority(m.facility, k)),
          hostname: 'h1',
          appname: 'platform',
          procid: '42',
          message,
          timestamp: date.toISOString(),
          format: 'RFC5424',
        });
      }
    }
  });

  it('round trip over TCP: octet counting keeps newlines; LF framing never splits a message', () => {
    const lines = MESSAGES.map((message) => formatRfc5424({ ...base, message }));
    const dec = new FrameDecoder();
    const counted = dec
      .push(Buffer.concat(lines.map((l) => frameOctetCounted(l))))
      .map((f) => one(decode(f, base.date)).message);
    expect(counted).to.deep.equal(MESSAGES);
    const lf = new FrameDecoder()
      .push(Buffer.concat(lines.map((l) => frameLf(l))))
      .map((f) => one(decode(f, base.date)).message);
    expect(lf).to.deep.equal(MESSAGES.map((m) => m.replace(/\n/g, ' ')));
  });

  it('frames: octet count in bytes; LF framing replaces LF, CR LF and NUL with one space', () => {
    expect(frameOctetCounted('héllo').toString()).to.equal('6 héllo');
    expect(frameOctetCounted(Buffer.from([0xef, 0xbb, 0xbf, 0x41])).toString('hex')).to.equal(
      Buffer.from('4 ').toString('hex') + 'efbbbf41',
    );
    expect(frameLf('a\nb\r\nc\0d').toString()).to.equal('a b c d\n');
    expect(frameLf(Buffer.from('ü\nü')).toString()).to.equal('ü ü\n');
  });
});

describe('syslog sender messages from Data', () => {
  const who = { hostname: 'h1', tag: 'platform', pid: 7 };
  const data = (entries: Record<string, string[]>): ValueMap => Object.assign(emptyMap(), entries);

  it('maps keys to severities: error, warn, info, critical; anything else debug', () => {
    expect(
      ['error', 'warn', 'info', 'critical', 'debug', 'other', 'toString', '__proto__'].map(severityOfKey),
    ).to.deep.equal([3, 4, 6, 2, 7, 7, 7, 7]);
  });

  it('sends each value of each key as one message, in order', () => {
    const out = outgoingMessages(data({ info: ['a', 'b'], error: ['c'], custom: ['d'] }), who, false, base.date);
    expect(out.map((m) => [m.severity, m.message])).to.deep.equal([
      [6, 'a'],
      [6, 'b'],
      [3, 'c'],
      [7, 'd'],
    ]);
    expect(out.every((m) => m.facility === Facility.user && m.tag === 'platform' && m.pid === 7)).to.equal(true);
  });

  it('SendJSON: all Data as one JSON message with the most severe key’s severity; nothing for empty Data', () => {
    const d = data({ info: ['a'], critical: ['b', 'c'], x: ['y'] });
    const out = outgoingMessages(d, who, true, base.date);
    expect(out).to.have.length(1);
    expect(out[0]!.severity).to.equal(Severity.critical);
    expect(JSON.parse(out[0]!.message)).to.deep.equal({ info: ['a'], critical: ['b', 'c'], x: ['y'] });
    expect(outgoingMessages(data({ x: ['y'] }), who, true)[0]!.severity).to.equal(Severity.debug);
    expect(outgoingMessages(emptyMap(), who, true)).to.deep.equal([]);
    expect(outgoingMessages(emptyMap(), who, false)).to.deep.equal([]);
  });

  it('refuses out-of-range facility or severity (a programming error)', () => {
    expect(() => priority(24, 0)).to.throw(RangeError);
    expect(() => priority(1, 8)).to.throw(RangeError);
    expect(priority(23, 7)).to.equal(191);
  });
});
