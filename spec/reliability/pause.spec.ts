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
 * and a lease that never stops the holder (HIVENODE_TEST_BROKEN_NO_LEASE_STOP=1, actors/hive/lease.ts)
 * must show the resumed holder writing beside the new one: records in the stream appended after a
 * position that was no longer the last. With the fence off alone the resumed holder stops at its first
 * timer tick and writes only what its deliveries under way finish (2 records of a second writer in one
 * run, 272 in another): too few to be sure of seeing.
 */
import { HOLDER_LEASE_MS } from '../../actors/queue/queue-holder.js';
import type { HolderFault } from './holder-faults.js';
import { expectSound, expectTwoWriters, strikeHolders } from './holder-faults.js';
import { requireNetns } from './netns-hive.js';
import type { Figures } from './record.js';
import { reliabilityTest } from './record.js';
import { byScale, chaosOnly } from './scale.js';

const PAUSES = byScale(1, 3);
const PAUSE_MS = 2 * HOLDER_LEASE_MS;

const PAUSE: HolderFault = {
  begin: (hive, h) => hive.nodes[h]!.child.kill('SIGSTOP'),
  end: (hive, h) => hive.nodes[h]!.child.kill('SIGCONT'),
  ms: PAUSE_MS,
  /** After the resume: the resumed node found out it lost the queue and stands by. */
  settleMs: byScale(8_000, 15_000),
  words: { count: 'pauses', since: 'after the pause began', struck: 'the resumed holder' },
};

/** Freezes the holder `pauses` times under steady enqueues; the hive is left running for the checks (stop it after). */
async function pauseHolders(
  pauses: number,
  figures: Figures,
  env?: NodeJS.ProcessEnv,
): ReturnType<typeof strikeHolders> {
  figures['pause (ms)'] = PAUSE_MS;
  return strikeHolders(PAUSE, pauses, figures, { prefix: 's', env });
}

describe('reliability: a queue holder paused past its lease', () => {
  reliabilityTest(
    "pause: the queue holder's node SIGSTOPped for twice its lease and continued, under steady enqueues, on three hosts",
    {
      suite: 'dependencies',
      load: `3 hosts (network namespaces), each a nats-server (one JetStream cluster) and a node: a gateway (RequestTimeout 30s), the queue (Store jetstream, Replicas 3, DeliveryConcurrency 8) and a recording echo; an enqueue every 25 ms through the other hosts' gateways, each with an idempotency key, sent again until acknowledged`,
      faults: `${PAUSES} × the holder's node SIGSTOPped for ${PAUSE_MS / 1000} s (twice its lease) and SIGCONTed`,
    },
    byScale(240_000, 600_000),
    async (figures, skip) => {
      requireNetns(skip);
      const run = await pauseHolders(PAUSES, figures);
      await expectSound(run, figures, { fencedEachTime: true });
    },
  );
});

chaosOnly('reliability: a queue holder paused past its lease, the fence off', () => {
  reliabilityTest(
    'pause, on a build with the fence off and a lease that never stops the holder (HIVENODE_TEST_BROKEN_NO_FENCING=1, HIVENODE_TEST_BROKEN_NO_LEASE_STOP=1): the resumed holder writes beside the new one',
    {
      suite: 'dependencies',
      load: `as the row above, one pause`,
      faults: `the holder's node SIGSTOPped for ${PAUSE_MS / 1000} s and SIGCONTed, every node built with its appends unfenced and a lease that never stops its holder`,
    },
    240_000,
    async (figures, skip) => {
      requireNetns(skip);
      const run = await pauseHolders(1, figures, {
        HIVENODE_TEST_BROKEN_NO_FENCING: '1',
        HIVENODE_TEST_BROKEN_NO_LEASE_STOP: '1',
      });
      await expectTwoWriters(run, figures);
    },
  );
});
