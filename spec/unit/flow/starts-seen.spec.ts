/** A flow's idempotency keys within DedupWindow (actors/flow/starts-seen.ts). */
import { expect } from 'chai';
import { StartsSeen } from '../../../actors/flow/starts-seen.js';

describe('flow starts seen (DedupWindow)', () => {
  it('a key names its run within the window, not after it; the sweep forgets it and says so to the store', () => {
    const seen = new StartsSeen(1000);
    expect(seen.remember('k', 'run-1', 5000)).to.deep.equal([
      { type: 'seen', key: 'k', entryKey: 'run-1', seenAt: 5000 },
    ]);
    expect(seen.runOf('k', 5999)).to.equal('run-1');
    expect(seen.runOf('k', 6000)).to.equal(undefined);
    expect(seen.sweep(5500)).to.equal(undefined);
    expect(seen.sweep(6000)).to.deep.equal({ type: 'forget-seen', before: 5000 });
    expect(seen.runOf('k', 5001)).to.equal(undefined);
  });

  it('forget drops a key only while it names that run; window 0 remembers nothing', () => {
    const seen = new StartsSeen(1000);
    seen.remember('k', 'run-1', 1);
    seen.forget('k', 'run-2');
    expect(seen.runOf('k', 2)).to.equal('run-1');
    seen.forget('k', 'run-1');
    expect(seen.runOf('k', 2)).to.equal(undefined);
    const off = new StartsSeen(0);
    expect(off.remember('k', 'run-1', 1)).to.deep.equal([]);
    expect(off.runOf('k', 1)).to.equal(undefined);
    expect(off.sweep(10)).to.equal(undefined);
  });
});
