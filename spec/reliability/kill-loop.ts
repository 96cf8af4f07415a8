/**
 * The steps the crash-loop specs share (crash-loop.spec.ts, crash-loop-features.spec.ts): enqueue
 * through the gateway from 32 connections, counting only what was acknowledged; then, on a queue that
 * starts paused, resume, let it deliver 150–400 ms and SIGKILL, again and again on the same store;
 * then drain, and count the deliveries against what was acknowledged.
 */
import { expect } from 'chai';
import { Pool } from 'undici';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess } from './node-process.js';
import type { Figures } from './record.js';
import { byScale } from './scale.js';
import { sleep } from '../support/wait.js';

/** What one enqueue sends and, from its answer, whether (and as what) it was acknowledged. */
export interface Enqueue {
  headers?: Record<string, string>;
  data: Record<string, string[]>;
}

/**
 * Sends `entries` enqueues (`enqueue(n)`) through `port`'s /queue/action from 32 connections; `acknowledged`
 * is told each answer with Code 200 (stored and fsynced), so an entry counts only then.
 */
export async function enqueueAll<A extends { Code: number }>(
  port: number,
  entries: number,
  enqueue: (n: number) => Enqueue,
  acknowledged: (n: number, answer: A) => void,
): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 32 });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < entries) {
          const n = next++;
          const { headers, data } = enqueue(n);
          const res = await pool.request({
            path: '/queue/action',
            method: 'POST',
            ...(headers ? { headers } : {}),
            body: JSON.stringify(data),
          });
          const answer = (await res.body.json()) as A;
          if (answer.Code === 200) acknowledged(n, answer);
        }
      }),
    );
  } finally {
    await pool.close();
  }
}

export interface KillLoop {
  /** The node file every start runs. */
  file: string;
  kills: number;
  entries: number;
  rnd: () => number;
  /** The values of the deliveries recorded so far (repeats included). */
  delivered: () => string[];
  resume: (port: number) => Promise<void>;
  /** Runs before every resume, the last one included. */
  beforeResume?: (port: number) => Promise<void>;
  /** Told every node started, so the suite's `after` stops the last even when the test fails midway. */
  started: (node: NodeProcess) => void;
}

/** Kills `node` `kills` times while it delivers; returns the node running at the end, resumed. */
export async function killWhileDelivering(node: NodeProcess, loop: KillLoop, figures: Figures): Promise<NodeProcess> {
  const killedMidway: number[] = [];
  for (let k = 0; k < loop.kills; k++) {
    await loop.beforeResume?.(node.port);
    await loop.resume(node.port);
    await sleep(150 + Math.floor(loop.rnd() * 250));
    const before = new Set(loop.delivered()).size;
    await node.kill('SIGKILL');
    if (before > 0 && before < loop.entries) killedMidway.push(before);
    node = await startNodeProcess(loop.file);
    loop.started(node);
  }
  await loop.beforeResume?.(node.port);
  await loop.resume(node.port);
  figures['kills that hit delivery midway'] = killedMidway.length;
  expect(killedMidway.length, 'kills that hit the node while it was delivering').to.be.greaterThan(0);
  return node;
}

/** Waits (bounded) until every acknowledged value was delivered at least once. */
export async function awaitDrain(delivered: () => string[], acknowledged: number, figures: Figures): Promise<void> {
  const drainBegan = Date.now();
  const deadline = drainBegan + byScale(120_000, 600_000);
  while (new Set(delivered()).size < acknowledged && Date.now() < deadline) await sleep(200);
  figures['drain after the last restart (s)'] = Math.round((Date.now() - drainBegan) / 100) / 10;
}

/** Counts unique and repeated deliveries; none of the acknowledged values may be missing. */
export function expectNoneMissing(delivered: string[], acknowledged: Iterable<string>, figures: Figures): void {
  const unique = new Set(delivered);
  const missing = [...acknowledged].filter((i) => !unique.has(i));
  figures['delivered (unique)'] = unique.size;
  figures['duplicate deliveries'] = delivered.length - unique.size;
  figures['missing'] = missing.length;
  expect(missing).to.deep.equal([]);
}
