/**
 * The durable queue against BullMQ (bench/peers) on a private redis-server, enqueue + deliver end to
 * end: PRODUCERS concurrent producers add RECORDS jobs (each acknowledged once stored), and a consumer
 * with concurrency 32 takes each job and answers it (BullMQ: a Worker whose processor returns the job
 * data; hivenode: the queue delivering with DeliveryConcurrency 32 to an echo service). Redis keeps an
 * append-only file fsynced on every write (appendfsync always — the queue's guarantee: acknowledged
 * means on disk) and, in a second series, once a second (everysec — the usual production setting).
 * All three alternate in each round; medians. Redis runs as its own process, the rest in this one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, interleavedAll, report } from './lib.js';
import { bullRound } from './support/bull-round.js';
import { loadPeers, peerVersion } from './support/peers.js';
import { queueRound } from './support/queue-rounds.js';
import { redisInstalled, startRedis } from './support/redis.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONSUMER_CONCURRENCY = 32;

const peers = await loadPeers();
if (!peers || !redisInstalled()) {
  console.log('BullMQ bench skipped: needs bench/peers installed and redis-server (apt-get install redis-server)');
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'hn-bench-bullmq-'));
const always = await startRedis('always');
const everysec = await startRedis('everysec');
try {
  // warm-up: JIT, redis scripts loaded, the sqlite driver opened once
  await queueRound(dir, 2_000, PRODUCERS, CONSUMER_CONCURRENCY);
  await bullRound(peers, always, RECORDS, PRODUCERS, CONSUMER_CONCURRENCY);
  const [ours, bullAlways, bullEverysec] = await interleavedAll(ROUNDS, [
    () => queueRound(dir, RECORDS, PRODUCERS, CONSUMER_CONCURRENCY),
    () => bullRound(peers, always, RECORDS, PRODUCERS, CONSUMER_CONCURRENCY),
    () => bullRound(peers, everysec, RECORDS, PRODUCERS, CONSUMER_CONCURRENCY),
  ]);
  const bull = `BullMQ ${peerVersion('bullmq')}`;
  console.log(
    `records ${RECORDS}, producers ${PRODUCERS}, consumer concurrency ${CONSUMER_CONCURRENCY}, rounds ${ROUNDS} (median), interleaved`,
  );
  console.log(`hivenode queue enqueue+deliver (fsync per group commit): ${fmt(ours!)} entries/s`);
  console.log(
    `${bull} on ${always.name}  : ${fmt(bullAlways!)} jobs/s  (hivenode/BullMQ ${(ours! / bullAlways!).toFixed(2)})`,
  );
  console.log(
    `${bull} on ${everysec.name}: ${fmt(bullEverysec!)} jobs/s  (hivenode/BullMQ ${(ours! / bullEverysec!).toFixed(2)})`,
  );
  const figure = `queue enqueue+deliver, ${PRODUCERS} producers, consumer concurrency ${CONSUMER_CONCURRENCY}`;
  report({
    figure,
    hivenode: ours!,
    unit: 'entries/s',
    baseline: `${bull} on ${always.name}`,
    baselineValue: bullAlways!,
    peer: true,
  });
  report({
    figure,
    hivenode: ours!,
    unit: 'entries/s',
    baseline: `${bull} on ${everysec.name}`,
    baselineValue: bullEverysec!,
    peer: true,
  });
} finally {
  await always.stop();
  await everysec.stop();
  rmSync(dir, { recursive: true, force: true });
}
