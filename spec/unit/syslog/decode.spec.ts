import { expect } from 'chai';
import { decodeSyslog } from '../../../actors/syslog/decode.js';
import { FrameDecoder, FrameError } from '../../../actors/syslog/framing.js';
import { formatRfc3164, formatRfc5424, frameLf, frameOctetCounted } from '../../../actors/syslog/format.js';
import { CORPUS, NOW } from './corpus.js';

const decode = (line: string | Buffer, format: 'RFC3164' | 'RFC5424' | 'RFC6587' = 'RFC3164') => decodeSyslog(Buffer.isBuffer(line) ? line : Buffer.from(line, 'utf8'), { format, decodeCEF: true, remoteAddress: '10.9.8.7', now: NOW });

/** A tiny seeded PRNG (mulberry32) so the fuzz run is repeatable. */
function prng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('syslog decoding (RFC 5424, RFC 3164, CEF)', () => {
  it(`decodes a corpus of ${CORPUS.length} real-world lines into the expected fields`, () => {
    expect(CORPUS.length).to.be.at.least(60);
    for (const [line, want] of CORPUS) {
      const d = decode(line);
      expect(d.ok, line).to.equal(true);
      if (!d.ok) continue;
      const { cef, ...fields } = want;
      for (const [k, v] of Object.entries(fields)) expect(d.data[k], `${k} of ${JSON.stringify(line)}`).to.deep.equal([v]);
      for (const [k, v] of Object.entries(cef ?? {})) expect(d.data[`cef_${k}`], `cef_${k} of ${line}`).to.deep.equal([v]);
      expect(d.data.remoteaddress).to.deep.equal(['10.9.8.7']);
      expect(Object.getPrototypeOf(d.data)).to.equal(null);
    }
  });

  it('never writes the text BOM or a 12-hour clock; counts the other format as unexpected', () => {
    const d = decode('<13>1 2024-03-15T13:22:33Z h a - - - \uFEFFx');
    expect(d.ok && d.data.message).to.deep.equal(['x']);
    const five = decode('<13>1 2024-03-15T13:22:33Z h a - - - x', 'RFC3164');
    expect(five.ok && five.expected).to.equal(false);
    const three = decode('<13>Mar 15 11:22:33 host app: x', 'RFC5424');
    expect(three.ok && three.expected).to.equal(false);
    expect(decode('   ').ok).to.equal(false);
  });

  it('formats what it parses back (RFC 3164 and RFC 5424), 24-hour clock, space-padded day', () => {
    const m = { facility: 1, severity: 3, hostname: 'h1', tag: 'platform', pid: 42, message: 'line one\nline two ü', date: new Date(2024, 2, 5, 17, 4, 9, 123) };
    const bsd = formatRfc3164(m);
    expect(bsd.startsWith('<11>Mar  5 17:04:09 h1 platform[42]: ')).to.equal(true);
    const d3 = decode(bsd);
    expect(d3.ok && d3.data.message).to.deep.equal(['line one\nline two ü']);
    expect(d3.ok && d3.data.severity).to.deep.equal(['error']);
    const ietf = formatRfc5424(m);
    const d5 = decode(ietf, 'RFC5424');
    expect(d5.ok && d5.data.message).to.deep.equal(['line one\nline two ü']);
    expect(d5.ok && d5.data.timestamp).to.deep.equal([m.date.toISOString()]);
    expect(frameLf('a\nb').toString()).to.equal('a b\n');
    expect(frameOctetCounted('héllo').toString()).to.equal('6 héllo');
  });

  it('decodes RFC 6587 frames: octet counting and LF, mixed, across chunks, one byte at a time', () => {
    const stream = Buffer.concat([frameOctetCounted('<13>first\nwith newline'), Buffer.from('<13>second\n'), frameOctetCounted('<13>third'), Buffer.from('<13>fourth\r\n')]);
    const whole = new FrameDecoder(1000).push(stream).map(String);
    expect(whole).to.deep.equal(['<13>first\nwith newline', '<13>second', '<13>third', '<13>fourth']);
    const dec = new FrameDecoder(1000);
    const frames: string[] = [];
    for (const b of stream) frames.push(...dec.push(Buffer.from([b])).map(String));
    expect(frames).to.deep.equal(whole);
  });

  it('octet-count abuse closes the stream with bounded memory', () => {
    expect(() => new FrameDecoder(1000).push(Buffer.from('99999999999 x'))).to.throw(FrameError);
    expect(() => new FrameDecoder(1000).push(Buffer.from('5000 xx'))).to.throw(FrameError, 'over the limit');
    expect(() => new FrameDecoder(1000).push(Buffer.from('0 x'))).to.throw(FrameError);
    expect(() => new FrameDecoder(1000).push(Buffer.from('12345678901234'))).to.throw(FrameError);
    expect(() => new FrameDecoder(100).push(Buffer.alloc(200, 0x61))).to.throw(FrameError, 'without a line end');
    const partial = new FrameDecoder(1000);
    expect(partial.push(Buffer.from('10 abc'))).to.deep.equal([]);
    expect(partial.push(Buffer.from('defghij')).map(String)).to.deep.equal(['abcdefghij']);
  });

  it('fuzz: 100,000 mutated lines never throw; every unmutated line decodes', function () {
    this.timeout(60_000);
    const rnd = prng(20241122);
    const lines = CORPUS.map(([l]) => Buffer.from(l, 'utf8'));
    for (let i = 0; i < 100_000; i++) {
      const base = lines[i % lines.length]!;
      const b = Buffer.from(base);
      const edits = 1 + Math.floor(rnd() * 4);
      for (let e = 0; e < edits && b.length > 0; e++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      const cut = rnd() < 0.2 ? b.subarray(0, Math.floor(rnd() * b.length)) : b;
      const r = decode(cut);
      if (r.ok) expect(r.data.message).to.be.an('array');
    }
    for (const l of lines) expect(decode(l).ok).to.equal(true);
  });
});
