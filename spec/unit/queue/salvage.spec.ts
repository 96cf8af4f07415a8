/**
 * The salvage of a damaged SQLite store (actors/queue/salvage.ts, salvage-reader.ts; README, The
 * queue: "A damaged store"): pages overwritten with noise, and every row of the other pages comes back.
 */
import { expect } from 'chai';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { EntryState } from '../../../actors/queue/entry.js';
import { salvageReport, salvageStore, salvageSummary } from '../../../actors/queue/salvage.js';
import { SqliteStore } from '../../../actors/queue/sqlite-store.js';
import type { StoreOp, StoredRow } from '../../../actors/queue/store.js';
import { silentLogger } from '../../../actors/observe/logger.js';
import { ConfigError } from '../../../protocol/errors.js';
import { tempDir } from '../../temp.js';

const PAGE = 4096;
const doc = (i: number): string =>
  JSON.stringify({ n: i, message: { Data: { text: [`entry ${i} ${'x'.repeat(300)}`] } } });
const put = (i: number, seq = i): StoreOp => ({
  type: 'put',
  key: `key-${i}`,
  seq,
  state: 'waiting',
  dueAt: 0,
  doc: doc(i),
});

/** A closed store of `n` entries (seq 1..n) plus 20 kept entries, 2 schedules, 30 idempotency keys and a meta value. */
async function storeOf(n: number, seqOf: (i: number) => number = (i) => i): Promise<string> {
  const dir = tempDir('hn-salvage-');
  const store = await SqliteStore.open(dir, silentLogger());
  const ops: StoreOp[] = [];
  for (let i = 1; i <= n; i++) ops.push(put(i, seqOf(i)));
  await store.write(ops);
  const kept: StoreOp[] = [];
  for (let i = 1; i <= 20; i++)
    kept.push({
      type: 'keep',
      key: `dead-${i}`,
      seq: 10_000 + i,
      state: EntryState.Dead,
      reason: 'refused',
      channel: 'main',
      endedAt: 1_000 + i,
      doc: doc(10_000 + i),
    });
  await store.write([
    ...kept,
    { type: 'put-schedule', name: 'nightly', doc: '{"cron":"0 3 * * *"}' },
    { type: 'put-schedule', name: 'hourly', doc: '{"cron":"0 * * * *"}' },
    { type: 'meta', name: 'paused', value: 'true' },
  ]);
  for (let i = 1; i <= 30; i++)
    await store.write([{ type: 'seen', key: `idem-${i}`, entryKey: `key-${i}`, seenAt: 5_000 + i }]);
  await store.close();
  return dir;
}

function query<T>(file: string, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(`file:${file}?immutable=1`, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI, (e) => {
      if (e) return reject(e);
      db.all(sql, (err, rows) => db.close(() => (err ? reject(err) : resolve(rows as T[]))));
    });
  });
}

/** The pages of one table (dbstat), by type. */
async function pagesOf(file: string, table: string, type: 'leaf' | 'internal'): Promise<number[]> {
  return (
    await query<{ pageno: number }>(
      file,
      `SELECT pageno FROM dbstat WHERE name = '${table}' AND pagetype = '${type}' ORDER BY pageno`,
    )
  ).map((r) => r.pageno);
}

/** Overwrites whole pages (1-based) with noise. */
function damage(file: string, pages: number[]): void {
  const fd = openSync(file, 'r+');
  try {
    for (const p of pages) writeSync(fd, Buffer.alloc(PAGE, 0xa5), 0, PAGE, (p - 1) * PAGE);
  } finally {
    closeSync(fd);
  }
}

async function loaded(
  dir: string,
): Promise<{ rows: StoredRow[]; meta: Map<string, string>; kept: number; schedules: string[]; seen: number }> {
  const store = await SqliteStore.open(dir, silentLogger());
  try {
    const rows: StoredRow[] = [];
    const meta = await store.load((r) => rows.push(...r));
    return {
      rows,
      meta,
      kept: (await store.kept.count()).dead,
      schedules: (await store.loadSchedules()).map((s) => s.name),
      seen: (await store.loadSeen(0)).length,
    };
  } finally {
    await store.close();
  }
}

