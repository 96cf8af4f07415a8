/**
 * The queue on JetStream (Store jetstream) enqueue + deliver end to end, with one replica on one
 * nats-server and with three on a three-server cluster, against bare nats.js JetStream with the same
 * replication in the same run: PRODUCERS concurrent producers publish RECORDS messages (each awaiting
 * its acknowledgement) to a file stream, and a pull consumer takes and acknowledges each. Also
 * against BullMQ on redis with appendfsync always (bench/peers), as bench/bullmq.ts runs it. The
 * hivenode side is a node on the NATS hive: an enqueue is a hive call to the queue, answered once
 * JetStream acknowledged it (Durability replicated) or once JetStream acknowledged it and the node
 * fsynced it to its journal (Durability journal, the default on nats-server 2.9); delivery is a hive
 * call to an echo service, DeliveryConcurrency 32. All alternate in each round; medians.
 */
import { PassThrough } from 'node:stream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { HiveNode } from '../node/node.js';
import { tempDir } from '../spec/temp.js';
import { natsCluster } from '../spec/adapters/nats/cluster.js';
import { natsServer, natsServerAvailable } from '../spec/adapters/nats/server.js';
import { fmt, interleavedAll, report } from './lib.js';
import { bullRound } from './support/bull-round.js';
import { loadPeers, peerVersion } from './support/peers.js';
import { jobMessage, producers } from './support/queue-rounds.js';
import { redisInstalled, startRedis } from './support/redis.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONSUMER_CONCURRENCY = 32;
const payload = new TextEncoder().encode(JSON.stringify(jobMessage(0)));

interface Hive {
  url: string;
  auth: string;
  replicas: number;
  stop(): Promise<void>;
}

let rounds = 0;

type Durability = 'journal' | 'replicated';
const DURABILITIES: readonly Durability[] = ['journal', 'replicated'];

/** One hivenode round on a fresh queue NAME (a fresh stream): entries per second from the first enqueue to the last delivery. */
async function queueRound(hive: Hive, durability: Durability): Promise<number> {
  const name = `jq${Date.now()}${rounds++}`;
  const common: Array<[string, string]> = [
    ['SERVERHOST', hive.url],
    ['SERVERAUTH', hive.auth],
  ];
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      { kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'target'], ...common] }] },
      {
        kind: 'queue',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', name],
              ['Store', 'jetstream'],
              ['Replicas', String(hive.replicas)],
              ['DefaultChannel', 'target'],
              ['DeliveryConcurrency', String(CONSUMER_CONCURRENCY)],
              ['Durability', durability],
              ['PersistPath', tempDir('hn-bench-journal-')],
              ...common,
            ],
          },
        ],
      },
    ],
  });
  const q = node.services.find((s) => s.kind === 'queue')!;
  const delivered = (): number => (q.running.status().delivered as number | undefined) ?? 0;
  const started = performance.now();
  await producers(RECORDS, PRODUCERS, async (i) => {
    const r = await node.hive.call(q.channel, jobMessage(i), 30_000);
    if (r.Code !== 200) throw new Error(`enqueue failed: ${r.Code} ${r.Message}`);
  });
  while (delivered() < RECORDS) await new Promise((r) => setTimeout(r, 1));
  const rate = RECORDS / ((performance.now() - started) / 1000);
  await node.stop(5_000);
  return rate;
}

/** One bare nats.js round: publish with acknowledgement, consume and acknowledge, on a fresh stream. */
async function bareRound(nc: NatsConnection, replicas: number): Promise<number> {
  const name = `BARE_${Date.now()}_${rounds++}`;
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name, subjects: [`bare.${name}`], storage: StorageType.File, num_replicas: replicas });
  // as many unacknowledged as the queue delivers at once (DeliveryConcurrency) and BullMQ's workers take
  await jsm.consumers.add(name, {
    durable_name: 'work',
    ack_policy: AckPolicy.Explicit,
    max_ack_pending: CONSUMER_CONCURRENCY,
  });
  const js = jetstream(nc);
  const consumer = await js.consumers.get(name, 'work');
  let consumed = 0;
  const started = performance.now();
  const messages = await consumer.consume({ max_messages: CONSUMER_CONCURRENCY });
  const done = (async () => {
    for await (const m of messages) {
      m.ack();
      if (++consumed === RECORDS) break;
    }
  })();
  await producers(RECORDS, PRODUCERS, () => js.publish(`bare.${name}`, payload));
  await done;
  const rate = RECORDS / ((performance.now() - started) / 1000);
  await jsm.streams.delete(name);
  return rate;
}

