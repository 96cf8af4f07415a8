/**
 * A queue holder frozen past its lease (docs/ARCHITECTURE.md, The queue on JetStream): on three hosts
 * (spec/reliability/netns-hive.ts), the node holding the queue is stopped with SIGSTOP for twice its
 * lease — a GC pause, a stalled VM — while entries are enqueued at a steady pace through the other
 * hosts' gateways, and continued with SIGCONT. Another node takes the queue over meanwhile; the resumed
 * holder does not know yet and goes on writing: those writes must be refused by the fence (counted in
 * its log), the stream must show one writer at a time, nothing acknowledged may be lost, no 404,
 * duplicates under 1 %.
 *
 * The same run on a build with the fence off (HIVENODE_TEST_BROKEN_NO_FENCING=1, actors/hive/nats-log.ts)
 * must show the resumed holder writing beside the new one: records in the stream appended after a
 * position that was no longer the last. That row proves the check can fail; it runs in `make chaos`
 * only (about a minute): `make test` holds the fence by the row above (the resumed holder's writes
 * refused, none beside the new holder's) and spec/adapters/nats/jetstream-queue.spec.ts (a second
 * writer fences the first).
 */
import { expect } from 'chai';
import { HOLDER_LEASE_MS } from '../../actors/queue/queue-holder.js';
import { deliveryFigures, expectDelivered } from './delivery-figures.js';
import { awaitHolder, awaitTakeover, otherGateways, requireNetns, startNetnsHive, QUEUE } from './netns-hive.js';
import type { Figures } from './record.js';
import { reliabilityTest } from './record.js';
import { byScale, chaosOnly } from './scale.js';
import { steadyEnqueues, unservedFor } from './steady-enqueues.js';
import type { SteadyEnqueues } from './steady-enqueues.js';
import { streamWriters } from './stream-writers.js';
import type { StreamWriters } from './stream-writers.js';
import type { NetnsHive } from './netns-hive.js';
import { sleep } from '../support/wait.js';

const PAUSES = byScale(1, 3);
const PAUSE_MS = 2 * HOLDER_LEASE_MS;
/** After the resume: the resumed node finds out it lost the queue and stands by. */
const SETTLE_MS = byScale(8_000, 15_000);
const EVERY_MS = 25;
const STOPPED = 'stops serving';

interface Paused {
  hive: NetnsHive;
  load: SteadyEnqueues;
  /** Writes of the resumed holders the stream refused, after each resume. */
  fenced: number[];
  writers: StreamWriters;
}

/** Freezes the holder `pauses` times under steady enqueues; the hive is left running for the checks (stop it after). */
async function pauseHolders(pauses: number, figures: Figures, env?: NodeJS.ProcessEnv): Promise<Paused> {
  const hive = await startNetnsHive({ env });
  let avoid = -1;
  const load = steadyEnqueues({ prefix: 's', everyMs: EVERY_MS, via: otherGateways(hive, () => avoid) });
  const fenced: number[] = [];
  const takeovers: number[] = [];
  const unserved: number[] = [];
  try {
    for (let k = 0; k < pauses; k++) {
      const h = await awaitHolder(hive);
      avoid = h;
      await sleep(2_000);
      const node = hive.nodes[h]!;
      const before = hive.nodes.map((_, i) => hive.holdings(i));
      const pausedAt = Date.now();
      node.child.kill('SIGSTOP');
      await awaitTakeover(hive, h, before, PAUSE_MS + 30_000).then(() => takeovers.push(Date.now() - pausedAt));
      await sleep(Math.max(0, pausedAt + PAUSE_MS - Date.now()));
      const resumedAt = node.output().length;
      node.child.kill('SIGCONT');
      const until = Date.now() + 30_000;
      while (!node.output().slice(resumedAt).includes(STOPPED) && Date.now() < until) await sleep(50);
      await sleep(SETTLE_MS);
      fenced.push(hive.fenced(h, resumedAt));
      unserved.push(unservedFor(load.served, pausedAt));
      avoid = -1;
    }
  } finally {
    await load.stop();
  }
  const sorted = [...takeovers].sort((a, b) => a - b);
  figures['pauses'] = pauses;
  figures['pause (ms)'] = PAUSE_MS;
  figures['takeover after the pause began (ms, median)'] = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  figures['takeover after the pause began (ms, max)'] = sorted[sorted.length - 1] ?? NaN;
  figures['queue unserved after the pause began (ms, max)'] = Math.max(...unserved);
  figures["the resumed holder's writes refused by the fence"] = fenced.join(', ');
  const writers = await streamWriters(hive.cluster, QUEUE);
  figures['stream records checked'] = writers.records;
  figures['records of a second writer'] = writers.breaks.length;
  figures['records after a record the servers no longer hold'] = writers.gaps.length;
  return { hive, load, fenced, writers };
}

describe('reliability: a queue holder paused past its lease', () => {
  reliabilityTest(
    "pause: the queue holder's node SIGSTOPped for twice its lease and continued, under steady enqueues, on three hosts",
    {
      suite: 'dependencies',
      load: `3 hosts (network namespaces), each a nats-server (one JetStream cluster) and a node: a gateway (RequestTimeout 30s), the queue (Store jetstream, Replicas 3, DeliveryConcurrency 8) and a recording echo; an enqueue every ${EVERY_MS} ms through the other hosts' gateways, each with an idempotency key, sent again until acknowledged`,
      faults: `${PAUSES} × the holder's node SIGSTOPped for ${PAUSE_MS / 1000} s (twice its lease) and SIGCONTed`,
    },
    byScale(240_000, 600_000),
    async (figures, skip) => {
      requireNetns(skip);
      const run = await pauseHolders(PAUSES, figures);
      try {
        const outcome = await deliveryFigures(run.hive, run.load, figures);
        expect(run.writers.breaks.slice(0, 5), 'records appended after a position that was not the last (two writers)').to.deep.equal([]);
        expect(run.fenced.every((n) => n > 0), `the resumed holder's writes were refused by the fence (${run.fenced.join(', ')})`).to.equal(true);
        expectDelivered(run.load, outcome);
      } finally {
        await run.hive.stop();
      }
    },
  );
});

chaosOnly('reliability: a queue holder paused past its lease, the fence off', () => {
  reliabilityTest(
    'pause, on a build with the fence off (HIVENODE_TEST_BROKEN_NO_FENCING=1): the resumed holder writes beside the new one',
    {
      suite: 'dependencies',
      load: `as the row above, one pause`,
      faults: `the holder's node SIGSTOPped for ${PAUSE_MS / 1000} s and SIGCONTed, every node built with its appends unfenced`,
    },
    240_000,
    async (figures, skip) => {
      requireNetns(skip);
      const run = await pauseHolders(1, figures, { HIVENODE_TEST_BROKEN_NO_FENCING: '1' });
      try {
        await deliveryFigures(run.hive, run.load, figures, 20_000);
        expect(run.fenced, 'no write is refused without the fence').to.deep.equal([0]);
        expect(run.writers.breaks.length, 'records of the resumed holder appended after positions the new holder had written past (two writers)').to.be.above(0);
      } finally {
        await run.hive.stop();
      }
    },
  );
});
