/**
 * Power loss under the SQLite queue store. The store's PersistPath is on the power-cut filesystem
 * (spec/support/lazyfs.ts): writes not fsynced are dropped at each "crash". Each cycle: entries are
 * enqueued through the gateway, the node is SIGKILLed mid-load (half of them acknowledged, the rest under
 * way) and the filesystem crashed (unsynced data gone)
 * and mounted again, the node restarted on the same store. Every acknowledged entry must be in the
 * store in the end. The same filesystem is shown to catch writers that skip fsync: a plain file written
 * without fsync, and a SQLite database written with `PRAGMA synchronous=OFF` (what the store would be
 * without its fsync), both lose acknowledged data on it.
 * Scaled: 2 cycles; full (HIVENODE_CHAOS=full): 20 cycles.
 */
import { expect } from 'chai';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { tempDir } from '../integration/queue/helpers.js';
import type { LazyFs } from '../support/lazyfs.js';
import { lazyFsMissing, mountLazyFs } from '../support/lazyfs.js';
import { enqueueAll } from './kill-loop.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { requireInstalled } from '../support/installed.js';
import { sleep } from '../support/wait.js';

const CYCLES = byScale(3, 20);
const PER_CYCLE = byScale(300, 500);

function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (e) => (e ? reject(e) : resolve())));
}

/** The rows of `entries` in a SQLite file, as their text (the store keeps each entry's document in `doc`). */
function docs(file: string): Promise<string[]> {
  const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY);
  return new Promise((resolve, reject) =>
    db.all('SELECT doc FROM entries', (e, rows: { doc: string }[] | undefined) => {
      db.close();
      if (e) reject(e);
      else resolve(rows!.map((r) => r.doc));
    }),
  );
}

/** Skips where the filesystem cannot run, except in CI, where the install scripts should have put it there. */
function needLazyFs(ctx: Mocha.Context): void {
  const missing = lazyFsMissing();
  requireInstalled(missing === undefined, missing ?? '', ctx);
}

