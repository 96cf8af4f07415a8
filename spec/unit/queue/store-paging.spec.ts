import { expect } from 'chai';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import type { StoreOp } from '../../../actors/queue/store.js';
import { SqliteStore } from '../../../actors/queue/sqlite-store.js';
import { silentLogger } from '../../../actors/observe/logger.js';
import { tempDir } from '../../temp.js';

const put = (seq: number, state: string, dueAt: number): StoreOp => ({
  type: 'put',
  key: `k${seq}`,
  seq,
  state,
  dueAt,
  doc: `{"seq":${seq}}`,
});

/** seq 1..8: waiting, retrying and scheduled entries, some due by 1000, some later, one dead. */
const ROWS: StoreOp[] = [
  put(1, 'waiting', 10),
  put(2, 'retrying', 5000),
  put(3, 'scheduled', 900),
  put(4, 'waiting', 20),
  put(5, 'retrying', 800),
  put(6, 'scheduled', 7000),
  put(7, 'dead', 30),
  put(8, 'retrying', 6000),
];

async function seeded(): Promise<{ dir: string; store: SqliteStore }> {
  const dir = tempDir();
  const store = await SqliteStore.open(dir, silentLogger());
  await store.write(ROWS);
  return { dir, store };
}

const seqsLoaded = async (store: SqliteStore, parkAfter?: number): Promise<number[]> => {
  const seqs: number[] = [];
  await store.load((rows) => seqs.push(...rows.map((r) => r.seq)), parkAfter);
  return seqs;
};

describe('the SQLite store pages entries waiting for a time (backlog.ts)', () => {
  it('loads every entry without a horizon, and with one leaves out the timed ones due after it, in seq order', async () => {
    const { store } = await seeded();
    try {
      expect(await seqsLoaded(store)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await seqsLoaded(store, 1000)).to.deep.equal([1, 3, 4, 5, 7]);
      expect(await seqsLoaded(store, 0)).to.deep.equal([1, 4, 7]);
    } finally {
      await store.close();
    }
  });

  it('merges the timed entries due by the horizon into the untimed ones in seq order across the chunks of a big load', async () => {
    const dir = tempDir();
    const store = await SqliteStore.open(dir, silentLogger());
    try {
      const ops: StoreOp[] = [];
      // more than two load chunks (20,000 rows): every 7th parked, every 3rd due soon, the rest waiting
      for (let seq = 1; seq <= 45_000; seq++)
        ops.push(
          put(seq, seq % 7 === 0 ? 'retrying' : seq % 3 === 0 ? 'scheduled' : 'waiting', seq % 7 === 0 ? 5000 : 500),
        );
      await store.write(ops);
      const loaded = await seqsLoaded(store, 1000);
      expect(loaded).to.deep.equal(Array.from({ length: 45_000 }, (_, i) => i + 1).filter((seq) => seq % 7 !== 0));
    } finally {
      await store.close();
    }
  });

  it('counts the parked entries by state and reads them by due time, by key and the oldest of some states', async () => {
    const { store } = await seeded();
    try {
      const p = store.paging;
      expect((await p.countTimedAfter(1000)).sort((a, b) => a.state.localeCompare(b.state))).to.deep.equal([
        { state: 'retrying', n: 2 },
        { state: 'scheduled', n: 1 },
      ]);
      expect((await p.timedBetween(1000, 6000)).map((r) => r.seq)).to.deep.equal([2, 8]);
      expect((await p.timedBetween(1000, Number.MAX_SAFE_INTEGER)).map((r) => r.seq)).to.deep.equal([2, 6, 8]);
      // a waiting entry and one due before the horizon are not parked
      expect((await p.timedByKeys(['k1', 'k5', 'k6', 'nope'], 1000)).map((r) => r.key)).to.deep.equal(['k6']);
      expect((await p.oldestTimed(['scheduled'], 1000))?.seq).to.equal(6);
      expect((await p.oldestTimed(['retrying', 'scheduled'], 1000))?.seq).to.equal(2);
      expect(await p.oldestTimed(['retrying'], 9000)).to.equal(undefined);
      expect(await p.nextDueAfter(1000)).to.equal(5000);
      expect(await p.nextDueAfter(7000)).to.equal(undefined);
      expect(await p.lastSeq()).to.equal(8);
    } finally {
      await store.close();
    }
  });

  it('an older store without the indexes gets them, and rows without a state are loaded as untimed', async () => {
    const dir = tempDir();
    const db = new sqlite3.Database(join(dir, 'queue.db'));
    const run = (sql: string): Promise<void> =>
      new Promise((resolve, reject) => db.exec(sql, (e) => (e ? reject(e) : resolve())));
    await run(`CREATE TABLE entries (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, doc TEXT NOT NULL);
      INSERT INTO entries (seq, key, doc) VALUES (1, 'old', '{"seq":1}');`);
    await new Promise<void>((resolve) => db.close(() => resolve()));
    const store = await SqliteStore.open(dir, silentLogger());
    try {
      await store.write([put(2, 'retrying', 5000)]);
      expect(await seqsLoaded(store, 1000)).to.deep.equal([1]);
      expect(await store.paging.countTimedAfter(1000)).to.deep.equal([{ state: 'retrying', n: 1 }]);
    } finally {
      await store.close();
    }
  });
});
