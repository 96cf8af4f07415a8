/**
 * The partition and pause rows' one procedure (spec/reliability/partition.spec.ts, pause.spec.ts): on three
 * hosts (netns-hive.ts), under enqueues at a steady pace through the hosts the fault leaves alone, the
 * queue's holder is struck by a fault — its host cut off, its process frozen — another node takes the
 * queue over, the fault ends, and the struck node must find out it lost the queue. Afterwards the figures
 * of the run and who wrote the queue's stream (stream-writers.ts); the hive is left running for the
 * delivery checks, which the caller makes before stopping it.
 */
import { expect } from 'chai';
import { deliveryFigures, expectDelivered } from './delivery-figures.js';
import { awaitHolder, awaitTakeover, otherGateways, startNetnsHive, QUEUE } from './netns-hive.js';
import type { NetnsHive } from './netns-hive.js';
import type { Figures } from './record.js';
import { steadyEnqueues, unservedFor } from './steady-enqueues.js';
import type { SteadyEnqueues } from './steady-enqueues.js';
import { streamWriters } from './stream-writers.js';
import type { StreamWriters } from './stream-writers.js';

/** What a node logs when it stops serving the queue (actors/queue/queue-holder.ts). */
const STOPPED = 'stops serving';
/** How long the struck node may take to log that it stopped serving once the fault ended. */
const STEP_DOWN_WAIT_MS = 30_000;
const EVERY_MS = 25;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface HolderFault {
  /** Starts the fault on host h (its node holds the queue). */
  begin(hive: NetnsHive, h: number): void;
  /** Ends it. */
  end(hive: NetnsHive, h: number): void;
  /** How long the fault lasts. */
  ms: number;
  /** How long after the struck node stepped down (or gave no sign of it) the next fault may come. */
  settleMs: number;
  /** The figures' words: the faults counted ('cuts'), when the takeover is measured from ('after the cut'), the struck node ('the cut-off holder'). */
  words: { count: string; since: string; struck: string };
}

export interface HolderFaultRun {
  hive: NetnsHive;
  load: SteadyEnqueues;
  /** Writes of the struck node the stream refused (the fence), for each fault. */
  fenced: number[];
  writers: StreamWriters;
}

/**
 * Starts the hive (`natsServer`: its servers' binary; `env`: a deliberately broken build) and the load,
 * strikes the holder `faults` times, and records the figures.
 */
export async function strikeHolders(
  fault: HolderFault,
  faults: number,
  figures: Figures,
  opts: { prefix: string; natsServer?: string; env?: NodeJS.ProcessEnv },
): Promise<HolderFaultRun> {
  const hive = await startNetnsHive({ natsServer: opts.natsServer, env: opts.env });
  let avoid = -1;
  const load = steadyEnqueues({ prefix: opts.prefix, everyMs: EVERY_MS, via: otherGateways(hive, () => avoid) });
  const takeovers: number[] = [];
  const unserved: number[] = [];
  const fenced: number[] = [];
  try {
    for (let k = 0; k < faults; k++) {
      const h = await awaitHolder(hive);
      // the load leaves the host before the fault: an answer on its way back would be lost with it
      avoid = h;
      await sleep(2_000);
      const node = hive.nodes[h]!;
      const before = hive.nodes.map((_, i) => hive.holdings(i));
      const from = node.output().length;
      const began = Date.now();
      fault.begin(hive, h);
      try {
        await awaitTakeover(hive, h, before, fault.ms + 60_000);
        takeovers.push(Date.now() - began);
        await sleep(Math.max(0, began + fault.ms - Date.now()));
      } finally {
        fault.end(hive, h);
      }
      const until = Date.now() + STEP_DOWN_WAIT_MS;
      while (!node.output().slice(from).includes(STOPPED) && Date.now() < until) await sleep(50);
      await sleep(fault.settleMs);
      fenced.push(hive.fenced(h, from));
      unserved.push(unservedFor(load.served, began));
      avoid = -1;
    }
    await load.stop();
    const sorted = [...takeovers].sort((a, b) => a - b);
    const { count, since, struck } = fault.words;
    figures[count] = faults;
    figures[`takeover ${since} (ms, median)`] = sorted[Math.floor(sorted.length / 2)] ?? NaN;
    figures[`takeover ${since} (ms, max)`] = sorted[sorted.length - 1] ?? NaN;
    figures[`queue unserved ${since} (ms, max)`] = Math.max(...unserved);
    figures[`${struck}'s writes refused by the fence`] = fenced.join(', ');
    const writers = await streamWriters(hive.cluster, QUEUE);
    figures['stream records checked'] = writers.records;
    figures['records of a second writer'] = writers.breaks.length;
    figures['records after a record the servers no longer hold'] = writers.gaps.length;
    return { hive, load, fenced, writers };
  } catch (e) {
    await load.stop();
    await hive.stop();
    throw e;
  }
}

/**
 * The sound build's requirements, then the hive stopped: every acknowledged entry delivered, no 404,
 * duplicates < 1 % (delivery-figures.ts), one chain of records in the stream; with `fencedEachTime`, the
 * struck node's writes refused by the fence after every fault (a frozen holder writes on when it resumes;
 * a cut-off one stops at its lease's end and may never reach the fence).
 */
export async function expectSound(
  run: HolderFaultRun,
  figures: Figures,
  opts: { fencedEachTime: boolean },
): Promise<void> {
  try {
    const outcome = await deliveryFigures(run.hive, run.load, figures);
    expect(
      run.writers.breaks.slice(0, 5),
      'records appended after an older position than the record before them (a second writer, or the servers moved acknowledged records)',
    ).to.deep.equal([]);
    if (opts.fencedEachTime)
      expect(
        run.fenced.every((n) => n > 0),
        `the struck holder's writes were refused by the fence (${run.fenced.join(', ')})`,
      ).to.equal(true);
    expectDelivered(run.load, outcome);
  } finally {
    await run.hive.stop();
  }
}

/** A deliberately broken build's failure, then the hive stopped: nothing fenced, and records of a second writer in the stream. */
export async function expectTwoWriters(run: HolderFaultRun, figures: Figures): Promise<void> {
  try {
    await deliveryFigures(run.hive, run.load, figures, 20_000);
    expect(run.fenced, 'no write is refused without the fence').to.deep.equal(run.fenced.map(() => 0));
    expect(
      run.writers.breaks.length,
      'records of the struck holder appended after positions the new holder had written past (two writers)',
    ).to.be.above(0);
  } finally {
    await run.hive.stop();
  }
}
