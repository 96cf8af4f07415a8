/**
 * Delivery in batches (README, The queue: Batches; batches.ts): the queue actor's pump gathers the
 * entries that come up for delivery into open batches and starts a batch as one delivery; its
 * outcome is split into one outcome per entry, each taken as a single delivery's is (retry, dead
 * letter, done), so every entry keeps its own attempts and state. DeliveryConcurrency counts
 * batches in flight (a batch is one delivery), as GroupConcurrency and GroupRate count a batch once.
 */
import type { Result } from '../../protocol/message.js';
import type { ActorRef } from '../../supervisors/runtime.js';
import type { BatchBuffers } from './batches.js';
import { batchMessage, entryResults } from './batches.js';
import { deliver } from './delivery.js';
import type { QueueEntry } from './entry.js';
import { EntryState } from './entry.js';
import type { Batching, Ended, QueueCore, QueueMsg, QueueState } from './queue-core.js';

/** Starts batches while the queue runs and fewer than DeliveryConcurrency are in flight. */
function pumpBatches(core: QueueCore, s: QueueState, b: BatchBuffers, self: ActorRef<QueueMsg>): void {
  const { breakers, config } = core.deps;
  const gate = s.groups;
  // as pumpGroups: an entry an open breaker holds is out of the gate's reach until released
  const waiting = (key: string): QueueEntry | undefined => {
    const e = s.entries.get(key);
    return e?.state === EntryState.Waiting && !breakers?.holds(e) && !s.live.holds(e) ? e : undefined;
  };
  const next = (now: number): QueueEntry | undefined => {
    if (gate) return gate.take(s.ready, waiting, now);
    while (s.ready.size > 0) {
      const e = s.entries.get(s.ready.pop()!);
      if (e?.state === EntryState.Waiting && !s.live.holds(e)) return e;
    }
    return undefined;
  };
  const now = Date.now();
  const admitted = (c: QueueEntry): boolean => !breakers || breakers.admit(c);
  // with groups the batch's companions are the group's next entries (taken without counting)
  const topUp = (first: QueueEntry, id: string, room: number): void => {
    for (const c of gate!.more(first, room, waiting, (c) => b.joins(c, id), now)) if (admitted(c)) b.add(c, now);
  };
  // an open batch waiting out its BatchWindow takes its group's entries that came since (its group is
  // at its limit by the batch's first entry, so the gate would not hand them out)
  if (gate && !s.paused)
    for (const open of [...b.partial()]) topUp(open.entries[0]!, open.id, config.BatchSize - open.entries.length);
  while (!s.paused && s.flights.size < config.DeliveryConcurrency) {
    // gather what came up until a batch is full or nothing more is ready
    while (!b.hasFull) {
      const e = next(now);
      if (!e) break;
      if (!admitted(e)) {
        gate?.finished(e.key); // held (a half-open breaker's probe is out): its group's room given back
        continue;
      }
      const { id, room } = b.add(e, now);
      if (gate && room > 0) topUp(e, id, room);
    }
    const batch = b.takeDue(now);
    if (!batch) break;
    startBatch(core, s, batch.entries, self);
  }
  b.arm(now, () => core.runtime.tell(self, { type: 'pump' }));
}

/**
 * Starts one batch: the entries still waiting (a `step`, `delete` or `clear` may have taken some
 * since they were gathered) go out as one message, each counting its own attempt.
 */
function startBatch(core: QueueCore, s: QueueState, entries: readonly QueueEntry[], self: ActorRef<QueueMsg>): void {
  const going = entries.filter((e) => e.state === EntryState.Waiting && s.entries.get(e.key) === e);
  if (going.length === 0) return;
  const flight = core.nextFlight++;
  s.flights.add(flight);
  for (const e of going) {
    e.state = EntryState.Delivering;
    e.attempts++;
    s.delivering++;
    core.deps.inFlight?.add(e.key);
    s.live.started(e);
  }
  core.deps.stats.batches++;
  core.deps.stats.batchedEntries += going.length;
  const first = going[0]!;
  const keys = going.map((e) => e.key);
  deliver(core.runtime, core.deps.delivery(), self, {
    type: 'deliver',
    key: first.key,
    channel: first.channel,
    mode: first.mode,
    message: batchMessage(going),
    attempt: first.attempts,
    batch: { keys, flight },
  });
}

/**
 * A batch's outcome: its flight ends, and each entry takes its own Result (Data `codes`, else the
 * batch's); a `codes` that cannot be matched to the keys fails every entry with 502 and is logged.
 * `inEntry` runs each entry's part in that entry's trace.
 */
export function batchOutcome(
  core: QueueCore,
  s: QueueState,
  self: ActorRef<QueueMsg>,
  ended: Omit<Ended, 'batch'> & { batch: { keys: string[]; flight: number } },
  inEntry: (key: string, result: Result, fn: () => void) => void,
): void {
  const { batch, result, durationMs } = ended;
  s.flights.delete(batch.flight);
  const { results, problem } = entryResults(result, batch.keys);
  if (problem)
    core.deps.log.warn(
      `batch of ${batch.keys.length} entries to '${s.entries.get(batch.keys[0]!)?.channel ?? '?'}' failed as a whole: ${problem}`,
    );
  batch.keys.forEach((key, i) =>
    inEntry(key, results[i]!, () =>
      core.outcome(s, key, self, { result: results[i]!, durationMs, batch: batch.keys.length }),
    ),
  );
}

/** What the core calls to start batches (queue-core.ts, Batching). */
export const batching: Batching = { pump: pumpBatches, start: startBatch };
