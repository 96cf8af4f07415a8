import { expect } from 'chai';
import { AllowList, sourceAddress } from '../../../actors/syslog/allow-from.js';
import { SourceCounts } from '../../../actors/syslog/source-counts.js';
import { ConfigError } from '../../../protocol/errors.js';

function refusal(text: string): string {
  try {
    AllowList.parse(text);
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('AllowFrom (AllowList)', () => {
  it("'' and blanks allow every source", () => {
    expect(AllowList.parse('')).to.equal(undefined);
    expect(AllowList.parse(' , ')).to.equal(undefined);
  });

  it('matches IPv4 and IPv6 CIDRs; a plain address is /32 or /128', () => {
    const list = AllowList.parse('10.0.0.0/8, 192.168.1.7 ,2001:db8::/32, ::1')!;
    expect(list.entries).to.deep.equal(['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '::1']);
    for (const a of ['10.0.0.1', '10.255.255.255', '192.168.1.7', '2001:db8::5', '2001:db8:ffff::1', '::1'])
      expect(list.allows(a), a).to.equal(true);
    for (const a of ['11.0.0.1', '192.168.1.8', '2001:db9::1', '::2', 'not an address', ''])
      expect(list.allows(a), a).to.equal(false);
  });

  it('an IPv4-mapped IPv6 peer (dual-stack socket) matches the IPv4 entries, and IPv6 entries never admit IPv4 peers', () => {
    const list = AllowList.parse('127.0.0.0/8, ::/0')!;
    expect(list.allows('::ffff:127.0.0.2')).to.equal(true);
    expect(list.allows('::FFFF:10.0.0.1')).to.equal(false);
    expect(list.allows('10.0.0.1')).to.equal(false);
    expect(list.allows('fe80::1')).to.equal(true);
    expect(sourceAddress('::ffff:127.0.0.2')).to.equal('127.0.0.2');
    expect(sourceAddress('::1')).to.equal('::1');
  });

  it('takes IPv4-mapped entries as the IPv4 network they write', () => {
    const list = AllowList.parse('::ffff:10.0.0.0/104, ::ffff:192.0.2.1')!;
    expect(list.allows('10.9.8.7')).to.equal(true);
    expect(list.allows('::ffff:192.0.2.1')).to.equal(true);
    expect(list.allows('192.0.2.2')).to.equal(false);
  });

  it('names a bad entry: not an address, a prefix over the family, a prefix that is not a number', () => {
    expect(refusal('10.0.0.0/8, 10.0.0.0/33')).to.equal(
      "AllowFrom entry '10.0.0.0/33' is not a CIDR or an address: the prefix length 33 is over 32",
    );
    expect(refusal('::/129')).to.match(/'::\/129'.*over 128/);
    expect(refusal('10.0.0.0/x')).to.match(/'10\.0\.0\.0\/x'.*prefix length 'x' is not a number/);
    expect(refusal('host.example')).to.match(/'host\.example' is not an IPv4 or IPv6 address/);
    expect(refusal('10.0.0/8')).to.match(/'10\.0\.0' is not an IPv4 or IPv6 address/);
    expect(refusal('::ffff:10.0.0.0/8')).to.match(/prefix length of 96 to 128, not 8/);
  });
});

describe('SourceCounts (bounded per-source counts)', () => {
  it('counts per source, most first', () => {
    const c = new SourceCounts(3);
    for (const s of ['a', 'b', 'a', 'c', 'a', 'b']) c.add(s);
    expect(c.snapshot()).to.deep.equal({ a: 3, b: 2, c: 1 });
    expect(c.total).to.equal(6);
  });

  it('names at most `shown` sources and holds at most `tracked`; the rest is other, and the counts add up to the total', () => {
    const c = new SourceCounts(2, 4);
    for (let i = 0; i < 5; i++) c.add('loud');
    for (let i = 0; i < 3; i++) c.add('second');
    for (let i = 0; i < 1000; i++) c.add(`spoofed-${i}`);
    const snap = c.snapshot();
    expect(Object.keys(snap)).to.deep.equal(['loud', 'second', 'other']);
    expect(snap.other).to.equal(1000);
    expect(Object.values(snap).reduce((a, b) => a + b, 0)).to.equal(c.total);
    expect((c as unknown as { counts: Map<string, number> }).counts.size).to.be.at.most(4);
  });
});
