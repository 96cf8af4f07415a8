/**
 * The pieces of the queue benches (bench/queue.ts, bench/queue-scale.ts, bench/bullmq.ts): the job
 * message, concurrent producers, a node running the durable queue in front of an echo target, an
 * enqueue+deliver round measured end to end, and a store seeded directly with stored entries.
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import sqlite3 from 'sqlite3';
import type { QueueEntry } from '../../actors/queue/entry.js';
import { putOp } from '../../actors/queue/entry.js';
import { SqliteStore } from '../../actors/queue/sqlite-store.js';
import type { Message } from '../../protocol/message.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { silentLogger } from '../../actors/observe/logger.js';
import { HiveNode } from '../../node/node.js';
import { drive } from '../lib.js';

export const jobMessage = (i: number): Message =>
  makeMessage({
    Class: 'bench',
    Operation: 'job',
    Data: mapOf({ id: [String(i)], payload: ['some payload of a typical job'] }),
  });

/** `total` calls of `each(i)`, `concurrency` producers at a time. */
export async function producers(
  total: number,
  concurrency: number,
  each: (i: number) => Promise<unknown>,
): Promise<void> {
  let i = 0;
  await drive(total, concurrency, () => each(i++));
}

export interface QueueNode {
  node: HiveNode;
  channel: string;
  delivered(): number;
  size(): number;
}

/** A node with an echo service 'target' and a queue delivering to it, its store in `dir`. */
export async function startQueueNode(dir: string, name: string, params: Array<[string, string]>): Promise<QueueNode> {
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      { kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'target']] }] },
      {
        kind: 'queue',
        layers: [
          { source: 'bench', values: [['NAME', name], ['PersistPath', dir], ['DefaultChannel', 'target'], ...params] },
        ],
      },
    ],
  });
  const q = node.services.find((s) => s.kind === 'queue')!;
  return {
    node,
    channel: q.channel,
    delivered: () => q.running.status().delivered as number,
    size: () => q.running.status().size as number,
  };
}

/** Enqueues `records` entries (`message(i)`) from `concurrency` producers; entries per second until all are delivered. */
export async function enqueueAndDeliver(
  q: QueueNode,
  records: number,
  concurrency: number,
  message: (i: number) => Message = jobMessage,
): Promise<number> {
  const before = q.delivered();
  const started = performance.now();
  await producers(records, concurrency, async (i) => {
    const r = await q.node.hive.call(q.channel, message(i), 30_000);
    if (r.Code !== 200) throw new Error(`enqueue failed: ${r.Code} ${r.Message}`);
  });
  while (q.delivered() - before < records) await new Promise((r) => setTimeout(r, 1));
  return records / ((performance.now() - started) / 1000);
}

/** A fresh queue node, one enqueue+deliver round, stopped again: entries per second. */
export async function queueRound(
  dir: string,
  records: number,
  concurrency: number,
  deliveryConcurrency: number,
): Promise<number> {
  const q = await startQueueNode(dir, `q${Date.now()}`, [['DeliveryConcurrency', String(deliveryConcurrency)]]);
  const rate = await enqueueAndDeliver(q, records, concurrency);
  await q.node.stop(5_000);
  return rate;
}

/**
 * Writes entries `from`..`to`-1 straight into the store of queue `name` (the queue is not running).
 * 'waiting' entries are delivered as soon as the queue runs; 'retrying' ones with a due time a day
 * away stay stored without being delivered — a backlog the queue carries while new work flows.
 */
export async function seedStore(
  dir: string,
  name: string,
  from: number,
  to: number,
  state: 'waiting' | 'retrying',
): Promise<void> {
  const store = await SqliteStore.open(join(dir, name), silentLogger());
  const batch = 20_000;
  const dueAt = state === 'retrying' ? Date.now() + 86_400_000 : 0;
  for (let start = from; start < to; start += batch) {
    const ops = [];
    for (let i = start; i < Math.min(to, start + batch); i++) {
      const e: QueueEntry = {
        key: `k-${i}`,
        seq: i + 1,
        message: jobMessage(i),
        channel: 'target',
        mode: 'call',
        requeueTimerMs: 30_000,
        requeueCount: 3,
        deadLetter: '',
        attempts: 0,
        state,
        dueAt,
        createdAt: new Date().toISOString(),
        history: [],
      };
      ops.push(putOp(e));
    }
    await store.write(ops);
  }
  await store.close();
}

/**
 * Like seedStore with state 'retrying', written by SQLite itself (one INSERT … SELECT over a counter
 * per 10^6 rows, the document spliced from one entry's stored form): 10^7 entries in a fraction of
 * the time the store's own writes take, for the recovery of a store that size. The store is made
 * (schema, indexes) by opening it once first.
 */
export async function seedStoreInSql(dir: string, name: string, from: number, to: number): Promise<void> {
  await (await SqliteStore.open(join(dir, name), silentLogger())).close();
  const dueAt = Date.now() + 86_400_000;
  const sample: QueueEntry = {
    key: 'k-@I@',
    seq: 7_777_777_777,
    message: jobMessage(0),
    channel: 'target',
    mode: 'call',
    requeueTimerMs: 30_000,
    requeueCount: 3,
    deadLetter: '',
    attempts: 0,
    state: 'retrying',
    dueAt,
    createdAt: new Date().toISOString(),
    history: [],
  };
  sample.message.Data.id = ['@I@'];
  const quote = (text: string): string => `'${text.replace(/'/g, "''")}'`;
  // the document as SQL: its text with the counter where the sample has @I@ and the seq where it has 7777777777
  const doc = putOp(sample)
    .doc.split('7777777777')
    .map((part) => part.split('@I@').map(quote).join(' || i || '))
    .join(' || (i + 1) || ');
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const d = new sqlite3.Database(join(dir, name, 'queue.db'), (err) => (err ? reject(err) : resolve(d)));
  });
  const exec = (sql: string): Promise<void> =>
    new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
  try {
    // no journal and no fsync while seeding (measured: about half the time of WAL mode)
    await exec('PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-512000;');
    for (let start = from; start < to; start += 1_000_000) {
      const end = Math.min(to, start + 1_000_000);
      await exec(`WITH RECURSIVE c(i) AS (SELECT ${start} UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ${end})
        INSERT INTO entries (key, seq, state, due_at, doc) SELECT 'k-' || i, i + 1, 'retrying', ${dueAt}, ${doc} FROM c;`);
    }
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
  // opening it again puts the store back in WAL mode
  await (await SqliteStore.open(join(dir, name), silentLogger())).close();
}

/** Seconds from starting a node on an existing store until the queue answers its first command. */
export async function recoverySeconds(
  dir: string,
  name: string,
  params: Array<[string, string]>,
): Promise<{ seconds: number; size: string; q: QueueNode }> {
  const started = performance.now();
  const q = await startQueueNode(dir, name, params);
  const r = await q.node.hive.call(q.channel, makeMessage({ Control: mapOf({ command: ['status'] }) }), 120_000);
  return { seconds: (performance.now() - started) / 1000, size: r.Data.queuesize?.[0] ?? '?', q };
}
