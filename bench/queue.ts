/**
 * Durable queue throughput: entries enqueued (each acknowledged only after fsync) and delivered
 * end to end per second through the embedded hive, against raw fsync'd group-commit appends of the
 * same records by the same number of concurrent producers (node:fs alone), in the same run. Two raw
 * baselines: with a 1 ms group-commit interval — the one the queue issue states its target against
 * (≥ 0.5; "34,000 records/s with 64 writers, 1 ms group commit") — and, stricter, committing again
 * as soon as the last commit finished. Then the recovery time of a store holding 1,000,000 entries
 * (time from start until the queue answers its first command; target < 10 s).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, median, report } from './lib.js';
import { rawAppendRate } from './support/raw-appends.js';
import { jobMessage, queueRound, recoverySeconds, seedStore } from './support/queue-rounds.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RECOVERY = Number(process.env.BENCH_RECOVERY_ENTRIES ?? 1_000_000);

const rawAppends = (dir: string, windowMs: number): Promise<number> =>
  rawAppendRate(join(dir, `raw-${windowMs}-${Date.now()}.jsonl`), RECORDS, PRODUCERS, windowMs, (i) =>
    JSON.stringify(jobMessage(i)),
  );

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-'));
try {
  const raw1ms: number[] = [];
  const raw0: number[] = [];
  const strict: number[] = [];
  const parallel: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    raw1ms.push(await rawAppends(dir, 1));
    raw0.push(await rawAppends(dir, 0));
    strict.push(await queueRound(dir, RECORDS, PRODUCERS, 1));
    parallel.push(await queueRound(dir, RECORDS, PRODUCERS, 32));
  }
  const base = median(raw1ms);
  const eager = median(raw0);
  console.log(`records ${RECORDS}, producers ${PRODUCERS}, rounds ${ROUNDS} (median), interleaved`);
  console.log(`raw fsync'd appends, 1 ms group commit       : ${fmt(base)} records/s (the issue's baseline)`);
  console.log(`raw fsync'd appends, commit again at once    : ${fmt(eager)} records/s (stricter)`);
  console.log(
    `queue enqueue+deliver, DeliveryConcurrency 1 : ${fmt(median(strict))} entries/s  ratio ${(median(strict) / base).toFixed(2)} (${(median(strict) / eager).toFixed(2)} of the stricter)`,
  );
  console.log(
    `queue enqueue+deliver, DeliveryConcurrency 32: ${fmt(median(parallel))} entries/s  ratio ${(median(parallel) / base).toFixed(2)} (${(median(parallel) / eager).toFixed(2)} of the stricter)  (target >= 0.50)`,
  );
  const baseline = "raw fsync'd appends, 1 ms group commit (node:fs)";
  const stricter = "raw fsync'd appends, next commit at once (node:fs)";
  const figure = (c: number): string => `queue enqueue+deliver, ${PRODUCERS} producers, DeliveryConcurrency ${c}`;
  report({ figure: figure(1), hivenode: median(strict), unit: 'entries/s', baseline, baselineValue: base });
  report({
    figure: figure(32),
    hivenode: median(parallel),
    unit: 'entries/s',
    baseline,
    baselineValue: base,
    target: '≥ 0.5',
    met: median(parallel) / base >= 0.5,
  });
  report({
    figure: figure(32),
    hivenode: median(parallel),
    unit: 'entries/s',
    baseline: stricter,
    baselineValue: eager,
  });
  if (RECOVERY > 0) {
    const name = 'recover';
    await seedStore(dir, name, 0, RECOVERY, 'waiting');
    const rec = await recoverySeconds(dir, name, [['StartPaused', 'true']]);
    await rec.q.node.stop(5_000);
    console.log(
      `recovery of ${RECOVERY.toLocaleString('en')} stored entries: ${rec.seconds.toFixed(2)} s to the first answer (queuesize ${rec.size}; target < 10 s)`,
    );
    report({
      figure: `queue recovery of ${RECOVERY.toLocaleString('en')} stored entries (start to first answer, one run)`,
      hivenode: rec.seconds,
      unit: 's',
      lowerIsBetter: true,
      target: '< 10 s',
      met: rec.seconds < 10,
    });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
