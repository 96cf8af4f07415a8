/**
 * The kept entries (dead set, done) of both stores answer alike: the SQLite store's filters in SQL and
 * the memory store's in JavaScript select, group, count and purge the same entries; a keep moves an
 * entry out of the live entries in its transaction (a restart loads it no more); a store from before
 * the dead set opens; the memory store keeps at most its capacity, dropping the oldest.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import type { QueueEntry } from '../../../actors/queue/entry.js';
import { putOp } from '../../../actors/queue/entry.js';
import type { KeptRow, KeptState } from '../../../actors/queue/kept.js';
import { keepOp } from '../../../actors/queue/kept.js';
import type { QueueStore } from '../../../actors/queue/store.js';
import { MemoryStore } from '../../../actors/queue/memory-store.js';
import { SqliteStore } from '../../../actors/queue/sqlite-store.js';
import { silentLogger } from '../../../actors/observe/logger.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { tempDir } from '../../temp.js';

const T0 = Date.parse('2030-01-01T00:00:00Z');

function entry(i: number, data: Record<string, string[]>, channel = 'target'): QueueEntry {
  return {
    key: `k${i}`,
    seq: i,
    message: makeMessage({ Class: 'c', Operation: i % 2 ? 'odd' : 'even', Data: mapOf(data) }),
    channel,
    mode: 'call',
    requeueTimerMs: 0,
    requeueCount: 1,
    deadLetter: '',
    attempts: 2,
    state: 'waiting',
    dueAt: 0,
    createdAt: new Date(T0).toISOString(),
    history: [],
  };
}

/** Five entries: k1..k3 dead (two reasons), k4..k5 done; each ended a minute after the one before. */
async function fill(store: QueueStore): Promise<void> {
  const specs: Array<[number, KeptState, string, Record<string, string[]>, string]> = [
    [1, 'dead', 'no success after 2 attempt(s)', { color: ['red'], 'a.b': ['dotted'] }, 'target'],
    [2, 'dead', 'no success after 2 attempt(s)', { color: ['blue'] }, 'other'],
    [3, 'dead', "400 is not retryable; it's final", { color: ['red', 'x'] }, 'target'],
    [4, 'done', '', { color: ['red'] }, 'target'],
    [5, 'done', '', {}, 'target'],
  ];
  for (const [i, state, reason, data, channel] of specs) {
    const e = entry(i, data, channel);
    await store.write([putOp(e)]);
    if (reason) e.deadReason = reason;
    await store.write([keepOp(e, state, T0 + i * 60_000)]);
  }
}

const keysOf = async (store: QueueStore, filter: Parameters<QueueStore['kept']['read']>[0]): Promise<string[]> => {
  const keys: string[] = [];
  await store.kept.read(filter, false, (rows: KeptRow[]) => void keys.push(...rows.map((r) => r.key)));
  return keys;
};

