/**
 * The queue's memory with a large dead set: a store holding BENCH_DEAD_ENTRIES (default 10^6) dead
 * entries kept (DeadRetention), each with three attempts in its history, against the same queue on an
 * empty store, in the same run (rounds alternated, medians). Each round starts a node on the store,
 * waits for the first status answer (per-state counts included), asks for the dead entries grouped by
 * deadletter_reason, and reads the process RSS. Kept entries stay in the store, not in the queue's
 * memory, so the target is RSS ≤ 300 MiB above the empty store. Also reported: the time of that
 * grouped list over the whole dead set. The store is seeded by a child process, so the garbage of
 * seeding is not in the RSS measured; a first round on the empty store warms up and is not counted.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeMessage, mapOf } from '../protocol/message.js';
import { fmt, median, report, rssMiB } from './lib.js';
import { startQueueNode } from './support/queue-rounds.js';
import { seedDeadSet } from './support/dead-set-seed.js';

const ENTRIES = Number(process.env.BENCH_DEAD_ENTRIES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_MIB = 300;

interface Round {
  rss: number;
  groupSeconds: number;
  dead: string;
}

/** Starts a node on store `name`, answers status and the grouped list, reads the RSS, stops it. */
async function round(dir: string, name: string): Promise<Round> {
  const q = await startQueueNode(dir, name, [['StartPaused', 'true']]);
  const call = (control: Record<string, string[]>): ReturnType<typeof q.node.hive.call> =>
    q.node.hive.call(q.channel, makeMessage({ Control: mapOf(control) }), 120_000);
  const status = await call({ command: ['status'] });
  const started = performance.now();
  const grouped = await call({ command: ['list'], state: ['dead'], groupby: ['deadletter_reason'] });
  const groupSeconds = (performance.now() - started) / 1000;
  if (grouped.Code !== 200) throw new Error(`list failed: ${grouped.Code} ${grouped.Message}`);
  const rss = rssMiB();
  await q.node.stop(5_000);
  return { rss, groupSeconds, dead: status.Data.dead?.[0] ?? '?' };
}

/** Runs this file again as a child that only seeds the store. */
function seedInChild(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, [], { env: { ...process.env, HN_BENCH_SEED_DIR: dir } });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`seeding exited with ${code}`))));
  });
}

if (process.env.HN_BENCH_SEED_DIR) {
  await seedDeadSet(process.env.HN_BENCH_SEED_DIR, 'dead', ENTRIES);
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-dead-'));
try {
  const seeded = performance.now();
  await seedInChild(dir);
  const seedSeconds = (performance.now() - seeded) / 1000;
  const empty: Round[] = [];
  const full: Round[] = [];
  await round(dir, 'warm-up');
  for (let r = 0; r < ROUNDS; r++) {
    empty.push(await round(dir, `empty-${r}`));
    full.push(await round(dir, 'dead'));
  }
  const emptyRss = median(empty.map((r) => r.rss));
  const fullRss = median(full.map((r) => r.rss));
  const groupSeconds = median(full.map((r) => r.groupSeconds));
  const n = ENTRIES.toLocaleString('en');
  const above = fullRss - emptyRss;
  console.log(
    `dead entries kept ${n} (seeded in ${seedSeconds.toFixed(1)} s; status says dead ${full[0]!.dead}), rounds ${ROUNDS} (median), alternated with an empty store`,
  );
  console.log(
    `process RSS: ${fmt(fullRss)} MiB with the dead set, ${fmt(emptyRss)} MiB empty: ${fmt(above)} MiB above (target <= ${TARGET_MIB} MiB)`,
  );
  console.log(`list state=dead groupby=deadletter_reason over the dead set: ${groupSeconds.toFixed(2)} s`);
  report({
    figure: `process RSS with ${n} dead entries kept (queue loaded, status and grouped list answered)`,
    hivenode: fullRss,
    unit: 'MiB',
    lowerIsBetter: true,
    baseline: 'the same queue with an empty store',
    baselineValue: emptyRss,
    target: `≤ ${TARGET_MIB} MiB above`,
    met: above <= TARGET_MIB,
  });
  report({
    figure: `list of ${n} dead entries grouped by deadletter_reason`,
    hivenode: groupSeconds,
    unit: 's',
    lowerIsBetter: true,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