describe('salvage of a damaged SQLite store', function () {
  this.timeout(30_000);

  it('recovers every row of the undamaged pages of every table into a new store, and keeps the damaged file as it was', async () => {
    const dir = await storeOf(300);
    const file = join(dir, 'queue.db');
    const leaves = await pagesOf(file, 'entries', 'leaf');
    // three leaf pages of the entries: the rows they held are the ones that cannot come back
    const hit = [leaves[3]!, leaves[Math.floor(leaves.length / 2)]!, leaves[leaves.length - 2]!];
    const onHit = (
      await query<{ n: number }>(file, `SELECT SUM(ncell) AS n FROM dbstat WHERE pageno IN (${hit.join(',')})`)
    )[0]!.n;
    damage(file, hit);
    const damagedBytes = readFileSync(file);

    const progress: string[] = [];
    const salvage = await salvageStore(dir, (line) => progress.push(line), 0);
    const entries = salvage.tables.find((t) => t.table === 'entries')!;
    expect(entries.written).to.equal(300 - onHit);
    expect(
      progress.some((l) => l.includes(`entries: ${300 - onHit} rows read so far`)),
      progress.join('\n'),
    ).to.equal(true);
    expect(entries.stretches).to.have.length(3);
    expect(entries.lost?.count, 'lost rows named by the key index').to.equal(onHit);
    for (const t of ['kept', 'schedules', 'dedup_log', 'meta'])
      expect(salvage.tables.find((x) => x.table === t)?.stretches, t).to.deep.equal([]);

    // the damaged file is kept byte for byte, under a name beside the new store
    expect(readFileSync(salvage.keptAs).equals(damagedBytes)).to.equal(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.salvage'))).to.deep.equal([]);

    const back = await loaded(dir);
    expect(back.rows).to.have.length(300 - onHit);
    const seqs = back.rows.map((r) => r.seq);
    expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
    for (const r of back.rows) expect(r.doc).to.equal(doc(r.seq));
    expect(back.meta.get('paused')).to.equal('true');
    expect(back.kept).to.equal(20);
    expect(back.schedules).to.deep.equal(['hourly', 'nightly']);
    expect(back.seen).to.equal(30);

    const report = salvageReport(salvage).join('\n');
    expect(report)
      .to.contain(`${300 - onHit} rows recovered`)
      .and.to.contain(`${onHit} rows lost`)
      .and.to.contain(salvage.keptAs);
    expect(salvageSummary(salvage)).to.contain(`entries ${300 - onHit} recovered, ${onHit} lost`);
  });

  it('forgets the idempotency keys of the lost entries (a repeat creates the entry anew) and keeps the others', async () => {
    const dir = tempDir('hn-salvage-keys-');
    const store = await SqliteStore.open(dir, silentLogger());
    // 200 entries, each enqueued with an idempotency key, 10 to a transaction (one dedup_log row each)
    for (let b = 0; b < 200; b += 10) {
      const ops: StoreOp[] = [];
      for (let i = b + 1; i <= b + 10; i++)
        ops.push(put(i), { type: 'seen', key: `idem-${i}`, entryKey: `key-${i}`, seenAt: 5_000 + i });
      await store.write(ops);
    }
    await store.close();
    const file = join(dir, 'queue.db');
    // and a key of the per-key table older stores have, for every entry
    await new Promise<void>((resolve, reject) => {
      const db = new sqlite3.Database(file, (e) => {
        if (e) return reject(e);
        const values = Array.from({ length: 200 }, (_, i) => `('old-${i + 1}', 'key-${i + 1}', ${6_000 + i})`).join(
          ',',
        );
        db.exec(`INSERT INTO dedup (key, entry, seen_at) VALUES ${values}`, (err) =>
          db.close(() => (err ? reject(err) : resolve())),
        );
      });
    });
    const leaves = await pagesOf(file, 'entries', 'leaf');
    damage(file, [leaves[4]!, leaves[10]!]);
    const salvage = await salvageStore(dir);
    const lost = salvage.tables.find((t) => t.table === 'entries')!.lost!;
    expect(lost.count).to.be.greaterThan(0);
    expect(salvage.forgottenKeys).to.deep.equal({ count: 2 * lost.count, complete: true });
    expect(salvageReport(salvage).join('\n')).to.contain(
      `idempotency keys of lost entries forgotten: ${2 * lost.count}`,
    );

    const reopened = await SqliteStore.open(dir, silentLogger());
    try {
      const rows: StoredRow[] = [];
      await reopened.load((r) => rows.push(...r));
      const present = new Set(rows.map((r) => r.key));
      const seen = await reopened.loadSeen(0);
      // every key left points to an entry that is there, and every entry that is there kept both its keys
      expect(seen.filter((k) => !present.has(k.entryKey))).to.deep.equal([]);
      expect(seen).to.have.length(2 * rows.length);
      for (const key of lost.keys) expect(present.has(key)).to.equal(false);
    } finally {
      await reopened.close();
    }
  });

  it('steps over damage in sparse rowids with a bounded number of reads, and reads past a damaged page whose rows reach far', async () => {
    // seq numbers far apart, as after years of deliveries: the damaged stretch spans about 10^12 rowids
    const dir = await storeOf(300, (i) => i * 7_000_000_000);
    const file = join(dir, 'queue.db');
    const leaves = await pagesOf(file, 'entries', 'leaf');
    const onHit = (await query<{ n: number }>(file, `SELECT ncell AS n FROM dbstat WHERE pageno = ${leaves[5]!}`))[0]!
      .n;
    damage(file, [leaves[5]!]);
    const began = Date.now();
    const salvage = await salvageStore(dir);
    expect(Date.now() - began).to.be.below(10_000);
    expect(salvage.tables.find((t) => t.table === 'entries')!.written).to.equal(300 - onHit);
  });

  it('with the root page of the entries destroyed, recovers the other tables and says the entries could not be read', async () => {
    const dir = await storeOf(300);
    const file = join(dir, 'queue.db');
    const [root] = await pagesOf(file, 'entries', 'internal');
    damage(file, [root!]);
    const salvage = await salvageStore(dir);
    const entries = salvage.tables.find((t) => t.table === 'entries')!;
    expect(entries.written).to.equal(0);
    expect(entries.stretches.at(-1)?.to).to.equal(undefined);
    expect(salvage.tables.find((t) => t.table === 'kept')!.written).to.equal(20);
    expect(salvageReport(salvage).join('\n')).to.match(
      /entries .*: 0 rows recovered; nothing of it could be read \(SQLITE_CORRUPT[^)]*\): 300 rows lost \(keys key-1, /,
    );
    expect(salvage.check).not.to.contain('\n');
    const back = await loaded(dir);
    expect([back.rows.length, back.kept, back.schedules.length]).to.deep.equal([0, 20, 2]);
  });

  it('reads the commits still in the write-ahead log beside the damaged file', async () => {
    const live = tempDir('hn-salvage-live-');
    const store = await SqliteStore.open(live, silentLogger());
    const ops: StoreOp[] = [];
    for (let i = 1; i <= 100; i++) ops.push(put(i));
    await store.write(ops);
    // a copy taken while the store is open: its last commits are in queue.db-wal only
    const dir = tempDir('hn-salvage-wal-');
    copyFileSync(join(live, 'queue.db'), join(dir, 'queue.db'));
    copyFileSync(join(live, 'queue.db-wal'), join(dir, 'queue.db-wal'));
    await store.close();
    const walBytes = readFileSync(join(dir, 'queue.db-wal'));
    const salvage = await salvageStore(dir);
    expect(salvage.tables.find((t) => t.table === 'entries')!.written).to.equal(100);
    expect(readFileSync(`${salvage.keptAs}-wal`).equals(walBytes), 'the log is kept beside the damaged file').to.equal(
      true,
    );
    expect(existsSync(join(dir, 'queue.db-wal'))).to.equal(false);
    expect((await loaded(dir)).rows).to.have.length(100);
  });

  it('a file that is no database: its schema cannot be read, the new store is empty, the file is kept', async () => {
    const dir = tempDir('hn-salvage-noise-');
    const bytes = Buffer.alloc(PAGE * 8, 0xa5);
    Buffer.from('SQLite format 3\0').copy(bytes, 0);
    writeFileSync(join(dir, 'queue.db'), bytes);
    const salvage = await salvageStore(dir);
    expect(salvage.schemaError).to.be.a('string');
    expect(salvageReport(salvage).join('\n')).to.contain('schema could not be read');
    expect(readFileSync(salvage.keptAs).equals(bytes)).to.equal(true);
    expect((await loaded(dir)).rows).to.have.length(0);
  });

  it('a directory without a store is refused with a ConfigError naming it', async () => {
    const dir = join(tempDir('hn-salvage-none-'), 'queue');
    mkdirSync(dir);
    let error: unknown;
    await salvageStore(dir).catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as Error).message)
      .to.contain(dir)
      .and.to.contain('no store');
  });

  describe('StoreRecovery at the start', () => {
    it("'refuse' stops with one line naming the salvage command and the directory; the file is left as it was", async () => {
      const dir = await storeOf(50);
      const file = join(dir, 'queue.db');
      damage(file, [(await pagesOf(file, 'entries', 'leaf'))[1]!]);
      const before = readFileSync(file);
      let error: unknown;
      await SqliteStore.open(dir, silentLogger()).catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(ConfigError);
      expect((error as Error).message)
        .to.contain(`hivenode queue salvage ${dir}`)
        .and.not.contain('\n');
      await SqliteStore.open(dir, silentLogger(), 0, { mode: 'refuse', kind: 'flow' }).catch(
        (e: unknown) => (error = e),
      );
      expect((error as Error).message).to.contain(`hivenode flow salvage ${dir}`);
      expect(readFileSync(file).equals(before)).to.equal(true);
    });

    it("'salvage' salvages, tells the service, and opens the new store", async () => {
      const dir = await storeOf(50);
      const file = join(dir, 'queue.db');
      damage(file, [(await pagesOf(file, 'entries', 'leaf'))[1]!]);
      const heard: string[] = [];
      const store = await SqliteStore.open(dir, silentLogger(), 0, {
        mode: 'salvage',
        kind: 'queue',
        onSalvaged: (_salvage, summary) => heard.push(summary),
      });
      try {
        const rows: StoredRow[] = [];
        await store.load((r) => rows.push(...r));
        expect(rows.length).to.be.within(30, 49);
        expect(heard).to.have.length(1);
        expect(heard[0]).to.contain(`entries ${rows.length} recovered`);
      } finally {
        await store.close();
      }
      expect(readdirSync(dir).filter((f) => f.startsWith('queue.db.damaged-'))).to.have.length(1);
    });
  });
});
