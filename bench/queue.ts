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
import { PassThrough } from 'node:stream';
import { RecordFile } from '../actors/echo/record-file.js';
import { SqliteStore } from '../actors/queue/store.js';
import type { QueueEntry } from '../actors/queue/entry.js';
import { toStored } from '../actors/queue/entry.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import { HiveNode } from '../supervisors/node.js';
import { silentLogger } from '../supervisors/logger.js';
import { drive, median } from './lib.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RECOVERY = Number(process.env.BENCH_RECOVERY_ENTRIES ?? 1_000_000);

const message = (i: number) => makeMessage({ Class: 'bench', Operation: 'job', Data: mapOf({ id: [String(i)], payload: ['some payload of a typical job'] }) });

async function producers(total: number, each: (i: number) => Promise<void>): Promise<void> {
  let i = 0;
  await drive(total, PRODUCERS, () => each(i++));
}

async function rawAppends(dir: string): Promise<number> {
  const file = new RecordFile(join(dir, `raw-${Date.now()}.jsonl`));
  await file.open();
  const started = performance.now();
  await producers(RECORDS, (i) => file.append(JSON.stringify(message(i))));
  const seconds = (performance.now() - started) / 1000;
  await file.close();
  return RECORDS / seconds;
}

async function queueRound(dir: string, concurrency: number): Promise<number> {
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      { kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'target']] }] },
      { kind: 'queue', layers: [{ source: 'bench', values: [['NAME', `q${Date.now()}`], ['PersistPath', dir], ['DefaultChannel', 'target'], ['DeliveryConcurrency', String(concurrency)]] }] },
    ],
  });
  const q = node.services.find((s) => s.kind === 'queue')!;
  const started = performance.now();
  await producers(RECORDS, async (i) => {
    const r = await node.hive.call(q.channel, message(i), 30_000);
    if (r.Code !== 200) throw new Error(`enqueue failed: ${r.Code} ${r.Message}`);
  });
  while ((q.running.status().delivered as number) < RECORDS) await new Promise((r) => setTimeout(r, 1));
  const seconds = (performance.now() - started) / 1000;
  await node.stop(5_000);
  return RECORDS / seconds;
}

async function recovery(dir: string): Promise<{ seconds: number; size: string }> {
  const name = 'recover';
  const store = await SqliteStore.open(join(dir, name), silentLogger());
  const batch = 20_000;
  for (let start = 0; start < RECOVERY; start += batch) {
    const ops = [];
    for (let i = start; i < Math.min(RECOVERY, start + batch); i++) {
      const e: QueueEntry = { key: `k-${i}`, seq: i + 1, message: message(i), channel: 'target', mode: 'call', requeueTimerMs: 30_000, requeueCount: 3, deadLetter: '', attempts: 0, state: 'waiting', dueAt: 0, createdAt: new Date().toISOString(), history: [] };
      ops.push({ type: 'put' as const, key: e.key, seq: e.seq, doc: toStored(e) });
    }
    await store.write(ops);
  }
  await store.close();
  const started = performance.now();
  const node = await HiveNode.start({ logStream: new PassThrough(), services: [{ kind: 'queue', layers: [{ source: 'bench', values: [['NAME', name], ['PersistPath', dir], ['StartPaused', 'true']] }] }] });
  const r = await node.hive.call(name, makeMessage({ Control: mapOf({ command: ['status'] }) }), 120_000);
  const seconds = (performance.now() - started) / 1000;
  await node.stop(5_000);
  return { seconds, size: r.Data.queuesize?.[0] ?? '?' };
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-'));
try {
  const raw: number[] = [];
  const strict: number[] = [];
  const parallel: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    raw.push(await rawAppends(dir));
    strict.push(await queueRound(dir, 1));
    parallel.push(await queueRound(dir, 32));
  }
  const base = median(raw);
  console.log(`records ${RECORDS}, producers ${PRODUCERS}, rounds ${ROUNDS} (median), interleaved`);
  console.log(`raw fsync'd group-commit appends            : ${Math.round(base).toLocaleString('en')} records/s`);
  console.log(`queue enqueue+deliver, DeliveryConcurrency 1 : ${Math.round(median(strict)).toLocaleString('en')} entries/s  ratio ${(median(strict) / base).toFixed(2)}`);
  console.log(`queue enqueue+deliver, DeliveryConcurrency 32: ${Math.round(median(parallel)).toLocaleString('en')} entries/s  ratio ${(median(parallel) / base).toFixed(2)}  (target >= 0.50)`);
  if (RECOVERY > 0) {
    const rec = await recovery(dir);
    console.log(`recovery of ${RECOVERY.toLocaleString('en')} stored entries: ${rec.seconds.toFixed(2)} s to the first answer (queuesize ${rec.size}; target < 10 s)`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