if (!natsServerAvailable()) {
  console.log('JetStream queue bench skipped: needs nats-server (apt-get install nats-server)');
  process.exit(0);
}
const peers = redisInstalled() ? await loadPeers() : undefined;
const redis = peers ? await startRedis('always') : undefined;
const single = await natsServer({ auth: { kind: 'none' } });
const cluster = await natsCluster(3);
const hives: Hive[] = [
  { url: single.url, auth: '', replicas: 1, stop: () => single.stop() },
  { url: cluster.urls, auth: cluster.token, replicas: 3, stop: () => cluster.stop() },
];
try {
  console.log(
    `records ${RECORDS}, producers ${PRODUCERS}, consumer concurrency ${CONSUMER_CONCURRENCY}, rounds ${ROUNDS} (median), interleaved`,
  );
  let bull: number | undefined;
  const ours: Array<Record<Durability, number>> = [];
  for (const hive of hives) {
    const nc = await connect({ servers: hive.url.split(','), ...(hive.auth ? { token: hive.auth } : {}) });
    // warm-up: JIT, the streams' first writes, the cluster's leaders elected
    for (const d of DURABILITIES) await queueRound(hive, d);
    await bareRound(nc, hive.replicas);
    const runs = [
      ...DURABILITIES.map((d) => () => queueRound(hive, d)),
      () => bareRound(nc, hive.replicas),
      ...(peers && redis && bull === undefined
        ? [() => bullRound(peers, redis, RECORDS, PRODUCERS, CONSUMER_CONCURRENCY)]
        : []),
    ];
    const [journal, replicated, bare, bullRate] = await interleavedAll(ROUNDS, runs);
    await nc.close();
    if (bullRate !== undefined) bull = bullRate;
    const rates: Record<Durability, number> = { journal: journal!, replicated: replicated! };
    ours.push(rates);
    const where = hive.replicas === 1 ? 'R1, one nats-server' : 'R3, three-server cluster';
    for (const d of DURABILITIES) {
      console.log(
        `hivenode queue Store jetstream, Durability ${d}, ${where}: ${fmt(rates[d])} entries/s  (hivenode/bare ${(rates[d] / bare!).toFixed(2)})`,
      );
      report({
        figure: `queue Store jetstream Durability ${d} enqueue+deliver, ${where}, ${PRODUCERS} producers, delivery concurrency ${CONSUMER_CONCURRENCY}`,
        hivenode: rates[d],
        unit: 'entries/s',
        baseline: `bare nats.js JetStream publish (acknowledged) + pull consume (acknowledged), ${where}`,
        baselineValue: bare!,
        target: '≥ 0.7',
        met: rates[d] / bare! >= 0.7,
      });
    }
    console.log(`bare nats.js JetStream publish + consume, ${where}: ${fmt(bare!)} messages/s`);
  }
  if (bull !== undefined && redis) {
    const name = `BullMQ ${peerVersion('bullmq')} on ${redis.name}`;
    console.log(`${name}: ${fmt(bull)} jobs/s`);
    for (const [i, hive] of hives.entries()) {
      const where = hive.replicas === 1 ? 'R1' : 'R3';
      for (const d of DURABILITIES) {
        console.log(`  hivenode ${where} Durability ${d}/BullMQ ${(ours[i]![d] / bull).toFixed(2)}`);
        // journal is the level that survives what appendfsync always survives (a power cut): it must keep up; replicated is shown for its cost
        report({
          figure: `queue Store jetstream Durability ${d} enqueue+deliver (${where}), ${PRODUCERS} producers, consumer concurrency ${CONSUMER_CONCURRENCY}`,
          hivenode: ours[i]![d],
          unit: 'entries/s',
          baseline: name,
          baselineValue: bull,
          peer: true,
          ...(d === 'journal' ? { target: '≥ 1', met: ours[i]![d] / bull >= 1 } : {}),
        });
      }
    }
  } else {
    console.log('BullMQ figures skipped: needs bench/peers installed and redis-server');
  }
} finally {
  for (const hive of hives) await hive.stop();
  await redis?.stop();
}
