import { expect } from 'chai';
import { SourceRate } from '../../../actors/syslog/source-rate.js';
import { ConfigError } from '../../../protocol/errors.js';

describe('SourceRate (per-source limits of the syslog receiver)', () => {
  it("is off for '', and refuses a rule that is not cidr=N/s, naming it", () => {
    expect(SourceRate.parse('')).to.equal(undefined);
    expect(SourceRate.parse(' ; ')).to.equal(undefined);
    for (const [text, why] of [
      ['10.0.0.0/8=500', /SourceRate rule '10\.0\.0\.0\/8=500' is not 'cidr=N\/s'/],
      ['10.0.0.0/8', /is not 'cidr=N\/s'/],
      ['10.0.0.0/8=0/s', /the rate must be above 0/],
      [
        '10.0.0.0/33=5/s',
        /SourceRate rule '10\.0\.0\.0\/33=5\/s': the CIDR '10\.0\.0\.0\/33' .*prefix length 33 is over 32/,
      ],
      ['example.org=5/s', /'example\.org' is not an IPv4 or IPv6 address/],
    ] as const) {
      expect(() => SourceRate.parse(text), text).to.throw(ConfigError, why);
    }
  });

  it('gives each address of a rule its own bucket of N per second (a burst of N), the first rule holding it wins, others are not limited', () => {
    const rate = SourceRate.parse('10.0.0.1/32=2/s; 10.0.0.0/8=5/s')!;
    const t = 1_000_000;
    const passed = (address: string, n: number, now = t): number =>
      Array.from({ length: n }, () => rate.take(address, now)).filter(Boolean).length;
    expect(passed('10.0.0.1', 10)).to.equal(2);
    expect(passed('10.0.0.2', 10)).to.equal(5);
    expect(passed('10.0.0.3', 10)).to.equal(5);
    expect(passed('192.0.2.1', 1000)).to.equal(1000);
    // an IPv4-mapped address is its IPv4 address, with the same bucket
    expect(passed('::ffff:10.0.0.1', 1)).to.equal(0);
    // half a second later, half a second's worth
    expect(passed('10.0.0.2', 10, t + 500)).to.equal(2);
    expect(passed('10.0.0.2', 10, t + 10_000)).to.equal(5);
  });

  it('reserves tokens ahead for the protocols that must not drop: each message waits its turn at the rate', () => {
    const rate = SourceRate.parse('0.0.0.0/0=4/s')!;
    const t = 5_000_000;
    const waits = Array.from({ length: 8 }, () => rate.reserve('10.1.1.1', t));
    expect(waits).to.deep.equal([0, 0, 0, 0, 250, 500, 750, 1000]);
    expect(rate.reserve('::1', t), 'no IPv6 rule').to.equal(0);
  });
});
