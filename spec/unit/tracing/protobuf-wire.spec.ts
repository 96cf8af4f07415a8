import { expect } from 'chai';
import { FIXED64, key, putNanos, setLimit } from '../../../actors/observe/protobuf-wire.js';

/** What putNanos should write: the nanoseconds of `ms`, to the microsecond, computed in BigInt. */
function expected(ms: number): bigint {
  const s = Math.floor(ms / 1000);
  let us = Math.round((ms - s * 1000) * 1000);
  let seconds = BigInt(s);
  if (us >= 1e6) {
    seconds++;
    us -= 1e6;
  }
  return seconds * 1_000_000_000n + BigInt(us) * 1000n;
}

describe('actors/shared/protobuf-wire: putNanos', () => {
  const field = key(7, FIXED64);
  const written = (ms: number): bigint => {
    const b = Buffer.alloc(9);
    const saved = setLimit(9);
    try {
      expect(putNanos(b, 0, field, ms)).to.equal(9);
    } finally {
      setLimit(saved);
    }
    expect(b[0]).to.equal(field);
    return b.readBigUInt64LE(1);
  };

  it('writes milliseconds since the epoch as fixed64 nanoseconds, in one second and across seconds, forwards and back', () => {
    const now = Date.now() + 0.123;
    const times = [
      now,
      now + 0.001,
      now + 999.9994,
      now + 1000,
      now - 1000,
      now,
      0,
      1,
      999.9996,
      1_700_000_000_000.5,
      4_294_967_295_999.999,
      now + 86_400_000,
    ];
    for (const ms of times) expect(written(ms), String(ms)).to.equal(expected(ms));
  });

  it('is exact over 20,000 random times around today, each second met in order and out of it', () => {
    let x = 12345;
    const random = (): number => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    const base = 1_790_000_000_000;
    for (let i = 0; i < 20_000; i++) {
      const ms = base + Math.floor(random() * 5_000) + random() * (i % 2 === 0 ? 1 : 0.999);
      expect(written(ms), String(ms)).to.equal(expected(ms));
    }
  });

  it('rounds a time a fraction of a microsecond before the next second into that second', () => {
    const ms = 1_790_000_001_000 - 0.0002;
    written(1_790_000_000_500);
    expect(written(ms)).to.equal(1_790_000_001_000_000_000n);
  });
});
