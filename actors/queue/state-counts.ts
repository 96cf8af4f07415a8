/**
 * The per-state counts that status and list answers carry (Data `waiting`, `scheduled`, `retrying`,
 * `dead`, `done`, each one string like `queuesize`): live entries counted from the queue's memory by
 * their state (without parsing stored documents), kept ones from the counts the queue keeps of them.
 */
import { EntryState } from './entry.js';
import type { EntryTable } from './entry-table.js';

const COUNTED_STATES = [
  EntryState.Waiting,
  EntryState.Scheduled,
  EntryState.Retrying,
  EntryState.Dead,
  EntryState.Done,
] as const;
type CountedState = (typeof COUNTED_STATES)[number];
export type StateCounts = Record<CountedState, number>;

/** The counts of kept entries the queue holds (queue-core.ts QueueStats). */
export interface KeptFigures {
  deadKept: number;
  doneKept: number;
}

export function stateCounts(entries: EntryTable, kept: KeptFigures): StateCounts {
  const counts: StateCounts = { waiting: 0, scheduled: 0, retrying: 0, dead: kept.deadKept, done: kept.doneKept };
  for (const [state, n] of entries.countByState()) {
    // entries being stored or delivered are stored as waiting (entry.ts): they count as waiting
    if (state === EntryState.Pending || state === EntryState.Delivering) counts.waiting += n;
    else if (state !== EntryState.Done) counts[state] += n;
  }
  return counts;
}

/** The counts as answer Data. */
export function countsData(counts: StateCounts): Record<string, string[]> {
  const data: Record<string, string[]> = {};
  for (const state of COUNTED_STATES) data[state] = [String(counts[state])];
  return data;
}
