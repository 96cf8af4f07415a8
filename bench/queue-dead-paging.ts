/**
 * Enqueues while a client pages a large dead set: a store holding BENCH_PAGING_DEAD (default 10^5)
 * dead entries kept; one client asks in a loop for a page of 20 dead keys (page 3, as the console's
 * dead tab does, `list_offset` 40 / `list_limit` 20, with its total), while another enqueues one
 * entry at a time (a paused queue, so deliveries do not mix in). The figure is the enqueue p50 while
 * paging against the same enqueues on the same queue with no paging (quiet), in the same run, rounds
 * alternated, medians. Paging reads the store's index off the queue actor's turn, so it must not hold
 * enqueues up: target p50 while paging ≤ 3× quiet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeMessage, mapOf } from '../protocol/message.js';
import { median, report } from './lib.js';
import { jobMessage, startQueueNode } from './support/queue-rounds.js';
import { seedDeadSet } from './support/dead-set-seed.js';

const ENTRIES = Number(process.env.BENCH_PAGING_DEAD ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ENQUEUES = Number(process.env.BENCH_PAGING_ENQUEUES ?? 300);
const TARGET_RATIO = 3;

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-paging-'));
try {
  await seedDeadSet(dir, 'dead', ENTRIES);
  const q = await startQueueNode(dir, 'dead', [['StartPaused', 'true']]);
  const call = (control: Record<string, string[]>): ReturnType<typeof q.node.hive.call> =>
    q.node.hive.call(q.channel, makeMessage({ Control: mapOf(control) }), 120_000);
  const page = await call({ command: ['list'], state: ['dead'], list_offset: ['40'], list_limit: ['20'] });
  if (page.Code !== 200 || page.Data.total?.[0] !== String(ENTRIES))
    throw new Error(`the page answered ${page.Code} ${page.Message} total ${page.Data.total?.[0]}`);
  /** `ENQUEUES` enqueues one after another: their p50 in ms. */
  const enqueues = async (): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < ENQUEUES; i++) {
      const t = performance.now();
      const r = await q.node.hive.call(q.channel, jobMessage(i), 30_000);
      times.push(performance.now() - t);
      if (r.Code !== 200) throw new Error(`enqueue failed: ${r.Code} ${r.Message}`);
    }
    return median(times);
  };
  let pages = 0;
  /** Enqueues while a client pages in a loop: their p50 in ms. */
  const whilePaging = async (): Promise<number> => {
    let paging = true;
    const pager = (async () => {
      while (paging) {
        const r = await call({ command: ['list'], state: ['dead'], list_offset: ['40'], list_limit: ['20'] });
        if (r.Code !== 200) throw new Error(`list failed: ${r.Code} ${r.Message}`);
        pages++;
      }
    })();
    try {
      return await enqueues();
    } finally {
      paging = false;
      await pager;
    }
  };
  await enqueues(); // warm-up
  const quiet: number[] = [];
  const paged: number[] = [];
  let pageMs = 0;
  for (let r = 0; r < ROUNDS; r++) {
    quiet.push(await enqueues());
    const before = pages;
    const t = performance.now();
    paged.push(await whilePaging());
    pageMs = (performance.now() - t) / Math.max(1, pages - before);
  }
  await q.node.stop(5_000);
  const quietP50 = median(quiet);
  const pagedP50 = median(paged);
  const ratio = pagedP50 / quietP50;
  const n = ENTRIES.toLocaleString('en');
  console.log(
    `dead entries kept ${n}; ${ENQUEUES} enqueues per round, rounds ${ROUNDS} (median); ${pages} pages read, about ${pageMs.toFixed(1)} ms a page in the last round`,
  );
  console.log(
    `enqueue p50: ${quietP50.toFixed(2)} ms quiet, ${pagedP50.toFixed(2)} ms while a client pages the dead set: ${ratio.toFixed(2)}× (target <= ${TARGET_RATIO}×)`,
  );
  report({
    figure: `enqueue p50 while a client pages ${n} dead entries (page 3 of 20 in a loop)`,
    hivenode: pagedP50,
    unit: 'ms',
    lowerIsBetter: true,
    baseline: 'the same enqueues with no paging',
    baselineValue: quietP50,
    target: `≤ ${TARGET_RATIO}× quiet`,
    met: ratio <= TARGET_RATIO,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
