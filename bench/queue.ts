/**
 * Durable queue throughput: entries enqueued (each acknowledged only after fsync) and delivered
 * end to end per second through the embedded hive, against raw fsync'd group-commit appends of the
 * same records by the same number of concurrent producers, in the same run. Then the recovery time
 * of a store holding 1,000,000 entries (time from start until the queue answers its first command).
 * Targets: >= 0.5 of the raw append rate; recovery of 10^6 entries < 10 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordFile } from '../actors/echo/record-file.js';
import { median, report } from './lib.js';
import { jobMessage, producers, queueRound, recoverySeconds, seedStore } from './support/queue-rounds.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RECOVERY = Number(process.env.BENCH_RECOVERY_ENTRIES ?? 1_000_000);

async function rawAppends(dir: string): Promise<number> {
  const file = new RecordFile(join(dir, `raw-${Date.now()}.jsonl`));
  await file.open();
  const started = performance.now();
  await producers(RECORDS, PRODUCERS, (i) => file.append(JSON.stringify(jobMessage(i))));
  const seconds = (performance.now() - started) / 1000;
  await file.close();
  return RECORDS / seconds;
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-'));
try {
  const raw: number[] = [];
  const strict: number[] = [];
  const parallel: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    raw.push(await rawAppends(dir));
    strict.push(await queueRound(dir, RECORDS, PRODUCERS, 1));
    parallel.push(await queueRound(dir, RECORDS, PRODUCERS, 32));
  }
  const base = median(raw);
  console.log(`records ${RECORDS}, producers ${PRODUCERS}, rounds ${ROUNDS} (median), interleaved`);
  console.log(`raw fsync'd group-commit appends            : ${Math.round(base).toLocaleString('en')} records/s`);
  console.log(`queue enqueue+deliver, DeliveryConcurrency 1 : ${Math.round(median(strict)).toLocaleString('en')} entries/s  ratio ${(median(strict) / base).toFixed(2)}`);
  console.log(`queue enqueue+deliver, DeliveryConcurrency 32: ${Math.round(median(parallel)).toLocaleString('en')} entries/s  ratio ${(median(parallel) / base).toFixed(2)}  (target >= 0.50)`);
  const baseline = "raw fsync'd group-commit appends";
  const figure = (c: number): string => `queue enqueue+deliver, ${PRODUCERS} producers, DeliveryConcurrency ${c}`;
  report({ figure: figure(1), hivenode: median(strict), unit: 'entries/s', baseline, baselineValue: base });
  report({ figure: figure(32), hivenode: median(parallel), unit: 'entries/s', baseline, baselineValue: base, target: '≥ 0.5', met: median(parallel) / base >= 0.5 });
  if (RECOVERY > 0) {
    const name = 'recover';
    await seedStore(dir, name, 0, RECOVERY, 'waiting');
    const rec = await recoverySeconds(dir, name, [['StartPaused', 'true']]);
    await rec.q.node.stop(5_000);
    console.log(`recovery of ${RECOVERY.toLocaleString('en')} stored entries: ${rec.seconds.toFixed(2)} s to the first answer (queuesize ${rec.size}; target < 10 s)`);
    report({ figure: `queue recovery of ${RECOVERY.toLocaleString('en')} stored entries (start to first answer, one run)`, hivenode: rec.seconds, unit: 's', lowerIsBetter: true, target: '< 10 s', met: rec.seconds < 10 });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
