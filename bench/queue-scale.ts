/**
 * The durable queue as its store grows: with 10^4, 10^5 and 10^6 entries already stored (a backlog of
 * entries waiting for a retry due a day later, so they stay stored while new work flows past them),
 * each round starts a node on that store and measures the recovery time (start until the queue
 * answers its first command), the process RSS once recovered, and the enqueue+deliver rate of new
 * entries (PRODUCERS producers, DeliveryConcurrency 32). The same round on an empty store alternates
 * with it as the baseline; medians of BENCH_ROUNDS rounds. The store grows in place between levels.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, interleavedAll, median, report, rssMiB } from './lib.js';
import { enqueueAndDeliver, recoverySeconds, seedStore } from './support/queue-rounds.js';

const LEVELS = (process.env.BENCH_SCALE_ENTRIES ?? '10000,100000,1000000').split(',').filter(Boolean).map(Number);
const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PARAMS: Array<[string, string]> = [['DeliveryConcurrency', '32'], ['Capacity', String(2 * Math.max(...LEVELS, 0) + RECORDS)]];

interface Round {
  recovery: number;
  rss: number;
  rate: number;
}

/** Starts a node on store `name`, measures recovery, memory and one enqueue+deliver run, stops it. */
async function round(dir: string, name: string): Promise<Round> {
  const rec = await recoverySeconds(dir, name, PARAMS);
  const rss = rssMiB();
  const rate = await enqueueAndDeliver(rec.q, RECORDS, PRODUCERS);
  await rec.q.node.stop(5_000);
  return { recovery: rec.seconds, rss, rate };
}

/** Runs `round` on the store and on an empty one alternately; medians of each measure. */
async function level(dir: string, name: string): Promise<{ at: Round; empty: Round }> {
  const at: Round[] = [];
  const empty: Round[] = [];
  let n = 0;
  await interleavedAll(ROUNDS, [
    async () => (empty.push(await round(dir, `empty-${n++}`)), 0),
    async () => (at.push(await round(dir, name)), 0),
  ]);
  const med = (rs: Round[]): Round => ({ recovery: median(rs.map((r) => r.recovery)), rss: median(rs.map((r) => r.rss)), rate: median(rs.map((r) => r.rate)) });
  return { at: med(at), empty: med(empty) };
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-scale-'));
try {
  console.log(`new entries per round ${RECORDS}, producers ${PRODUCERS}, DeliveryConcurrency 32, rounds ${ROUNDS} (median), interleaved with the same round on an empty store`);
  let stored = 0;
  for (const entries of LEVELS) {
    await seedStore(dir, 'backlog', stored, entries, 'retrying');
    stored = entries;
    const { at, empty } = await level(dir, 'backlog');
    const n = entries.toLocaleString('en');
    console.log(`${n.padStart(9)} stored: recovery ${at.recovery.toFixed(2)} s (empty ${empty.recovery.toFixed(2)} s), RSS ${fmt(at.rss)} MiB (empty ${fmt(empty.rss)} MiB), enqueue+deliver ${fmt(at.rate)} entries/s (empty ${fmt(empty.rate)}, ratio ${(at.rate / empty.rate).toFixed(2)})`);
    const baseline = 'the same queue with an empty store';
    report({ figure: `queue enqueue+deliver with ${n} entries stored`, hivenode: at.rate, unit: 'entries/s', baseline, baselineValue: empty.rate });
    // no ratio for recovery: an empty store's start (milliseconds) is no baseline for loading a backlog
    report({ figure: `queue recovery of ${n} stored entries (start to first answer)`, hivenode: at.recovery, unit: 's', lowerIsBetter: true, ...(entries === 1_000_000 ? { target: '< 10 s', met: at.recovery < 10 } : {}) });
    report({ figure: `process RSS with ${n} entries stored (queue recovered, bench in the same process)`, hivenode: at.rss, unit: 'MiB', lowerIsBetter: true, baseline, baselineValue: empty.rss });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
