import { expect } from 'chai';
import { decodeSyslog } from '../../../actors/syslog/decode.js';
import type { DecodeOptions } from '../../../actors/syslog/decode.js';
import { FrameDecoder } from '../../../actors/syslog/framing.js';
import { frameLf, frameOctetCounted } from '../../../actors/syslog/format.js';
import { DATA_KEYS } from '../../../actors/syslog/record.js';
import { CORPUS, NOW } from './corpus.js';
import { prng } from '../../prng.js';
import { cpuMsOf } from '../../cpu-time.js';

const FORMATS: DecodeOptions['format'][] = ['RFC3164', 'RFC5424', 'RFC6587', 'auto'];
/** Bytes that matter to the parsers, so mutations hit the interesting branches often. */
const SPECIAL = Buffer.from('<>[]"\\=|: -*.%\n\r\0\t0123456789TZ+', 'latin1');
const ISO_OR_EMPTY = /^(|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)$/;

function mutate(base: Buffer, rnd: () => number): Buffer {
  let b: Buffer = Buffer.from(base);
  const edits = 1 + Math.floor(rnd() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rnd() * (b.length + 1));
    const pick = rnd();
    const byte = rnd() < 0.5 ? SPECIAL[Math.floor(rnd() * SPECIAL.length)]! : Math.floor(rnd() * 256);
    if (pick < 0.35 && b.length > 0) b[Math.min(at, b.length - 1)] = byte;
    else if (pick < 0.6) b = Buffer.concat([b.subarray(0, at), Buffer.from([byte]), b.subarray(at)]);
    else if (pick < 0.8) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + Math.floor(rnd() * 8))]);
    else if (pick < 0.9) b = b.subarray(0, at);
    else b = Buffer.concat([b.subarray(0, at), b.subarray(Math.floor(rnd() * b.length)), b.subarray(at)]);
  }
  return b;
}

describe('syslog fuzz (seeded, bounded)', () => {
  const lines = CORPUS.map((c) => Buffer.from(c.line, 'utf8'));

  it('every unmutated corpus line decodes, malformed ones included', () => {
    for (const l of lines)
      expect(
        decodeSyslog(l, { format: 'RFC3164', decodeCEF: true, remoteAddress: 'r', now: NOW }).ok,
        l.toString(),
      ).to.equal(true);
  });

  it('100,000 mutated lines never throw and always give well-shaped Data', function () {
    this.timeout(20_000);
    const rnd = prng(20241122);
    let decoded = 0;
    for (let i = 0; i < 100_000; i++) {
      const input = mutate(lines[i % lines.length]!, rnd);
      const r = decodeSyslog(input, {
        format: FORMATS[i % FORMATS.length]!,
        decodeCEF: i % 2 === 0,
        remoteAddress: 'r',
        now: NOW,
      });
      if (!r.ok) continue;
      decoded++;
      const d = r.data;
      for (const k of DATA_KEYS)
        if (d[k]?.length !== 1 || typeof d[k]![0] !== 'string')
          throw new Error(`${k} malformed for ${JSON.stringify(input.toString('latin1'))}`);
      if (!ISO_OR_EMPTY.test(d.timestamp![0]!))
        throw new Error(`timestamp ${d.timestamp![0]} for ${JSON.stringify(input.toString('latin1'))}`);
      const pri = Number(d.priority![0]);
      if (!(pri >= 0 && pri <= 191)) throw new Error(`priority ${pri}`);
    }
    expect(decoded).to.be.greaterThan(95_000);
  });

  it('pathological inputs stay linear (64 KiB of one repeated character)', function () {
    this.timeout(20_000);
    for (const ch of [
      '<',
      '[',
      '"',
      '\\',
      '=',
      ' ',
      '\n',
      'a',
      '%',
      '-',
      '1',
      ':',
      'CEF:0|',
      'a=',
      '[a b="',
      'Mar 15 ',
      '1: ',
    ]) {
      const big = Buffer.from(`<13>1 - h a - - ${ch.repeat(Math.ceil(65536 / ch.length))}x`);
      // CPU time, not wall-clock time: a busy machine does not make the decoder quadratic
      const ms = cpuMsOf(() => {
        decodeSyslog(big, { format: 'RFC3164', decodeCEF: true, remoteAddress: 'r', now: NOW });
        decodeSyslog(big.subarray(16), { format: 'RFC3164', decodeCEF: true, remoteAddress: 'r', now: NOW });
      });
      expect(ms, JSON.stringify(ch)).to.be.below(1000);
    }
  });

  it('2,000 mutated TCP streams in random chunks: feed never throws, memory stays under the cap', function () {
    this.timeout(20_000);
    const rnd = prng(6587);
    const cap = 2048;
    for (let s = 0; s < 2_000; s++) {
      const parts: Buffer[] = [];
      for (let k = 0; k < 8; k++) {
        const l = lines[Math.floor(rnd() * lines.length)]!;
        parts.push(rnd() < 0.5 ? frameOctetCounted(l) : frameLf(l));
      }
      const stream = rnd() < 0.7 ? mutate(Buffer.concat(parts), rnd) : Buffer.concat(parts);
      const dec = new FrameDecoder(cap);
      for (let i = 0; i < stream.length;) {
        const n = 1 + Math.floor(rnd() * 64);
        const r = dec.feed(stream.subarray(i, i + n));
        for (const f of r.frames) {
          if (f.length > cap) throw new Error('frame over the cap');
          decodeSyslog(f, { format: 'RFC6587', decodeCEF: true, remoteAddress: 'r', now: NOW });
        }
        if (dec.bufferedBytes > cap + 8) throw new Error(`holds ${dec.bufferedBytes} bytes`);
        if (r.error) break;
        i += n;
      }
      dec.end();
    }
  });
});
