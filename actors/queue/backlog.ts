/**
 * A big backlog in bounded memory: with a store that pages (store.ts EntryPaging, the
 * SQLite store), entries waiting for a time — retrying, scheduled — due beyond a horizon
 * (PageHorizon from now) are not loaded at start; they stay in the store, counted by state in the
 * entry table (parked), and are paged in as their time comes near (a timer moves the horizon on
 * when the earliest parked entry comes within PageHorizon of now) or when a command needs them: one
 * naming its key (fetch, delete, step, replay, purge), or taking the oldest entry (fetch or step
 * without a key). A list of live entries reads the parked ones for its answer without keeping
 * them (dead-set.ts listEntries). Memory then holds the entries near delivery, not the whole store.
 *
 * A page-in keeps the queue actor until its rows are in (as a store read of the dead set does),
 * after a write barrier: every write the queue made before is committed when the store is read, and
 * nothing changes the entries meanwhile, so what is read is what the store holds for entries the
 * queue does not have in memory.
 */
import type { QueueCommand } from './command-parser.js';
import { EntryState } from './entry.js';
import type { PageNeed } from './store-paging.js';

const TIMED: readonly EntryState[] = [EntryState.Retrying, EntryState.Scheduled];

/** The page-in a command needs, if any (commands on kept entries and schedules read the store themselves). */
export function pageNeedOf(cmd: QueueCommand): PageNeed | undefined {
  switch (cmd.type) {
    case 'fetch':
      return cmd.key ? { keys: [cmd.key] } : { oldest: TIMED };
    case 'step':
      // without a key, step takes the oldest waiting or retrying entry (never a scheduled one early)
      return cmd.key ? { keys: [cmd.key] } : { oldest: [EntryState.Retrying] };
    case 'delete':
      return { keys: [cmd.key] };
    case 'replay':
    case 'purge':
      return cmd.target.key !== undefined ? { keys: [cmd.target.key] } : undefined;
    default:
      return undefined;
  }
}
