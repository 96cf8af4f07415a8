import { expect } from 'chai';
import { DEFAULT_MAX_FRAME_BYTES, FrameDecoder, FrameError, FrameErrorKind } from '../../../actors/syslog/framing.js';
import { frameLf, frameOctetCounted } from '../../../actors/syslog/format.js';
import { prng } from '../../prng.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');
const text = (frames: readonly Buffer[]): string[] => frames.map((f) => f.toString('utf8'));

/** Feeds `stream` cut into pieces by `cut`, collecting frames; stops at the first error. */
function run(
  stream: Buffer,
  cut: (remaining: number) => number,
  max = 1000,
): { frames: string[]; error?: FrameError; peak: number } {
  const dec = new FrameDecoder({ maxFrameBytes: max });
  const frames: string[] = [];
  let peak = 0;
  for (let i = 0; i < stream.length;) {
    const n = Math.max(1, Math.min(cut(stream.length - i), stream.length - i));
    const r = dec.feed(stream.subarray(i, i + n));
    frames.push(...text(r.frames));
    peak = Math.max(peak, dec.bufferedBytes);
    if (r.error) return { frames, error: r.error, peak };
    i += n;
  }
  frames.push(...text(dec.end()));
  return { frames, peak };
}

const MIXED = Buffer.concat([
  frameOctetCounted('<13>first\nwith newline'),
  b('<13>second\n'),
  frameOctetCounted('<13>third ünï'),
  b('<13>fourth\r\n'),
  b('<13>fifth\0'),
  b('\n\n'),
  frameOctetCounted(b('<13>sixth')),
  b('-dash line\n'),
  b('+plus line\n'),
  b('<13>last, no LF'),
]);
const MIXED_FRAMES = [
  '<13>first\nwith newline',
  '<13>second',
  '<13>third ünï',
  '<13>fourth',
  '<13>fifth',
  '<13>sixth',
  '-dash line',
  '+plus line',
  '<13>last, no LF',
];

