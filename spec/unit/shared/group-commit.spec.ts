/**
 * Group commit (actors/shared/group-commit.ts): writes submitted while a commit is under way go in the
 * next one together, and so do the writes one turn's work submits — the first of them does not go alone.
 */
import { expect } from 'chai';
import { GroupCommit } from '../../../actors/shared/group-commit.js';

describe('GroupCommit', () => {
  it('commits the writes submitted in one turn together, and those submitted during a commit in the next one', async () => {
    const batches: number[][] = [];
    let release: (() => void) | undefined;
    const gc = new GroupCommit<number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
    });
    const first = [1, 2, 3].map((n) => gc.submit(n));
    await new Promise((r) => setImmediate(r));
    expect(batches).to.deep.equal([[1, 2, 3]]);
    const second = [4, 5].map((n) => gc.submit(n));
    release!();
    await Promise.all([...first, ...second]);
    expect(batches).to.deep.equal([
      [1, 2, 3],
      [4, 5],
    ]);
    await gc.idle();
  });

  it('answers each write only when the commit holding it ended, and rejects a failed batch', async () => {
    const gc = new GroupCommit<number>(async (items) => {
      if (items.includes(9)) throw new Error('disk full');
    });
    await gc.submit(1);
    const failed = await gc.submit(9).then(
      () => undefined,
      (e: Error) => e.message,
    );
    expect(failed).to.equal('disk full');
    await gc.submit(2);
  });
});
