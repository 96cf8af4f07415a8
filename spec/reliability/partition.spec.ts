/**
 * A host cut off while it keeps running (docs/ARCHITECTURE.md, The queue on JetStream): three hosts
 * (network namespaces, spec/support/netns.ts), each a nats-server of one JetStream cluster and a node
 * running a gateway, the queue on JetStream (Replicas 3) and a recording worker. Under enqueues at a
 * steady pace through the gateways of the hosts that stay reachable and deliveries to the workers, the
 * host of the queue's holder is cut off (its link down: its node and its server run on, alone) and healed,
 * cycle after cycle. Required: every acknowledged entry delivered, no 404, duplicates under 1 %, and one
 * writer at a time in the queue's stream — the cut-off holder's writes after healing are refused by the
 * fence (counted) and the stream's records form one chain (spec/reliability/stream-writers.ts).
 *
 * The same cut on a build broken twice over — appends unfenced (HIVENODE_TEST_BROKEN_NO_FENCING=1,
 * actors/hive/nats-log.ts) and a holder its lease never stops (HIVENODE_TEST_BROKEN_NO_LEASE_STOP=1,
 * actors/hive/lease.ts: not at the lease's end, not at a refused renewal) — must show the healed host's
 * node writing beside the new holder: records in the stream appended after a position that was no longer
 * the last. With the fence off alone the cut-off holder stops at its lease's end and never writes again,
 * so that build passes (measured: 0 records of a second writer): the lease and the fence are two guards,
 * and the test takes both away.
 *
 * The servers are nats-server 2.10 (scripts/nats-server-2.10.sh, Debian trixie's package): with
 * bookworm's 2.9.10 the same run lost acknowledged entries — the stream's servers, healed, no longer
 * held entries they had acknowledged (5 cycles at full scale, 2026-11-29; RELIABILITY.md keeps that
 * run's row), which no client can mend. README (Reliability) tells users to run 2.10 or later.
 */
import type { HolderFault } from './holder-faults.js';
import { expectSound, expectTwoWriters, strikeHolders } from './holder-faults.js';
import { requireNatsServer210, requireNetns } from './netns-hive.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';

const CYCLES = byScale(1, 5);
const CUT_MS = byScale(15_000, 30_000);
/** After healing: the healed host's server catches up and its node stands by again. */
const SETTLE_MS = byScale(10_000, 15_000);

const CUT: HolderFault = {
  begin: (hive, h) => hive.lab.cut(hive.lab.hosts[h]!),
  end: (hive, h) => hive.lab.heal(hive.lab.hosts[h]!),
  ms: CUT_MS,
  settleMs: SETTLE_MS,
  words: { count: 'cuts', since: 'after the cut', struck: 'the cut-off holder' },
};

describe('reliability: a host cut off from the hive (network partition)', () => {
  reliabilityTest(
    "partition: the queue holder's host cut off (link down) and healed, under steady enqueues and deliveries, on three hosts (nats-server 2.10)",
    {
      suite: 'dependencies',
      load: `3 hosts (network namespaces on a bridge), each a nats-server 2.10 (one JetStream cluster) and a node: a gateway (RequestTimeout 30s), the queue (Store jetstream, Replicas 3, DeliveryConcurrency 8) and a recording echo; an enqueue every 25 ms through the reachable hosts' gateways, each with an idempotency key, sent again after a 503's Retry-After or a lost answer`,
      faults: `${CYCLES} × the holder's host cut off for ${CUT_MS / 1000} s (its link down: its node and server keep running) and healed, ${SETTLE_MS / 1000} s apart`,
    },
    byScale(420_000, 1_200_000),
    async (figures, skip) => {
      requireNetns(skip);
      const run = await strikeHolders(CUT, CYCLES, figures, { prefix: 'p', natsServer: requireNatsServer210(skip) });
      await expectSound(run, figures, { fencedEachTime: false });
    },
  );

  reliabilityTest(
    'partition, on a build with the fence off and a lease that never stops the holder (HIVENODE_TEST_BROKEN_NO_FENCING=1, HIVENODE_TEST_BROKEN_NO_LEASE_STOP=1): the healed holder writes beside the new one',
    {
      suite: 'dependencies',
      load: 'as the row above',
      faults: `1 × the holder's host cut off for ${CUT_MS / 1000} s and healed, every node built with its appends unfenced and a lease that never stops its holder`,
    },
    byScale(300_000, 420_000),
    async (figures, skip) => {
      requireNetns(skip);
      const run = await strikeHolders(CUT, 1, figures, {
        prefix: 'p',
        natsServer: requireNatsServer210(skip),
        env: { HIVENODE_TEST_BROKEN_NO_FENCING: '1', HIVENODE_TEST_BROKEN_NO_LEASE_STOP: '1' },
      });
      await expectTwoWriters(run, figures);
    },
  );
});