describe('RFC 6587 frame decoder', () => {
  it('decodes octet-counted, LF, CR LF and NUL frames mixed in one stream', () => {
    expect(run(MIXED, () => MIXED.length).frames).to.deep.equal(MIXED_FRAMES);
  });

  it('gives the same frames fed one byte at a time, and in random pieces', () => {
    expect(run(MIXED, () => 1).frames).to.deep.equal(MIXED_FRAMES);
    const rnd = prng(6587);
    for (let round = 0; round < 200; round++)
      expect(run(MIXED, () => 1 + Math.floor(rnd() * 20)).frames).to.deep.equal(MIXED_FRAMES);
  });

  it('completes partial frames across chunks', () => {
    const dec = new FrameDecoder(1000);
    expect(dec.push(b('10 abc'))).to.deep.equal([]);
    expect(text(dec.push(b('defghij11 <13')))).to.deep.equal(['abcdefghij']);
    expect(text(dec.push(b('>part')))).to.deep.equal([]);
    expect(text(dec.push(b('ial<13>lf')))).to.deep.equal(['<13>partial']);
    expect(text(dec.push(b(' line\r')))).to.deep.equal([]);
    expect(text(dec.push(b('\n')))).to.deep.equal(['<13>lf line']);
  });

  it('keeps earlier frames intact while later ones are decoded', () => {
    const dec = new FrameDecoder(1000);
    const frames: Buffer[] = [];
    for (const byte of Buffer.concat([b('<13>aaaa\n'), frameOctetCounted('<13>bbbb'), b('<13>cccc\n')]))
      frames.push(...dec.push(Buffer.from([byte])));
    expect(text(frames)).to.deep.equal(['<13>aaaa', '<13>bbbb', '<13>cccc']);
  });

  it('drops a partial octet-counted frame at the end of the stream', () => {
    const dec = new FrameDecoder(1000);
    dec.push(b('20 only ten b'));
    expect(dec.end()).to.deep.equal([]);
  });

  it('takes frames of exactly the cap, and refuses one byte more', () => {
    const cap = 100;
    expect(run(frameOctetCounted('x'.repeat(cap)), () => 7, cap).frames).to.deep.equal(['x'.repeat(cap)]);
    expect(run(b(`${'y'.repeat(cap)}\r\n`), () => 7, cap).frames).to.deep.equal(['y'.repeat(cap)]);
    expect(run(frameOctetCounted('x'.repeat(cap + 1)), () => 7, cap).error?.kind).to.equal(
      FrameErrorKind.countTooLarge,
    );
    expect(run(b(`${'y'.repeat(cap + 1)}\n`), () => 7, cap).error?.kind).to.equal(FrameErrorKind.frameTooLarge);
    expect(run(b(`${'y'.repeat(cap + 1)}\n`), () => 1000, cap).error?.kind).to.equal(FrameErrorKind.frameTooLarge);
  });

  it('defaults the cap to 64 KiB', () => {
    expect(new FrameDecoder().maxFrameBytes).to.equal(DEFAULT_MAX_FRAME_BYTES).and.equal(65536);
    expect(new FrameDecoder().feed(b('65536 ')).error).to.equal(undefined);
    expect(new FrameDecoder().feed(b('65537 ')).error?.kind).to.equal(FrameErrorKind.countTooLarge);
  });

  describe('abuse: the stream is refused with a typed error telling the caller to close', () => {
    const kind = (stream: string, max = 1000): string | undefined => new FrameDecoder(max).feed(b(stream)).error?.kind;

    it('a huge count, even before its space arrives', () => {
      expect(kind('99999999999 x')).to.equal(FrameErrorKind.countTooLarge);
      expect(kind('12345678901234')).to.equal(FrameErrorKind.countTooLarge);
      expect(kind('5000 xx')).to.equal(FrameErrorKind.countTooLarge);
      expect(kind('18446744073709551617 <13>x')).to.equal(FrameErrorKind.countTooLarge);
    });
    it('a negative or signed count', () => {
      expect(kind('-5 <13>x')).to.equal(FrameErrorKind.negativeCount);
      expect(kind('+5 <13>x')).to.equal(FrameErrorKind.negativeCount);
      expect(kind('-1')).to.equal(undefined);
      expect(kind('-1 ')).to.equal(FrameErrorKind.negativeCount);
    });
    it('a non-numeric count or one with a leading zero', () => {
      expect(kind('12a <13>x')).to.equal(FrameErrorKind.badCount);
      expect(kind('1e3 <13>x')).to.equal(FrameErrorKind.badCount);
      expect(kind('0 x')).to.equal(FrameErrorKind.badCount);
      expect(kind('007 <13>x')).to.equal(FrameErrorKind.badCount);
      expect(kind('12\n')).to.equal(FrameErrorKind.badCount);
    });
    it('is a FrameError (Code 400) that push throws, carrying the frames decoded before it', () => {
      const dec = new FrameDecoder(1000);
      let caught: unknown;
      try {
        dec.push(b('<13>good\n5 <13>x-5 bad'));
      } catch (e) {
        caught = e;
      }
      expect(caught).to.be.instanceOf(FrameError);
      const e = caught as FrameError;
      expect(e.code).to.equal(400);
      expect(e.kind).to.equal(FrameErrorKind.negativeCount);
      expect(text(e.frames)).to.deep.equal(['<13>good', '<13>x']);
      // refused for good: the connection must close
      expect(dec.feed(b('<13>more\n')).error?.kind).to.equal(FrameErrorKind.negativeCount);
      expect(dec.end()).to.deep.equal([]);
    });
  });

  it('holds at most the cap (plus a count) however the bytes arrive', () => {
    const cap = 4096;
    // 1 MiB without a line end, in 1-byte, 100-byte and 64 KiB chunks
    const flood = Buffer.alloc(1 << 20, 0x61);
    for (const size of [1, 100, 65536]) {
      const r = run(flood.subarray(0, size === 1 ? 2 * cap : flood.length), () => size, cap);
      expect(r.error?.kind, `chunks of ${size}`).to.equal(FrameErrorKind.frameTooLarge);
      expect(r.peak).to.be.at.most(cap + 1);
    }
    const slow = run(Buffer.concat([b(`${cap} `), Buffer.alloc(cap, 0x62)]), () => 1, cap);
    expect(slow.frames).to.have.length(1);
    expect(slow.peak).to.be.at.most(cap);
  });

  it('framing by the sender reads back: octet counting keeps newlines, LF framing turns them into spaces', () => {
    const msgs = ['<13>one\ntwo', '<13>crlf\r\ninside', '<13>nul\0inside', '<13>plain ✓'];
    const octets = Buffer.concat(msgs.map((m) => frameOctetCounted(m)));
    expect(run(octets, () => 3).frames).to.deep.equal(msgs);
    const lf = Buffer.concat(msgs.map((m) => frameLf(m)));
    expect(run(lf, () => 3).frames).to.deep.equal(['<13>one two', '<13>crlf inside', '<13>nul inside', '<13>plain ✓']);
  });
});
