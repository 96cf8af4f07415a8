/**
 * The durable queue as its store grows: with 10^4, 10^5 and 10^6 entries already stored (a backlog of
 * entries waiting for a retry due a day later, so they stay stored while new work flows past them),
 * each round starts a node on that store and measures the recovery time (start until the queue
 * answers its first command), the process RSS once recovered, and the enqueue+deliver rate of new
 * entries (PRODUCERS producers, DeliveryConcurrency 32). The same round on an empty store alternates
 * with it as the baseline; medians of BENCH_ROUNDS rounds. The store grows in place between levels.
 * Then it grows to 10^7 entries (written by SQLite itself: seedStoreInSql) and only the recovery is
 * measured, BENCH_ROUNDS times. Targets: at 10^6, enqueue+deliver ≥ 0.9 of the empty
 * store's and RSS at most 300 MB above it; 10^7 entries recover in under 10 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, interleavedAll, median, report, rssMiB } from './lib.js';
import { enqueueAndDeliver, recoverySeconds, seedStore, seedStoreInSql } from './support/queue-rounds.js';

const LEVELS = (process.env.BENCH_SCALE_ENTRIES ?? '10000,100000,1000000').split(',').filter(Boolean).map(Number);
const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The store size whose recovery alone is measured last; 0 leaves it out. */
const RECOVERY_LEVEL = Number(process.env.BENCH_RECOVERY_ENTRIES ?? 10_000_000);
const PARAMS: Array<[string, string]> = [
  ['DeliveryConcurrency', '32'],
  ['Capacity', String(2 * Math.max(...LEVELS, RECOVERY_LEVEL) + RECORDS)],
];
/** The level the targets are stated for. */
const TARGET_LEVEL = 1_000_000;
const MIB_PER_MB = 1_000_000 / 1_048_576;

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
  const med = (rs: Round[]): Round => ({
    recovery: median(rs.map((r) => r.recovery)),
    rss: median(rs.map((r) => r.rss)),
    rate: median(rs.map((r) => r.rate)),
  });
  return { at: med(at), empty: med(empty) };
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-scale-'));
try {
  console.log(
    `new entries per round ${RECORDS}, producers ${PRODUCERS}, DeliveryConcurrency 32, rounds ${ROUNDS} (median), interleaved with the same round on an empty store`,
  );
  let stored = 0;
  for (const entries of LEVELS) {
    await seedStore(dir, 'backlog', stored, entries, 'retrying');
    stored = entries;
    const { at, empty } = await level(dir, 'backlog');
    const n = entries.toLocaleString('en');
    console.log(
      `${n.padStart(9)} stored: recovery ${at.recovery.toFixed(2)} s (empty ${empty.recovery.toFixed(2)} s), RSS ${fmt(at.rss)} MiB (empty ${fmt(empty.rss)} MiB), enqueue+deliver ${fmt(at.rate)} entries/s (empty ${fmt(empty.rate)}, ratio ${(at.rate / empty.rate).toFixed(2)})`,
    );
    const baseline = 'the same queue with an empty store';
    const targeted = entries === TARGET_LEVEL;
    report({
      figure: `queue enqueue+deliver with ${n} entries stored`,
      hivenode: at.rate,
      unit: 'entries/s',
      baseline,
      baselineValue: empty.rate,
      ...(targeted ? { target: '≥ 0.9', met: at.rate / empty.rate >= 0.9 } : {}),
    });
    // no ratio for recovery: an empty store's start (milliseconds) is no baseline for loading a backlog
    report({
      figure: `queue recovery of ${n} stored entries (start to first answer)`,
      hivenode: at.recovery,
      unit: 's',
      lowerIsBetter: true,
      ...(targeted ? { target: '< 10 s', met: at.recovery < 10 } : {}),
    });
    const above = at.rss - empty.rss;
    report({
      figure: `process RSS with ${n} entries stored (queue recovered, bench in the same process)`,
      hivenode: at.rss,
      unit: 'MiB',
      lowerIsBetter: true,
      baseline,
      baselineValue: empty.rss,
      ...(targeted ? { target: '≤ 300 MB (286 MiB) above the empty store', met: above <= 300 * MIB_PER_MB } : {}),
    });
  }
  if (RECOVERY_LEVEL > stored) {
    const started = performance.now();
    await seedStoreInSql(dir, 'backlog', stored, RECOVERY_LEVEL);
    const n = RECOVERY_LEVEL.toLocaleString('en');
    const seeded = (performance.now() - started) / 1000;
    const recoveries: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const rec = await recoverySeconds(dir, 'backlog', PARAMS);
      rss.push(rssMiB());
      if (rec.size !== String(RECOVERY_LEVEL))
        throw new Error(`the queue recovered ${rec.size} entries, not ${RECOVERY_LEVEL}`);
      await rec.q.node.stop(5_000);
      recoveries.push(rec.seconds);
    }
    const recovery = median(recoveries);
    console.log(
      `${n.padStart(9)} stored (seeded by SQLite in ${seeded.toFixed(0)} s): recovery ${recovery.toFixed(2)} s (rounds ${recoveries.map((r) => r.toFixed(2)).join(', ')}), RSS ${fmt(median(rss))} MiB`,
    );
    report({
      figure: `queue recovery of ${n} stored entries (start to first answer)`,
      hivenode: recovery,
      unit: 's',
      lowerIsBetter: true,
      target: '< 10 s',
      met: recovery < 10,
    });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
