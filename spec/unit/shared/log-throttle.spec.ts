import { expect } from 'chai';
import { LogThrottle } from '../../../actors/observe/log-throttle.js';

describe('LogThrottle (one log line per key and period)', () => {
  it('writes the first line of a period, counts the rest, and tells the count with the next line written', () => {
    const t = new LogThrottle(1_000);
    const written: Array<[string, number]> = [];
    const note = (key: string, now: number): void => t.note(key, (n) => written.push([key, n]), now);
    note('alice/cmd', 0);
    note('alice/cmd', 10);
    note('alice/cmd', 999);
    note('bob/cmd', 500);
    note('alice/cmd', 1_000);
    note('alice/cmd', 1_500);
    note('alice/cmd', 2_100);
    expect(written).to.deep.equal([
      ['alice/cmd', 0],
      ['bob/cmd', 0],
      ['alice/cmd', 2],
      ['alice/cmd', 1],
    ]);
  });

  it('keeps at most 10,000 keys: a client inventing keys cannot grow memory, and a dropped key writes again', () => {
    const t = new LogThrottle(60_000);
    let writes = 0;
    for (let i = 0; i < 10_001; i++) t.note(`k${i}`, () => writes++, 0);
    t.note('k0', () => writes++, 1);
    expect(writes).to.equal(10_002);
    t.note('k10000', () => writes++, 2);
    expect(writes).to.equal(10_002);
  });
});
