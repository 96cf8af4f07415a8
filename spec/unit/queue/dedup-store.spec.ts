import { expect } from 'chai';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { DedupKeys, SeenKey } from '../../../actors/queue/dedup.js';
import { SqliteStore } from '../../../actors/queue/sqlite-store.js';
import { silentLogger } from '../../../actors/observe/logger.js';
import { tempDir } from '../../temp.js';

const seen = (key: string, entryKey: string, at: number): SeenKey => new SeenKey(key, entryKey, at, false);

describe('the SQLite store of idempotency keys (one dedup_log row per transaction)', () => {
  it('loads the keys of the window oldest first, from the log and from the per-key table of older stores', async () => {
    const dir = tempDir();
    let store = await SqliteStore.open(dir, silentLogger());
    await store.write([seen('a', 'e-a', 100), seen('b', 'e-b', 300)]);
    await store.write([seen('c', 'e-c', 200), seen('it\'s "quoted" \\ too', 'e-q', 400)]);
    await store.close();
    // a key written by a version that kept one row per key
    const db = new sqlite3.Database(join(dir, 'queue.db'));
    await new Promise<void>((resolve, reject) =>
      db.run("INSERT INTO dedup (key, entry, seen_at) VALUES ('old', 'e-old', 250)", (e) =>
        e ? reject(e) : resolve(),
      ),
    );
    await new Promise<void>((resolve) => db.close(() => resolve()));
    store = await SqliteStore.open(dir, silentLogger());
    try {
      expect(await store.loadSeen(0)).to.deep.equal([
        { key: 'a', entryKey: 'e-a', seenAt: 100 },
        { key: 'c', entryKey: 'e-c', seenAt: 200 },
        { key: 'old', entryKey: 'e-old', seenAt: 250 },
        { key: 'b', entryKey: 'e-b', seenAt: 300 },
        { key: 'it\'s "quoted" \\ too', entryKey: 'e-q', seenAt: 400 },
      ]);
      // the window's edge cuts inside a row: only its later keys come back
      expect((await store.loadSeen(150)).map((r) => r.key)).to.deep.equal(['c', 'old', 'b', 'it\'s "quoted" \\ too']);
    } finally {
      await store.close();
    }
  });

  it('forgets the rows whose keys are all out of the window, in the log and in the older table', async () => {
    const dir = tempDir();
    const store = await SqliteStore.open(dir, silentLogger());
    try {
      await store.write([seen('a', 'e-a', 100), seen('b', 'e-b', 150)]);
      await store.write([seen('c', 'e-c', 120), seen('d', 'e-d', 400)]);
      await store.write([{ type: 'forget-seen', before: 200 }]);
      // the first row's keys are all past; the second holds d, still in the window, and stays whole
      expect((await store.loadSeen(0)).map((r) => r.key)).to.deep.equal(['c', 'd']);
      expect((await store.loadSeen(200)).map((r) => r.key)).to.deep.equal(['d']);
    } finally {
      await store.close();
    }
  });

  it('a key seen again after its window is loaded at its later time and place', async () => {
    const dir = tempDir();
    const store = await SqliteStore.open(dir, silentLogger());
    try {
      await store.write([seen('k', 'first', 100), seen('x', 'e-x', 150)]);
      await store.write([seen('k', 'second', 500)]);
      const keys = new DedupKeys(1_000);
      keys.load(await store.loadSeen(0));
      expect(keys.lookup('k', 600)?.entryKey).to.equal('second');
      // x expires first: the sweep walks the keys in their order and stops at the first live one
      expect(keys.sweep(1_200)).to.deep.equal({ type: 'forget-seen', before: 200 });
      expect(keys.size).to.equal(1);
    } finally {
      await store.close();
    }
  });
  it('writes a transaction of more keys than a call can take as arguments (one row, loaded whole)', async () => {
    const dir = tempDir();
    let store = await SqliteStore.open(dir, silentLogger());
    const count = 250_000;
    await store.write(Array.from({ length: count }, (_, i) => seen(`k${i}`, `e${i}`, 1_000 + (i % 7))));
    await store.close();
    store = await SqliteStore.open(dir, silentLogger());
    try {
      const rows = await store.loadSeen(0);
      expect(rows).to.have.length(count);
      expect(rows[0]).to.deep.equal({ key: 'k0', entryKey: 'e0', seenAt: 1_000 });
      // the row's time is the latest of its keys: a forget before it keeps the row whole
      await store.write([{ type: 'forget-seen', before: 1_005 }]);
      expect(await store.loadSeen(0)).to.have.length(count);
    } finally {
      await store.close();
    }
  });
});
