import { expect } from 'chai';
import {
  TRACESTATE_MAX_LENGTH,
  boundTracestate,
  formatTraceparent,
  newSampledTraceparent,
  newSpanId,
  newTraceparent,
  parseTraceparent,
  sampledAt,
  sampledBytes,
  spanIdAt,
  spanIdBytes,
  traceIdOf,
} from '../../../actors/observe/trace-context.js';

describe('actors/observe/trace-context: W3C traceparent', () => {
  const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('parses a valid traceparent (surrounding blanks) and formats it back; upper-case hex is invalid (HEXDIGLC), not continued', () => {
    expect(parseTraceparent(valid)).to.deep.equal({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      flags: 1,
      text: valid,
    });
    expect(parseTraceparent(` ${valid} `)).to.deep.equal({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      flags: 1,
      text: valid,
    });
    expect(parseTraceparent(valid.toUpperCase())).to.equal(undefined);
    expect(parseTraceparent(valid.replace('4bf92f', '4BF92F'))).to.equal(undefined);
    expect(formatTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 1)).to.equal(valid);
    expect(formatTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 0)).to.match(/-00$/);
  });

  it('refuses what the specification calls invalid: all-zero ids, version ff, wrong lengths, non-hex, extra fields on version 00', () => {
    for (const bad of [
      undefined,
      '',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x',
      `${valid}-extra`,
      '00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01',
    ]) {
      expect(parseTraceparent(bad), String(bad)).to.equal(undefined);
    }
  });

  it('a tracestate is passed on within 32 list-members and 512 characters: long members go first, then from the end', () => {
    expect(boundTracestate(undefined)).to.equal(undefined);
    expect(boundTracestate('a=1,b=2')).to.equal('a=1,b=2');
    const many = Array.from({ length: 40 }, (_, i) => `v${i}=x`).join(',');
    expect(boundTracestate(many)!.split(',')).to.deep.equal(Array.from({ length: 32 }, (_, i) => `v${i}=x`));
    // a client's 10,089 characters: the one huge member goes, the rest fits
    const huge = `a=1,big=${'z'.repeat(10_080)},b=2`;
    expect(boundTracestate(huge)).to.equal('a=1,b=2');
    const long = Array.from({ length: 20 }, (_, i) => `k${i}=${'y'.repeat(40)}`).join(',');
    const cut = boundTracestate(long)!;
    expect(cut.length).to.be.at.most(TRACESTATE_MAX_LENGTH);
    expect(long.startsWith(cut)).to.equal(true);
    expect(boundTracestate(` ,${'q'.repeat(600)}`)).to.equal(undefined);
  });

  it('reads a later version by its version-00 fields, extra fields after a dash', () => {
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later')).to.deep.include({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      text: valid,
    });
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x')).to.equal(undefined);
  });

  it('makes distinct, valid, unsampled ids', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newTraceparent().slice(3, 35)));
    expect(ids.size).to.equal(2000);
    for (const id of [...ids].slice(0, 50)) expect(id).to.match(/^[0-9a-f]{32}$/);
    expect(newSpanId()).to.match(/^[0-9a-f]{16}$/);
    const fresh = newTraceparent();
    expect(parseTraceparent(fresh)?.flags).to.equal(0);
    // new traceparents are cut from pooled strings of them: distinct and whole across refills of the
    // pool (256) and of its random bytes (2,048)
    // unsampled and sampled ones (the recorder's roots, flags 01) drawn in turn share the random bytes
    const parents = Array.from({ length: 5000 }, () => newTraceparent());
    const roots = Array.from({ length: 5000 }, (_, i) =>
      i % 3 === 0 ? newTraceparent() : newSampledTraceparent(),
    ).filter((tp) => tp.endsWith('-01'));
    expect(new Set([...parents, ...roots]).size).to.equal(5000 + roots.length);
    for (const tp of parents) expect(parseTraceparent(tp)?.text).to.equal(tp);
    for (const tp of roots) expect(parseTraceparent(tp)).to.deep.include({ flags: 1, text: tp });
    // hex digits spread evenly over the ids (a byte written to the wrong place would show)
    const counts = new Map<string, number>();
    for (const tp of parents)
      for (const c of tp.slice(3, 35) + tp.slice(36, 52)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).to.equal(16);
    for (const n of counts.values()) expect(n).to.be.within(((5000 * 48) / 16) * 0.95, ((5000 * 48) / 16) * 1.05);
  });

  it('makes distinct span ids, across refills of the pools and of their random bytes, interleaved with traceparents', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => (i % 4 === 0 ? (newTraceparent(), newSpanId()) : newSpanId()));
    expect(new Set(ids).size).to.equal(10_000);
    for (const id of ids) expect(id).to.match(/^[0-9a-f]{16}$/);
    expect(ids).to.not.include('0'.repeat(16));
    const counts = new Map<string, number>();
    for (const id of ids) for (const c of id) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).to.equal(16);
    for (const n of counts.values()) expect(n).to.be.within(((10_000 * 16) / 16) * 0.95, ((10_000 * 16) / 16) * 1.05);
  });

  it('tells where the bytes of the ids it made last are, as their hex reads, and they stay as long as they are held', () => {
    const hex = (bytes: Uint8Array, at: number, n: number): string =>
      Buffer.from(bytes.subarray(at, at + n)).toString('hex');
    const held: Array<[string, Uint8Array, number]> = [];
    for (let i = 0; i < 3000; i++) {
      const root = newSampledTraceparent();
      const [rootBytes, rootAt] = [sampledBytes(), sampledAt()];
      const spanId = newSpanId();
      const [spanBytes, spanAt] = [spanIdBytes(), spanIdAt()];
      if (i % 7 === 0) newTraceparent();
      expect([hex(rootBytes, rootAt, 16), hex(rootBytes, rootAt + 16, 8)], `root ${i}`).to.deep.equal([
        root.slice(3, 35),
        root.slice(36, 52),
      ]);
      expect(hex(spanBytes, spanAt, 8), `span id ${i}`).to.equal(spanId);
      if (i % 100 === 0) held.push([root.slice(3, 35), rootBytes, rootAt]);
    }
    // pools refilled many times since: what a span holds is its own
    for (const [traceId, bytes, at] of held) expect(hex(bytes, at, 16)).to.equal(traceId);
  });

  it('finds the trace id of a Control, ignoring a malformed or missing traceparent', () => {
    expect(traceIdOf({ traceparent: [valid] })).to.equal('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traceIdOf({ traceparent: ['nonsense'] })).to.equal(undefined);
    expect(traceIdOf({})).to.equal(undefined);
  });
});