for (const kind of ['sqlite', 'memory'] as const) {
  describe(`kept entries of the ${kind} store`, () => {
    let store: QueueStore;
    let dir: string;
    beforeEach(async () => {
      dir = tempDir('hn-kept-');
      store = kind === 'sqlite' ? await SqliteStore.open(dir, silentLogger()) : new MemoryStore();
      await fill(store);
    });
    afterEach(async () => {
      await store.close();
    });

    it('counts per state and reads by state, oldest first, with documents only when asked', async () => {
      expect(await store.kept.count()).to.deep.equal({ dead: 3, done: 2 });
      expect(await keysOf(store, { state: 'dead' })).to.deep.equal(['k1', 'k2', 'k3']);
      expect(await keysOf(store, { state: 'done' })).to.deep.equal(['k4', 'k5']);
      const rows: KeptRow[] = [];
      await store.kept.read({ state: 'dead', key: 'k3' }, true, (r) => void rows.push(...r));
      expect(rows.map((r) => [r.key, r.state, r.reason, r.channel, r.endedAt])).to.deep.equal([
        ['k3', 'dead', "400 is not retryable; it's final", 'target', T0 + 180_000],
      ]);
      expect(JSON.parse(rows[0]!.doc)).to.include({
        key: 'k3',
        state: 'dead',
        endedAt: new Date(T0 + 180_000).toISOString(),
      });
    });

    it('filters by age, reason, channel, entry attribute and the first value of a Data field (also one with a dot in its name)', async () => {
      expect(await keysOf(store, { state: 'dead', before: T0 + 120_000 })).to.deep.equal(['k1']);
      expect(await keysOf(store, { state: 'dead', since: T0 + 120_000 })).to.deep.equal(['k2', 'k3']);
      expect(
        await keysOf(store, { state: 'dead', groupBy: 'deadletter_reason', value: 'no success after 2 attempt(s)' }),
      ).to.deep.equal(['k1', 'k2']);
      expect(await keysOf(store, { state: 'dead', groupBy: 'channel', value: 'other' })).to.deep.equal(['k2']);
      expect(await keysOf(store, { state: 'dead', groupBy: 'operation', value: 'odd' })).to.deep.equal(['k1', 'k3']);
      expect(await keysOf(store, { state: 'dead', groupBy: 'color', value: 'red' })).to.deep.equal(['k1', 'k3']);
      expect(await keysOf(store, { state: 'dead', groupBy: 'a.b', value: 'dotted' })).to.deep.equal(['k1']);
      expect(await keysOf(store, { state: 'done', groupBy: 'color', value: '' })).to.deep.equal(['k5']);
    });

    it('groups by reason and by a Data field, a missing field as an empty value', async () => {
      expect(Object.fromEntries(await store.kept.group({ state: 'dead' }, 'deadletter_reason'))).to.deep.equal({
        'no success after 2 attempt(s)': 2,
        "400 is not retryable; it's final": 1,
      });
      expect(Object.fromEntries(await store.kept.group({ state: 'done' }, 'color'))).to.deep.equal({ red: 1, '': 1 });
      expect(Object.fromEntries(await store.kept.group({ state: 'dead', since: T0 + 120_000 }, 'mode'))).to.deep.equal({
        call: 2,
      });
    });

    it('gets one by key; purges by filter, oldest first within a limit, and says how many', async () => {
      expect((await store.kept.get('k4'))?.state).to.equal('done');
      expect(await store.kept.get('k9')).to.equal(undefined);
      expect(await store.kept.purge({ state: 'dead' }, 2)).to.equal(2);
      expect(await keysOf(store, { state: 'dead' })).to.deep.equal(['k3']);
      expect(await store.kept.purge({ state: 'done', before: T0 + 300_000 })).to.equal(1);
      expect(await store.kept.count()).to.deep.equal({ dead: 1, done: 1 });
      await store.write([{ type: 'unkeep', keys: ['k3', 'k5'] }]);
      expect(await store.kept.count()).to.deep.equal({ dead: 0, done: 0 });
    });
  });
}

describe('kept entries in the SQLite store file', () => {
  it('a keep takes the entry out of the live entries in the same transaction: a reopened store loads only the live ones', async () => {
    const dir = tempDir('hn-kept-');
    let store = await SqliteStore.open(dir, silentLogger());
    await fill(store);
    await store.write([putOp(entry(6, {}))]);
    await store.close();
    store = await SqliteStore.open(dir, silentLogger());
    const loaded: string[] = [];
    await store.load((rows) => void loaded.push(...rows.map((r) => r.key)));
    expect(loaded).to.deep.equal(['k6']);
    expect(await store.kept.count()).to.deep.equal({ dead: 3, done: 2 });
    await store.close();
  });

  it('a store from before the dead set (no kept table) opens and gains it', async () => {
    const dir = tempDir('hn-kept-');
    const db = new sqlite3.Database(join(dir, 'queue.db'));
    await new Promise<void>((resolve, reject) =>
      db.exec(
        'CREATE TABLE entries (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, doc TEXT NOT NULL, state TEXT, due_at INTEGER); CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);',
        (e) => (e ? reject(e) : resolve()),
      ),
    );
    await new Promise<void>((resolve) => db.close(() => resolve()));
    const store = await SqliteStore.open(dir, silentLogger());
    expect(await store.kept.count()).to.deep.equal({ dead: 0, done: 0 });
    await fill(store);
    expect(await store.kept.count()).to.deep.equal({ dead: 3, done: 2 });
    await store.close();
  });
});

describe('kept entries of the memory store: bounded', () => {
  it('keeps at most its capacity, drops the oldest first, reports each drop and logs once', async () => {
    const lines: string[] = [];
    const log = { ...silentLogger(), warn: (m: string) => void lines.push(m) } as unknown as ReturnType<
      typeof silentLogger
    >;
    const evicted: string[] = [];
    const store = new MemoryStore(3, log, (state) => evicted.push(state));
    await fill(store);
    expect(await keysOf(store, { state: 'dead' })).to.deep.equal(['k3']);
    expect(await keysOf(store, { state: 'done' })).to.deep.equal(['k4', 'k5']);
    expect(evicted).to.deep.equal(['dead', 'dead']);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/at most 3 dead and done entries in memory/);
  });
});
