/**
 * What the queue's per-entry features cost: enqueue+deliver throughput of the plain durable queue
 * against the same with an `idempotency-key` control on every enqueue (DedupWindow, dedup.ts) and
 * with group limits on (GroupBy a Data field of 16 values, GroupConcurrency 4: groups.ts), in the
 * same run, medians of interleaved rounds, each round on a fresh node and store. Target: each
 * ≥ 0.8 of the plain queue.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '../protocol/message.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import { fmt, interleavedSamples, median, pairedRatio, report } from './lib.js';
import { enqueueAndDeliver, jobMessage, startQueueNode } from './support/queue-rounds.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DELIVERY = Number(process.env.BENCH_DELIVERY_CONCURRENCY ?? 32);
const GROUPS = Number(process.env.BENCH_GROUPS ?? 16);
const GROUP_CONCURRENCY = Number(process.env.BENCH_GROUP_CONCURRENCY ?? 4);
const TARGET = 0.8;

/** Rounds so far: each round's node has a store of its own, and its keys are its own too. */
let round = 0;
/** A job with its own idempotency key (every enqueue is new: the cost of the check and the stored key). */
const keyedMessage = (i: number): Message => {
  const m = jobMessage(i);
  return makeMessage({ ...m, Control: mapOf({ 'idempotency-key': [`job-${round}-${i}`] }) });
};
/** A job of one of GROUPS tenants. */
const tenantMessage = (i: number): Message => {
  const m = jobMessage(i);
  return makeMessage({ ...m, Data: mapOf({ ...m.Data, tenant: [`tenant-${i % GROUPS}`] }) });
};

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-ops-'));
/** A fresh queue node with `params`, one enqueue+deliver round of `message`, stopped again: entries per second. */
const measure = (params: Array<[string, string]>, message: (i: number) => Message) => async (): Promise<number> => {
  // the garbage of the round before (a stopped node, its entries and keys) is not this round's cost (make bench gives --expose-gc)
  globalThis.gc?.();
  const q = await startQueueNode(dir, `q${++round}`, [['DeliveryConcurrency', String(DELIVERY)], ...params]);
  const rate = await enqueueAndDeliver(q, RECORDS, PRODUCERS, message);
  await q.node.stop(5_000);
  return rate;
};
try {
  const measurements = [
    measure([], jobMessage),
    measure([], keyedMessage),
    measure(
      [
        ['GroupBy', 'tenant'],
        ['GroupConcurrency', String(GROUP_CONCURRENCY)],
      ],
      tenantMessage,
    ),
  ];
  // one uncounted round of each first: each variant's own code path is compiled there, not in its first
  // counted round (the plain path's warm-up otherwise fell on the plain queue alone and its first round)
  for (const warmUp of measurements) await warmUp();
  const samples = (await interleavedSamples(ROUNDS, measurements)) as [number[], number[], number[]];
  const [plain, dedup, groups] = samples.map(median) as [number, number, number];
  // each round's keyed and grouped runs against the plain run of that round
  const dedupRatio = pairedRatio(samples[1], samples[0]);
  const groupsRatio = pairedRatio(samples[2], samples[0]);
  const rounds = (k: number): string => samples[k]!.map((x, i) => (x / samples[0][i]!).toFixed(2)).join(', ');
  console.log(
    `records ${RECORDS}, producers ${PRODUCERS}, DeliveryConcurrency ${DELIVERY}, rounds ${ROUNDS} after one warm-up round each, interleaved; rates are medians, ratios the median of each round's ratio`,
  );
  console.log(`plain queue enqueue+deliver                          : ${fmt(plain)} entries/s`);
  console.log(
    `with idempotency-key on every enqueue                : ${fmt(dedup)} entries/s  ratio ${dedupRatio.toFixed(2)} (rounds ${rounds(1)}; target >= ${TARGET})`,
  );
  console.log(
    `with GroupBy (${GROUPS} groups), GroupConcurrency ${GROUP_CONCURRENCY}         : ${fmt(groups)} entries/s  ratio ${groupsRatio.toFixed(2)} (rounds ${rounds(2)}; target >= ${TARGET})`,
  );
  const baseline = `plain queue enqueue+deliver, ${PRODUCERS} producers, DeliveryConcurrency ${DELIVERY}`;
  const target = `≥ ${TARGET}`;
  report({
    figure: 'queue enqueue+deliver with an idempotency-key on every enqueue',
    hivenode: dedup,
    unit: 'entries/s',
    baseline,
    baselineValue: plain,
    ratio: dedupRatio,
    target,
    met: dedupRatio >= TARGET,
  });
  report({
    figure: `queue enqueue+deliver with GroupBy (${GROUPS} groups), GroupConcurrency ${GROUP_CONCURRENCY}`,
    hivenode: groups,
    unit: 'entries/s',
    baseline,
    baselineValue: plain,
    ratio: groupsRatio,
    target,
    met: groupsRatio >= TARGET,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
