import { expect } from 'chai';
import { mock } from 'node:test';
import { Deadlines } from '../../../actors/shared/deadlines.js';
import { sleep } from '../../support/wait.js';

/**
 * A clock the test moves (Date.now and the timers together), so the precision of an expiry is
 * measured exactly, whatever the load on the machine: it advances 1 ms at a time until `done`.
 */
function withMockClock(run: (advanceUntil: (done: () => boolean, maxMs: number) => void) => void): void {
  mock.timers.enable({ apis: ['setInterval', 'setTimeout', 'Date'], now: 1_000_000 });
  try {
    run((done, maxMs) => {
      for (let ms = 0; ms < maxMs && !done(); ms++) mock.timers.tick(1);
    });
  } finally {
    mock.timers.reset();
  }
}

describe('deadlines (one shared timer for many operations)', () => {
  it('expires an operation once its limit has passed, within a quarter of the limit', () => {
    withMockClock((advanceUntil) => {
      const deadlines = new Deadlines();
      const started = Date.now();
      let expiredAt = 0;
      deadlines.start(80, () => (expiredAt = Date.now()));
      advanceUntil(() => false, 60);
      expect(expiredAt, 'not before the limit').to.equal(0);
      advanceUntil(() => expiredAt !== 0, 1000);
      expect(expiredAt - started).to.be.within(80, 80 + 20);
      expect(deadlines.size).to.equal(0);
    });
  });

  it('the first finisher wins: settle before the limit stops the expiry, settle after it is refused', async () => {
    const deadlines = new Deadlines();
    let expired = 0;
    const early = deadlines.start(40, () => expired++);
    expect(deadlines.settle(early)).to.equal(true);
    expect(deadlines.settle(early), 'settled twice').to.equal(false);
    const late = deadlines.start(40, () => expired++);
    await sleep(100);
    expect(expired).to.equal(1);
    expect(deadlines.settle(late), 'after its expiry').to.equal(false);
  });

  it('keeps the others intact when operations settle from the head, the middle and the tail', async () => {
    const deadlines = new Deadlines();
    const expired: number[] = [];
    const all = Array.from({ length: 7 }, (_, i) => deadlines.start(40, () => expired.push(i)));
    for (const i of [0, 3, 6, 4]) expect(deadlines.settle(all[i]!)).to.equal(true);
    expect(deadlines.size).to.equal(3);
    await sleep(100);
    expect(expired.sort()).to.deep.equal([1, 2, 5]);
    expect(deadlines.size).to.equal(0);
  });

  it('a shorter limit added later is still kept to its own precision', () => {
    withMockClock((advanceUntil) => {
      const deadlines = new Deadlines();
      let longExpired = false;
      let shortAt = 0;
      const long = deadlines.start(30_000, () => (longExpired = true));
      const started = Date.now();
      deadlines.start(40, () => (shortAt = Date.now()));
      advanceUntil(() => shortAt !== 0, 2000);
      expect(shortAt - started, 'not the 1 s period of the 30 s limit').to.be.within(40, 40 + 10);
      expect(longExpired).to.equal(false);
      expect(deadlines.settle(long)).to.equal(true);
    });
  });

  it('a limit that is not a positive number expires at the first sweep, an infinite one never', async () => {
    const deadlines = new Deadlines();
    const expired: string[] = [];
    deadlines.start(Number.NaN, () => expired.push('NaN'));
    deadlines.start(-5, () => expired.push('negative'));
    const forever = deadlines.start(Number.POSITIVE_INFINITY, () => expired.push('infinite'));
    await sleep(40);
    expect(expired.sort()).to.deep.equal(['NaN', 'negative']);
    expect(deadlines.settle(forever)).to.equal(true);
  });

  it('an expiry that settles the next operation does not expire it too', async () => {
    const deadlines = new Deadlines();
    let secondExpired = false;
    let settledByFirst: boolean | undefined;
    // eslint-disable-next-line prefer-const -- assigned after the first deadline that refers to it
    let second: ReturnType<Deadlines['start']>;
    deadlines.start(20, () => (settledByFirst = deadlines.settle(second)));
    second = deadlines.start(20, () => (secondExpired = true));
    await sleep(80);
    expect(settledByFirst).to.equal(true);
    expect(secondExpired).to.equal(false);
    expect(deadlines.size).to.equal(0);
  });
});
