/** A queue store seeded straight with dead entries kept (bench/queue-dead.ts, bench/queue-dead-paging.ts). */
import { join } from 'node:path';
import type { QueueEntry } from '../../actors/queue/entry.js';
import { keepOp } from '../../actors/queue/kept.js';
import type { StoreOp } from '../../actors/queue/store.js';
import { SqliteStore } from '../../actors/queue/sqlite-store.js';
import { silentLogger } from '../../actors/observe/logger.js';
import { jobMessage } from './queue-rounds.js';

const REASONS = [
  'no success after 4 attempt(s)',
  '404 is not retryable (RetryOn retryable); no retry after 1 attempt(s)',
];

/** Writes `count` dead entries straight into the kept table of queue `name` (the queue is not running). */
export async function seedDeadSet(dir: string, name: string, count: number): Promise<void> {
  const store = await SqliteStore.open(join(dir, name), silentLogger());
  const batch = 20_000;
  const ended = Date.now();
  for (let start = 0; start < count; start += batch) {
    const ops: StoreOp[] = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const time = new Date(ended - 60_000).toISOString();
      const history = [1, 2, 3].map(() => ({ time, duration: 12, code: 500, message: 'the upstream failed' }));
      const e: QueueEntry = {
        key: `dead-${i}`,
        seq: i + 1,
        message: jobMessage(i),
        channel: 'target',
        mode: 'call',
        requeueTimerMs: 30_000,
        requeueCount: 3,
        deadLetter: 'dlq',
        attempts: 4,
        state: 'dead',
        dueAt: 0,
        createdAt: time,
        history,
        deadReason: REASONS[i % 2]!,
      };
      ops.push(keepOp(e, 'dead', ended));
    }
    await store.write(ops);
  }
  await store.close();
}
