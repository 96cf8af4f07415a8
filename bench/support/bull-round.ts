/**
 * One BullMQ round as the queue benches run it (bench/bullmq.ts, bench/queue-jetstream.ts): on a fresh
 * queue name, `producers` add `records` jobs (each awaited), a Worker with `concurrency` answers each
 * with its data; jobs per second from the first add to the last completion.
 */
import type { Peers } from './peers.js';
import { jobMessage, producers as produce } from './queue-rounds.js';
import type { Redis } from './redis.js';

export async function bullRound(
  peers: Peers,
  redis: Redis,
  records: number,
  producers: number,
  concurrency: number,
): Promise<number> {
  const name = `bench-${Date.now()}`;
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const queue = new peers.Queue(name, { connection });
  const worker = new peers.Worker(name, async (job) => job.data, { connection, concurrency });
  let completed = 0;
  const allDone = new Promise<void>((resolve) => worker.on('completed', () => ++completed === records && resolve()));
  await worker.waitUntilReady();
  const started = performance.now();
  await produce(records, producers, (i) =>
    queue.add('job', jobMessage(i), { removeOnComplete: true, removeOnFail: true }),
  );
  await allDone;
  const rate = records / ((performance.now() - started) / 1000);
  await worker.close();
  await queue.close();
  return rate;
}
