/**
 * The queue store across versions and damage: stores written before entries had state and due-time
 * columns still load (their documents are read at start), and a single unreadable document is
 * skipped with a log line while every other entry is delivered. Entries are loaded unparsed and read
 * when delivered (entry-table.ts), so these paths are the ones a start no longer takes by default.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import type { QueueEntry } from '../../../actors/queue/entry.js';
import { toStored } from '../../../actors/queue/entry.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { QUEUE_STORE } from '../queue-store.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

function entry(i: number, state: QueueEntry['state'], dueAt = 0): QueueEntry {
  return {
    key: `key-${i}`,
    seq: i,
    message: makeMessage({ Class: 'old', Operation: 'op', Data: mapOf({ i: [String(i)] }) }),
    channel: 'target',
    mode: 'call',
    requeueTimerMs: 1000,
    requeueCount: 3,
    deadLetter: '',
    attempts: state === 'retrying' ? 1 : 0,
    state,
    dueAt,
    createdAt: new Date().toISOString(),
    history: [],
  };
}

/** Writes a store file directly, with the given schema and rows [seq, key, doc, state?, due time?]. */
async function writeStore(
  file: string,
  schema: string,
  rows: Array<[number, string, string, string?, number?]>,
): Promise<void> {
  const db = new sqlite3.Database(file);
  const run = (sql: string, params: unknown[] = []): Promise<void> =>
    new Promise((resolve, reject) => db.run(sql, params, (e) => (e ? reject(e) : resolve())));
  await run('PRAGMA journal_mode=WAL');
  for (const statement of schema.split(';').filter((s) => s.trim())) await run(statement);
  for (const [seq, key, doc, state, dueAt] of rows) {
    if (state === undefined) await run('INSERT INTO entries (seq, key, doc) VALUES (?, ?, ?)', [seq, key, doc]);
    else
      await run('INSERT INTO entries (seq, key, doc, state, due_at) VALUES (?, ?, ?, ?, ?)', [
        seq,
        key,
        doc,
        state,
        dueAt ?? 0,
      ]);
  }
  await new Promise<void>((resolve) => db.close(() => resolve()));
}

/**
 * The queue size once it reaches `expected` (or after 10 s): echo records a delivery before it
 * answers, so the queue may not yet have taken the outcome of a delivery the record file shows.
 */
async function sizeReaching(node: HiveNode, expected: string): Promise<string | undefined> {
  const end = Date.now() + 10_000;
  for (;;) {
    const size = (await queueCall(node, { command: ['status'] })).Data.queuesize?.[0];
    if (size === expected || Date.now() > end) return size;
    await sleep(20);
  }
}

describe('queue store formats and damaged entries', function () {
  before(function () {
    if (QUEUE_STORE === 'jetstream') this.skip(); // SQLite store only: SQLite rows written by older versions
  });
  this.timeout(30_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('a store from before the state columns loads: waiting entries are delivered in order, a retrying one keeps its wait', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'store', 'queue'), { recursive: true });
    const oldSchema =
      'CREATE TABLE entries (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, doc TEXT NOT NULL); CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)';
    const rows: Array<[number, string, string]> = [1, 2, 3].map((i) => [i, `key-${i}`, toStored(entry(i, 'waiting'))]);
    rows.push([4, 'key-4', toStored(entry(4, 'retrying', Date.now() + 3_600_000))]);
    await writeStore(join(dir, 'store', 'queue', 'queue.db'), oldSchema, rows);
    const record = join(dir, 'target.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: record },
      { service: 'queue', NAME: 'queue', PersistPath: join(dir, 'store') },
    ]));
    await until(() => recorded(record).length === 3);
    expect(recorded(record).map((r) => r.message.Data.i![0])).to.deep.equal(['1', '2', '3']);
    const retrying = await queueCall(node, { command: ['list'], state: ['retrying'] });
    expect(retrying.Data.objects).to.deep.equal(['key-4']);
    expect(await sizeReaching(node, '1')).to.equal('1');
  });

  it('an unreadable stored document is skipped with a log line; every other entry is delivered', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'store', 'queue'), { recursive: true });
    const schema =
      'CREATE TABLE entries (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, doc TEXT NOT NULL, state TEXT, due_at INTEGER); CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)';
    await writeStore(join(dir, 'store', 'queue', 'queue.db'), schema, [
      [1, 'key-1', toStored(entry(1, 'waiting')), 'waiting'],
      [2, 'key-2', '{"not": "an entry"', 'waiting'],
      [3, 'key-3', toStored(entry(3, 'waiting')), 'waiting'],
    ]);
    const record = join(dir, 'target.jsonl');
    let logs: () => string;
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: record },
      { service: 'queue', NAME: 'queue', PersistPath: join(dir, 'store') },
    ]));
    await until(() => recorded(record).length === 2);
    expect(recorded(record).map((r) => r.message.Data.i![0])).to.deep.equal(['1', '3']);
    await until(() => /queue entry key-2 in the store is unreadable/.test(logs()));
    expect(await sizeReaching(node, '0')).to.equal('0');
  });

  it('an unreadable document among the entries left in the store (PageHorizon) is skipped by list with a log line', async function () {
    if (QUEUE_STORE === 'jetstream') this.skip(); // SQLite rows written directly
    const dir = tempDir();
    mkdirSync(join(dir, 'store', 'queue'), { recursive: true });
    const later = Date.now() + 3_600_000;
    const schema =
      'CREATE TABLE entries (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, doc TEXT NOT NULL, state TEXT, due_at INTEGER); CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)';
    await writeStore(join(dir, 'store', 'queue', 'queue.db'), schema, [
      [1, 'key-1', toStored(entry(1, 'retrying', later)), 'retrying', later],
      [2, 'key-2', '{"not": "an entry"', 'retrying', later],
      [3, 'key-3', toStored(entry(3, 'waiting')), 'waiting'],
    ]);
    let logs: () => string;
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'target' },
      { service: 'queue', NAME: 'queue', PersistPath: join(dir, 'store'), StartPaused: true },
    ]));
    const listed = await queueCall(node, { command: ['list'] });
    expect(logs()).to.match(/queue loaded 3 entries, 2 of them due after/);
    expect(listed.Data.objects).to.deep.equal(['key-1', 'key-3']);
    expect(logs()).to.match(/queue entry key-2 in the store is unreadable/);
  });
});
