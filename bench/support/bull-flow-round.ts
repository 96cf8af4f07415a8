/**
 * One BullMQ FlowProducer round for bench/flow.ts: `callers` closed-loop callers each add a flow — a
 * parent with two children (BullMQ's shape of a three-step run: the children run, then the parent with
 * their results) — and wait for its parent to complete, as a caller of a hivenode flow waits for its
 * run's answer. Workers (concurrency `callers` each) answer every job with its data. Flows per second
 * from the first add to the last parent completed, on a fresh queue pair.
 */
import type { Peers } from './peers.js';
import { drive } from '../lib.js';
import type { Redis } from './redis.js';

export async function bullFlowRound(peers: Peers, redis: Redis, runs: number, callers: number): Promise<number> {
  const stamp = Date.now();
  const parents = `bench-flow-${stamp}`;
  const children = `bench-steps-${stamp}`;
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const producer = new peers.FlowProducer({ connection });
  const stepWorker = new peers.Worker(children, async (job) => job.data, { connection, concurrency: callers });
  const parentWorker = new peers.Worker(parents, async (job) => job.data, { connection, concurrency: callers });
  const waiting = new Map<string, () => void>();
  parentWorker.on('completed', (job) => {
    const done = job.id === undefined ? undefined : waiting.get(job.id);
    if (done) {
      waiting.delete(job.id!);
      done();
    }
  });
  await Promise.all([stepWorker.waitUntilReady(), parentWorker.waitUntilReady()]);
  const gone = { removeOnComplete: true, removeOnFail: true };
  let i = 0;
  const started = performance.now();
  await drive(runs, callers, async () => {
    const n = i++;
    const id = `run-${n}`;
    const data = { id: String(n), payload: 'some payload of a typical job' };
    const completed = new Promise<void>((resolve) => waiting.set(id, resolve));
    await producer.add({
      name: 'three',
      queueName: parents,
      data,
      opts: { jobId: id, ...gone },
      children: [
        { name: 'one', queueName: children, data, opts: gone },
        { name: 'two', queueName: children, data, opts: gone },
      ],
    });
    await completed;
  });
  const rate = runs / ((performance.now() - started) / 1000);
  await Promise.all([stepWorker.close(), parentWorker.close(), producer.close()]);
  return rate;
}