describe('reliability: power loss (writes not fsynced dropped)', function () {
  let fs: LazyFs | undefined;
  let node: NodeProcess | undefined;
  afterEach(async () => {
    await node?.kill();
    node = undefined;
    fs?.unmount();
    fs = undefined;
  });

  it('the power-cut filesystem drops a write that was not fsynced and keeps one that was', async function () {
    needLazyFs(this);
    fs = await mountLazyFs(tempDir('hn-lazyfs-'));
    const write = (name: string, sync: boolean): void => {
      const fd = openSync(join(fs!.mountpoint, name), 'w');
      writeSync(fd, `${name} data`);
      if (sync) fsyncSync(fd);
      closeSync(fd);
    };
    write('synced', true);
    write('unsynced', false);
    expect(readFileSync(join(fs.mountpoint, 'unsynced'), 'utf8')).to.equal('unsynced data');
    await fs.crash();
    expect(readFileSync(join(fs.mountpoint, 'synced'), 'utf8')).to.equal('synced data');
    // the file exists (metadata is durable at once) but its data never reached the disk
    expect(readFileSync(join(fs.mountpoint, 'unsynced'), 'utf8')).to.equal('');
  });

  it('a SQLite writer with synchronous=OFF loses committed rows on it; with synchronous=FULL it keeps them', async function () {
    needLazyFs(this);
    fs = await mountLazyFs(tempDir('hn-lazyfs-'));
    const rows = 200;
    const write = async (name: string, synchronous: 'OFF' | 'FULL'): Promise<void> => {
      const db = new sqlite3.Database(join(fs!.mountpoint, name));
      await run(db, `PRAGMA journal_mode=WAL; `);
      await run(db, `PRAGMA synchronous=${synchronous}`);
      await run(db, 'CREATE TABLE IF NOT EXISTS entries (seq INTEGER PRIMARY KEY, doc TEXT NOT NULL)');
      // every commit returned: the writer would have acknowledged each row
      for (let i = 0; i < rows; i++) await run(db, 'INSERT INTO entries (doc) VALUES (?)', [`row ${i}`]);
      // the connection stays open: the power goes while the process runs (no checkpoint on close)
    };
    await write('off.db', 'OFF');
    await write('full.db', 'FULL');
    await fs.crash();
    const survived = async (name: string): Promise<number> =>
      existsSync(join(fs!.mountpoint, name)) ? (await docs(join(fs!.mountpoint, name)).catch(() => [])).length : 0;
    expect(await survived('full.db')).to.equal(rows);
    expect(await survived('off.db')).to.be.lessThan(rows);
  });

  /**
   * Cycles of enqueues cut by SIGKILL + power cut → remount on `env`'s store: the power goes while
   * enqueues are being written (half of the cycle's entries acknowledged, the others under way). The
   * acknowledged entries and those missing from the store afterwards.
   */
  async function powerCuts(cycles: number, env: NodeJS.ProcessEnv): Promise<{ acknowledged: number; lost: string[] }> {
    const dir = tempDir('hn-powercut-');
    fs = await mountLazyFs(dir);
    const store = join(fs.mountpoint, 'store');
    const file = writeNodeFile(dir, 'node', [
      '{service: echo, NAME: target}',
      `{service: queue, NAME: q, PersistPath: "${store}", DefaultChannel: target, StartPaused: true}`,
      '{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: q}',
    ]);
    const acknowledged = new Set<string>();
    for (let cycle = 0; cycle < cycles; cycle++) {
      node = await startNodeProcess(file, { env });
      // an entry counts only once its 200 (stored and fsynced) answer came back
      let acked = 0;
      const load = enqueueAll(
        node.port,
        PER_CYCLE,
        (n) => ({ data: { i: [`${cycle}-${n}`] } }),
        (n) => {
          acknowledged.add(`${cycle}-${n}`);
          acked++;
        },
      ).catch(() => undefined); // the kill cuts the enqueues under way
      const until = Date.now() + 60_000;
      while (acked < PER_CYCLE / 2 && Date.now() < until) await sleep(2);
      await node.kill('SIGKILL');
      node = undefined;
      await load;
      await fs.crash();
      expect(acked, `entries acknowledged in cycle ${cycle} before the cut`).to.be.at.least(PER_CYCLE / 2);
    }
    // one more start after the last cut: the store opens (recovers its WAL) on what survived
    node = await startNodeProcess(file, { env });
    await node.kill('SIGTERM');
    node = undefined;
    const stored = (await docs(join(store, 'q', 'queue.db'))).join('\n');
    fs.unmount();
    fs = undefined;
    return { acknowledged: acknowledged.size, lost: [...acknowledged].filter((key) => !stored.includes(`"${key}"`)) };
  }

  reliabilityTest(
    `${CYCLES} power cuts under the SQLite queue store: every acknowledged entry is still stored; the store built without fsync loses some`,
    {
      suite: 'dependencies',
      load: `up to ${PER_CYCLE} entries enqueued through the gateway (32 connections) per cycle, queue paused (entries stay stored)`,
      faults: `${CYCLES} × (SIGKILL of the node mid-load, once half of the cycle's entries are acknowledged + power cut of the store's filesystem: writes not fsynced dropped, remount), restart on the same store; then 1 cycle on the store built with synchronous=OFF`,
    },
    byScale(90_000, 900_000),
    async (figures, skip) => {
      const missing = lazyFsMissing();
      requireInstalled(missing === undefined, missing ?? '', skip);
      const sound = await powerCuts(CYCLES, {});
      figures['power cuts'] = CYCLES;
      figures['entries acknowledged'] = sound.acknowledged;
      figures['acknowledged entries lost'] = sound.lost.length;
      expect(
        sound.lost,
        `acknowledged entries missing after the power cuts: ${sound.lost.slice(0, 10).join(', ')}`,
      ).to.deep.equal([]);
      // the deliberately broken build (test-only switch, actors/queue/sqlite-store.ts): the same cut must lose entries,
      // or this test could not catch a store that stopped fsyncing
      const broken = await powerCuts(1, { HIVENODE_TEST_BROKEN_NO_FSYNC: '1' });
      figures['entries acknowledged without fsync (broken build, 1 cut)'] = broken.acknowledged;
      figures['acknowledged entries lost without fsync (broken build, 1 cut)'] = broken.lost.length;
      expect(
        broken.lost.length,
        'the store without fsync lost nothing: the power cut does not test what it claims',
      ).to.be.greaterThan(0);
    },
  );
});
