/**
 * Retention of the kept entries (kept.ts): a sweep removes dead entries older than DeadRetention and
 * done ones older than DoneRetention (by when they ended). It runs in the queue actor (so the counts
 * it lowers stay right), at load and then on an unref'd timer, and removes at most SWEEP_BATCH per
 * state each time: a larger backlog (a retention shortened, a long stop) goes in further sweeps, with
 * other messages handled in between.
 */
import { describeError } from '../../protocol/errors.js';
import type { ActorRef, Runtime } from '../../supervisors/runtime.js';
import { EntryState } from './entry.js';
import type { QueueCore, QueueMsg } from './queue-core.js';

/** Longest time between sweeps; a shorter retention sweeps as often as it lasts (at least every second). */
const SWEEP_EVERY_MS = 60_000;
const MIN_SWEEP_EVERY_MS = 1_000;
/** Most entries of one state a sweep removes. */
const SWEEP_BATCH = 10_000;

/** Removes kept entries past their retention, one batch per state; asks for another sweep while a batch came back full. */
export async function sweepKept(core: QueueCore, self: ActorRef<QueueMsg>): Promise<void> {
  const { config, store, stats, log } = core.deps;
  const now = Date.now();
  try {
    const dead = await store.kept.purge({ state: EntryState.Dead, before: now - config.DeadRetention }, SWEEP_BATCH);
    stats.deadKept -= dead;
    const done = await store.kept.purge({ state: EntryState.Done, before: now - config.DoneRetention }, SWEEP_BATCH);
    stats.doneKept -= done;
    if (dead + done > 0)
      log.info(
        `queue retention removed ${dead} dead entr${dead === 1 ? 'y' : 'ies'} (DeadRetention) and ${done} done entr${done === 1 ? 'y' : 'ies'} (DoneRetention)`,
      );
    if (dead === SWEEP_BATCH || done === SWEEP_BATCH) core.runtime.tell(self, { type: 'sweep' });
  } catch (e) {
    log.error(`queue retention sweep failed: ${describeError(e)}`);
  }
}

/** Sweeps now (the first message loads the store first) and then periodically; returns the stop. */
export function startRetentionSweeps(runtime: Runtime, queue: ActorRef<QueueMsg>, retentionsMs: number[]): () => void {
  const shortest = Math.min(SWEEP_EVERY_MS, ...retentionsMs.filter((ms) => ms > 0));
  runtime.tell(queue, { type: 'sweep' });
  const timer = setInterval(
    () => runtime.tell(queue, { type: 'sweep' }),
    Math.max(MIN_SWEEP_EVERY_MS, shortest),
  ).unref();
  return () => clearInterval(timer);
}
