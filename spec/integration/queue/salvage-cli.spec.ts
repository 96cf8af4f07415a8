/**
 * `hivenode queue salvage <dir>` on what is not a damaged store (README, The queue: "A damaged
 * store"): a sound store is left alone, a store a node holds is refused, a wrong directory or a missing
 * argument is one line; exit 2 for each refusal. (The salvage itself: spec/unit/queue/salvage.spec.ts,
 * and at the level of a node process, spec/reliability/damaged-store.spec.ts.)
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../../../actors/queue/sqlite-store.js';
import { silentLogger } from '../../../actors/observe/logger.js';
import { tempDir } from '../../temp.js';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';

const run = (args: string[]) =>
  spawnSync(process.execPath, [...HIVENODE_ARGS, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    timeout: 30_000,
  });

/** A refusal: exit 2, one line on stderr holding every text given, no stack trace. */
function expectRefused(r: ReturnType<typeof run>, ...texts: string[]): void {
  expect(r.status, r.stderr + r.stdout).to.equal(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).to.have.length(1);
  for (const t of texts) expect(lines[0]).to.contain(t);
}

describe('hivenode queue salvage', function () {
  this.timeout(60_000);

  it('leaves a store that passes its integrity check as it is; exit 0', async () => {
    const dir = tempDir('hn-salvage-cli-');
    const store = await SqliteStore.open(dir, silentLogger());
    await store.write([{ type: 'put', key: 'k', seq: 1, state: 'waiting', dueAt: 0, doc: '{}' }]);
    await store.close();
    const before = readFileSync(join(dir, 'queue.db'));
    const r = run(['queue', 'salvage', dir]);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('passes its integrity check: nothing to salvage, nothing changed');
    expect(readFileSync(join(dir, 'queue.db')).equals(before)).to.equal(true);
    expect(readdirSync(dir).filter((f) => f.includes('damaged'))).to.deep.equal([]);
  });

  it('refuses a store that a running queue holds, naming the holder', async () => {
    const dir = tempDir('hn-salvage-cli-');
    const store = await SqliteStore.open(dir, silentLogger());
    try {
      expectRefused(run(['queue', 'salvage', dir]), `pid ${process.pid}`);
    } finally {
      await store.close();
    }
  });

  it('a directory without a store, and a missing directory argument, are one line each', () => {
    const dir = tempDir('hn-salvage-cli-');
    expectRefused(run(['queue', 'salvage', dir]), dir, 'holds no queue store (queue.db)');
    expectRefused(run(['flow', 'salvage', dir]), 'holds no flow store');
    expectRefused(run(['queue', 'salvage']), 'hivenode queue salvage needs one argument');
    // `flow check` the same way: with no file it says what it needs, not "unexpected argument 'check'"
    expectRefused(run(['flow', 'check']), 'hivenode flow check needs one argument, the definition');
    expectRefused(run(['flow', 'check', 'a.yaml', 'b.yaml']), 'hivenode flow check needs one argument');
  });
});
