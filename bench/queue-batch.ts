/**
 * Queue batches (README, The queue: Batches) measured: ENTRIES entries go from a queue into a SQLite
 * table through the SQL service, delivered with `BatchSize: 500` (one SQL_BATCH message of up to 500
 * rows each, SQL_ROWCODES answering a code per row) against single-entry delivery (BatchSize 1, one
 * plain INSERT message per entry) in the same run. The entries are enqueued while the queue is paused;
 * the figure is entries per second from `resume` until every one is delivered (in the table). Both at
 * DeliveryConcurrency 8. Target: ≥ 10×. Single-row messages are one SQLite commit each (about 40 a
 * second on a busy 2-core machine: 10,000 would take 4 minutes), so the baseline's rate is taken over
 * the first BENCH_SINGLE_MEASURED (1,000) of its 10,000 deliveries: a rate that one commit per entry
 * sets does not change with the count. One round of each.
 * bench-timeout: 900
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../node/node.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import { fmt, report } from './lib.js';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 10_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const DELIVERY = 8;
const ENQUEUERS = 32;
const TARGET = 10;
const SINGLE_MEASURED = Math.min(ENTRIES, Number(process.env.BENCH_SINGLE_MEASURED ?? 1_000));

/** One round: the entries per second from resume until `measured` are delivered, with `batchSize`. */
async function round(dir: string, batchSize: number, measured = ENTRIES): Promise<number> {
  const name = `b${batchSize}`;
  const init = join(dir, `${name}.sql`);
  writeFileSync(
    init,
    'CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL);\n',
  );
  const sql: [string, string][] = [
    ['NAME', 'rows'],
    ['SQL_DATABASE', join(dir, `${name}.sqlite`)],
    ['SQL_INITFILE', init],
    ['SQL_STATEMENT', 'INSERT'],
    ['SQL_TABLE', 'items'],
    ['SQL_COLUMNS', 'id, name, qty'],
    ['SQL_VALUEPARAMS', 'id, name, qty'],
  ];
  if (batchSize > 1) sql.push(['SQL_BATCH', 'true'], ['SQL_ROWCODES', 'true']);
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      { kind: 'sql', layers: [{ source: 'bench', values: sql }] },
      {
        kind: 'queue',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', name],
              ['PersistPath', dir],
              ['DefaultChannel', 'rows'],
              ['StartPaused', 'true'],
              ['DeliveryConcurrency', String(DELIVERY)],
              ['BatchSize', String(batchSize)],
            ],
          },
        ],
      },
    ],
  });
  try {
    const q = node.services.find((s) => s.kind === 'queue')!;
    let next = 0;
    const enqueuer = async (): Promise<void> => {
      while (next < ENTRIES) {
        const i = next++;
        const r = await node.hive.call(
          q.channel,
          makeMessage({
            Class: 'sql',
            Operation: 'insert',
            Data: mapOf({ id: [`item-${i}`], name: [`item ${i}`], qty: [String(i % 1000)] }),
          }),
          30_000,
        );
        if (r.Code !== 200) throw new Error(`enqueue failed: ${r.Code} ${r.Message}`);
      }
    };
    await Promise.all(Array.from({ length: ENQUEUERS }, enqueuer));
    const started = performance.now();
    const resumed = await node.hive.call(
      q.channel,
      makeMessage({ Class: 'queue', Operation: 'action', Control: mapOf({ command: ['resume'] }) }),
      30_000,
    );
    if (resumed.Code !== 200) throw new Error(`resume failed: ${resumed.Code} ${resumed.Message}`);
    const status = (): Record<string, unknown> => q.running.status();
    const end = Date.now() + 600_000;
    while ((status().delivered as number) < measured && Date.now() < end) {
      if ((status().died as number) > 0) throw new Error(`an entry died: ${JSON.stringify(status())}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const seconds = (performance.now() - started) / 1000;
    const delivered = status().delivered as number;
    if (delivered < measured) throw new Error(`only ${delivered} of ${measured} delivered in 600 s`);
    console.log(
      `BatchSize ${batchSize}: ${fmt(delivered)} of ${fmt(ENTRIES)} waiting entries into SQLite in ${seconds.toFixed(2)} s (${fmt(delivered / seconds)} entries/s; ${String(status().batches)} batch messages)`,
    );
    return delivered / seconds;
  } finally {
    await node.stop(5_000);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-batch-'));
try {
  const batched = await round(dir, BATCH);
  const single = await round(dir, 1, SINGLE_MEASURED);
  const ratio = batched / single;
  console.log(`BatchSize ${BATCH} against single-entry delivery: ${ratio.toFixed(1)}× (target ≥ ${TARGET}×)`);
  report({
    figure: `queue → SQL service → SQLite, ${fmt(ENTRIES)} entries delivered with BatchSize ${BATCH} (SQL_BATCH, SQL_ROWCODES), DeliveryConcurrency ${DELIVERY}`,
    hivenode: batched,
    unit: 'entries/s',
    baseline: 'the same entries delivered one by one (BatchSize 1, one INSERT message each)',
    baselineValue: single,
    target: `≥ ${TARGET}×`,
    met: ratio >= TARGET,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
