/**
 * Queue flow control measured (README, Priorities and fairness): the wait of a small group's entries
 * behind a flood of another group. A store is seeded with FLOOD waiting entries of tenant `big`;
 * the queue (GroupBy tenant, DeliveryConcurrency 32) starts delivering them to a target that
 * answers at once, and once it is under way SMALL entries of tenant `small` are enqueued one
 * every few ms. Each one's wait in the queue is its arrival at the target less the time its enqueue
 * was answered (durable and waiting); the figure is their p99 with Fairness weighted, against
 * Fairness fifo (today's oldest-first order, where they wait for the whole flood) in the same run.
 * Target: ≤ 1 s. The wait from the enqueue call is printed beside it: it adds the enqueue's own
 * commit, which shares the store's group commit with the flood's removals.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { QueueEntry } from '../actors/queue/entry.js';
import { putOp } from '../actors/queue/entry.js';
import { SqliteStore } from '../actors/queue/sqlite-store.js';
import { silentLogger } from '../actors/observe/logger.js';
import { HiveNode } from '../node/node.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import { fmt, report } from './lib.js';

const FLOOD = Number(process.env.BENCH_FLOOD ?? 100_000);
const SMALL = Number(process.env.BENCH_SMALL ?? 50);
const DELIVERY = Number(process.env.BENCH_DELIVERY_CONCURRENCY ?? 32);
/** How many of the flood are delivered before the small group's entries come. */
const UNDER_WAY = Math.min(2_000, Math.floor(FLOOD / 10));
const TARGET_MS = 1000;

const job = (tenant: string, i: number): ReturnType<typeof makeMessage> =>
  makeMessage({
    Class: 'bench',
    Operation: 'job',
    Data: mapOf({ tenant: [tenant], id: [`${tenant}-${i}`], payload: ['some payload of a typical job'] }),
  });

/** The flood, written straight into the store of queue `name` as waiting entries. */
async function seed(dir: string, name: string): Promise<void> {
  const store = await SqliteStore.open(join(dir, name), silentLogger());
  for (let start = 0; start < FLOOD; start += 20_000) {
    const ops = [];
    for (let i = start; i < Math.min(FLOOD, start + 20_000); i++) {
      const e: QueueEntry = {
        key: `big-${i}`,
        seq: i + 1,
        message: job('big', i),
        channel: 'target',
        mode: 'call',
        requeueTimerMs: 30_000,
        requeueCount: 3,
        deadLetter: '',
        attempts: 0,
        state: 'waiting',
        dueAt: 0,
        createdAt: new Date().toISOString(),
        history: [],
      };
      ops.push(putOp(e));
    }
    await store.write(ops);
  }
  await store.close();
}

const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(xs.length * p) - 1)]!;

/**
 * One round: the small group's waits (ms) behind the flood with `fairness`: in the queue (from the
 * enqueue's answer, when the entry is durable and waiting, to its arrival at the target), and end to
 * end (from the enqueue call, so with the enqueue's own commit, which queues behind the flood's
 * removals in the store's group commit).
 */
async function round(dir: string, fairness: 'weighted' | 'fifo'): Promise<{ queued: number[]; total: number[] }> {
  const name = `q-${fairness}`;
  await seed(dir, name);
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      {
        kind: 'queue',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', name],
              ['PersistPath', dir],
              ['DefaultChannel', 'target'],
              ['DeliveryConcurrency', String(DELIVERY)],
              ['GroupBy', 'tenant'],
              ['Fairness', fairness],
            ],
          },
        ],
      },
    ],
  });
  try {
    // the target answers at once and notes when each of the small group's entries arrived
    const arrived = new Map<string, number>();
    await node.hive.listen('target', (d) => {
      if (d.message.Data.tenant?.[0] === 'small') arrived.set(d.message.Data.id![0]!, Date.now());
      d.respond({ Code: 200, Message: 'Success', Data: mapOf({}), List: [] });
    });
    const q = node.services.find((s) => s.kind === 'queue')!;
    const delivered = (): number => q.running.status().delivered as number;
    while (delivered() < UNDER_WAY) await new Promise((r) => setTimeout(r, 5));
    const sent = new Map<string, number>();
    const answered = new Map<string, number>();
    for (let i = 0; i < SMALL; i++) {
      const id = `small-${i}`;
      sent.set(id, Date.now());
      const r = await node.hive.call(q.channel, job('small', i), 30_000);
      if (r.Code !== 200) throw new Error(`enqueue failed: ${r.Code} ${r.Message}`);
      answered.set(id, Date.now());
      await new Promise((r) => setTimeout(r, 5));
    }
    const end = Date.now() + 600_000;
    while (arrived.size < SMALL && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    if (arrived.size < SMALL) throw new Error(`only ${arrived.size} of ${SMALL} small entries were delivered`);
    return {
      queued: [...answered].map(([id, at]) => arrived.get(id)! - at),
      total: [...sent].map(([id, at]) => arrived.get(id)! - at),
    };
  } finally {
    await node.stop(2_000);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-flow-'));
try {
  const weighted = await round(dir, 'weighted');
  const fifo = await round(dir, 'fifo');
  const p99 = percentile(weighted.queued, 0.99);
  const fifoP99 = percentile(fifo.queued, 0.99);
  console.log(
    `flood ${fmt(FLOOD)} entries of one group, ${SMALL} entries of another enqueued once ${fmt(UNDER_WAY)} were delivered, DeliveryConcurrency ${DELIVERY}`,
  );
  const line = (name: string, r: { queued: number[]; total: number[] }): string =>
    `${name}: the small group's wait in the queue p50 ${fmt(percentile(r.queued, 0.5))} ms, p99 ${fmt(percentile(r.queued, 0.99))} ms; from the enqueue call p50 ${fmt(percentile(r.total, 0.5))} ms, p99 ${fmt(percentile(r.total, 0.99))} ms`;
  console.log(`${line('Fairness weighted', weighted)} (target: p99 in the queue <= ${TARGET_MS} ms)`);
  console.log(line('Fairness fifo    ', fifo));
  report({
    figure: `queue p99 wait (enqueue answered → delivered) of a small group behind a ${fmt(FLOOD)}-entry flood in another, Fairness weighted, DeliveryConcurrency ${DELIVERY}`,
    hivenode: p99,
    unit: 'ms',
    baseline: 'the same with Fairness fifo (oldest first)',
    baselineValue: fifoP99,
    target: `≤ ${TARGET_MS} ms`,
    met: p99 <= TARGET_MS,
    lowerIsBetter: true,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
