/**
 * What entries held by an open circuit breaker cost while they wait (README, The queue, Circuit
 * breakers): a queue whose target answers 503 opens its breaker (BreakerOpenFor 1h), then
 * BENCH_HELD entries (default 20,000) are added and set aside. Measured: the process CPU time
 * (process.cpuUsage, user + system) over an idle window of BENCH_WINDOW_MS with them held, against
 * the same window of the same kind of node holding none (open breaker, empty queue), rounds
 * alternated, medians. Held entries have no timer and no visit each, so the CPU per held entry per
 * second is ≈ 0 (target ≤ 0.05 µs, well inside the noise of an idle node). Also reported: what
 * setting an entry aside costs once, as the enqueue rate with the breaker open against closed
 * (a target answering 200).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../node/node.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import { fmt, median, report } from './lib.js';
import { producers } from './support/queue-rounds.js';

const HELD = Number(process.env.BENCH_HELD ?? 20_000);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_US = 0.05;

interface Round {
  /** CPU ms over the idle window. */
  cpuMs: number;
  /** Entries enqueued per second while the breaker held them (or delivered them, closed). */
  rate: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A node whose target answers `code`, its breaker opened by the first failures; `entries` added, then an idle window measured. */
async function round(dir: string, name: string, code: number, entries: number): Promise<Round> {
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      {
        kind: 'echo',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', 'target'],
              ['ReplyCode', String(code)],
            ],
          },
        ],
      },
      {
        kind: 'queue',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', name],
              ['PersistPath', dir],
              ['DefaultChannel', 'target'],
              ['DeliveryConcurrency', '32'],
              ['Breaker', 'errors>50%/10s,min=5'],
              ['BreakerOpenFor', '1h'],
              ['DefaultRequeueTime', '3600'],
            ],
          },
        ],
      },
    ],
  });
  try {
    const q = node.services.find((s) => s.kind === 'queue')!;
    const status = (): Record<string, unknown> => q.running.status();
    const add = async (i: number): Promise<void> => {
      const r = await node.hive.call(
        q.channel,
        makeMessage({ Class: 'bench', Operation: 'job', Data: mapOf({ id: [String(i)] }) }),
        30_000,
      );
      if (r.Code !== 200) throw new Error(`enqueue failed: ${r.Code} ${r.Message}`);
    };
    if (code >= 500) {
      // five failures open the breaker
      for (let i = 0; i < 5; i++) await add(-1 - i);
      const until = Date.now() + 10_000;
      while ((status().breakers as Record<string, number> | undefined)?.target !== 2) {
        if (Date.now() > until) throw new Error(`the breaker did not open: ${JSON.stringify(status())}`);
        await sleep(5);
      }
    }
    const started = performance.now();
    await producers(entries, 64, add);
    if (code >= 500) {
      while (((status().breakerHeld as Record<string, number>).target ?? 0) < entries) await sleep(5);
    } else {
      while ((status().delivered as number) < entries) await sleep(1);
    }
    const rate = entries / ((performance.now() - started) / 1000);
    // let the enqueue's garbage and writes settle before the idle window
    await sleep(500);
    const before = process.cpuUsage();
    await sleep(WINDOW_MS);
    const used = process.cpuUsage(before);
    return { cpuMs: (used.user + used.system) / 1000, rate };
  } finally {
    await node.stop(5000);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-queue-breaker-'));
try {
  const held: Round[] = [];
  const none: Round[] = [];
  const closed: Round[] = [];
  await round(join(dir, 'warm'), 'warm', 503, 1000);
  for (let r = 0; r < ROUNDS; r++) {
    none.push(await round(join(dir, `none-${r}`), `none${r}`, 503, 0));
    held.push(await round(join(dir, `held-${r}`), `held${r}`, 503, HELD));
    closed.push(await round(join(dir, `closed-${r}`), `closed${r}`, 200, HELD));
  }
  const heldCpu = median(held.map((r) => r.cpuMs));
  const noneCpu = median(none.map((r) => r.cpuMs));
  // µs of CPU per held entry per second of holding: the difference, spread over the entries and the window
  const perEntryUs = (Math.max(0, heldCpu - noneCpu) * 1000) / HELD / (WINDOW_MS / 1000);
  const openRate = median(held.map((r) => r.rate));
  const closedRate = median(closed.map((r) => r.rate));
  console.log(
    `held ${fmt(HELD)} entries behind an open breaker, idle window ${WINDOW_MS} ms, rounds ${ROUNDS} (median), alternated with a node holding none`,
  );
  console.log(
    `CPU over the window: ${heldCpu.toFixed(1)} ms holding ${fmt(HELD)}, ${noneCpu.toFixed(1)} ms holding none (rounds ${held.map((r) => r.cpuMs.toFixed(1)).join(', ')} / ${none.map((r) => r.cpuMs.toFixed(1)).join(', ')})`,
  );
  console.log(`CPU per held entry: ${perEntryUs.toFixed(4)} µs per second held (target <= ${TARGET_US})`);
  console.log(
    `enqueue with the breaker open (each entry set aside): ${fmt(openRate)} entries/s; enqueue+deliver, breaker closed: ${fmt(closedRate)} entries/s`,
  );
  report({
    figure: `CPU of a node over ${WINDOW_MS / 1000} s idle, holding ${fmt(HELD)} entries behind an open breaker`,
    hivenode: heldCpu,
    unit: 'ms',
    lowerIsBetter: true,
    baseline: 'the same node holding none (same open breaker)',
    baselineValue: noneCpu,
  });
  report({
    figure: 'CPU per entry held by an open breaker, per second held',
    hivenode: perEntryUs,
    unit: 'µs',
    lowerIsBetter: true,
    target: `≤ ${TARGET_US} µs (≈ 0)`,
    met: perEntryUs <= TARGET_US,
  });
  report({
    figure: 'enqueue with the breaker open (entries set aside)',
    hivenode: openRate,
    unit: 'entries/s',
    baseline: 'enqueue+deliver with the breaker closed',
    baselineValue: closedRate,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
