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
 * The servers are nats-server 2.10 (scripts/nats-server-2.10.sh, Debian trixie's package): with
 * bookworm's 2.9.10 the same run lost acknowledged entries — the stream's servers, healed, no longer
 * held entries they had acknowledged (5 cycles at full scale, 2026-11-29; RELIABILITY.md keeps that
 * run's row), which no client can mend. README (Reliability) tells users to run 2.10 or later.
 */
import { expect } from 'chai';
import { awaitHolder, awaitTakeover, otherGateways, requireNatsServer210, requireNetns, startNetnsHive, QUEUE } from './netns-hive.js';
import type { NetnsHive } from './netns-hive.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { steadyEnqueues, unservedFor } from './steady-enqueues.js';
import { streamWriters } from './stream-writers.js';
import { deliveryFigures, expectDelivered } from './delivery-figures.js';
import { sleep } from '../support/wait.js';

const CYCLES = byScale(1, 5);
const CUT_MS = byScale(15_000, 30_000);
/** After healing: the healed host's server catches up and its node stands by again. */
const SETTLE_MS = byScale(10_000, 15_000);
const EVERY_MS = 25;

describe('reliability: a host cut off from the hive (network partition)', () => {
  reliabilityTest(
    "partition: the queue holder's host cut off (link down) and healed, under steady enqueues and deliveries, on three hosts (nats-server 2.10)",
    {
      suite: 'dependencies',
      load: `3 hosts (network namespaces on a bridge), each a nats-server 2.10 (one JetStream cluster) and a node: a gateway (RequestTimeout 30s), the queue (Store jetstream, Replicas 3, DeliveryConcurrency 8) and a recording echo; an enqueue every ${EVERY_MS} ms through the reachable hosts' gateways, each with an idempotency key, sent again after a 503's Retry-After or a lost answer`,
      faults: `${CYCLES} × the holder's host cut off for ${CUT_MS / 1000} s (its link down: its node and server keep running) and healed, ${SETTLE_MS / 1000} s apart`,
    },
    byScale(420_000, 1_200_000),
    async (figures, skip) => {
      requireNetns(skip);
      const natsServer = requireNatsServer210(skip);
      const hive: NetnsHive = await startNetnsHive({ natsServer });
      let avoid = -1;
      const load = steadyEnqueues({ prefix: 'p', everyMs: EVERY_MS, via: otherGateways(hive, () => avoid) });
      try {
        const takeovers: number[] = [];
        const unserved: number[] = [];
        let fenced = 0;
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          const h = await awaitHolder(hive);
          // the load leaves the host before it is cut: an answer on its way back would be lost with the link
          avoid = h;
          await sleep(2_000);
          const before = hive.nodes.map((_, i) => hive.holdings(i));
          const outputAt = hive.nodes[h]!.output().length;
          const cutAt = Date.now();
          hive.lab.cut(hive.lab.hosts[h]!);
          await awaitTakeover(hive, h, before, CUT_MS + 60_000);
          takeovers.push(Date.now() - cutAt);
          await sleep(Math.max(0, cutAt + CUT_MS - Date.now()));
          hive.lab.heal(hive.lab.hosts[h]!);
          await sleep(SETTLE_MS);
          unserved.push(unservedFor(load.served, cutAt));
          fenced += hive.fenced(h, outputAt);
          avoid = -1;
        }
        await load.stop();
        const sorted = [...takeovers].sort((a, b) => a - b);
        figures['cuts'] = CYCLES;
        figures['takeover after the cut (ms, median)'] = sorted[Math.floor(sorted.length / 2)]!;
        figures['takeover after the cut (ms, max)'] = sorted[sorted.length - 1]!;
        figures['queue unserved after the cut (ms, max)'] = Math.max(...unserved);
        figures["the cut-off holder's writes refused by the fence"] = fenced;
        const outcome = await deliveryFigures(hive, load, figures);
        const writers = await streamWriters(hive.cluster, QUEUE);
        figures['stream records checked'] = writers.records;
        figures['records of a second writer'] = writers.breaks.length;
        figures['records after a record the servers no longer hold'] = writers.gaps.length;
        expect(writers.breaks.slice(0, 5), 'records appended after an older position than the record before them (a second writer, or the servers moved acknowledged records)').to.deep.equal([]);
        expectDelivered(load, outcome);
      } finally {
        await load.stop();
        await hive.stop();
      }
    },
  );
});
