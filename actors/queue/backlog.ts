/**
 * A big backlog in bounded memory (issue 26): with a store that pages (store.ts EntryPaging, the
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
import { MAX_TIMEOUT_MS } from './retry.js';
import type { EntryPaging, QueueStore, StoredRow } from './store.js';

/** What a command needs paged in before it runs. */
export type PageNeed = { keys: readonly string[] } | { oldest: readonly EntryState[] } | 'all';

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

/** The queue's side of paging: where the horizon is, and the timer that moves it. */
export class Backlog {
  /** Timed entries due after this (epoch ms) may be in the store only; Infinity: every entry is loaded. */
  parkedAfter = Infinity;
  /** The earliest due time of a parked entry (when known): the horizon moves on before it is reached. */
  private nextDue: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;
  private readonly paging: EntryPaging | undefined;

  /** `horizonMs`: PageHorizon; 0 (or a store that does not page) loads every entry. */
  constructor(
    private readonly store: QueueStore,
    private readonly horizonMs: number,
  ) {
    this.paging = horizonMs > 0 ? store.paging : undefined;
  }

  /** The horizon of a start: timed entries due after it are left in the store (undefined: every entry is loaded). */
  startHorizon(now: number): number | undefined {
    if (!this.paging) return undefined;
    this.parkedAfter = now + this.horizonMs;
    return this.parkedAfter;
  }

  /** Reads when the earliest parked entry is due, for the timer. */
  async findNextDue(): Promise<void> {
    this.nextDue = this.paging && this.parkedAfter !== Infinity ? await this.paging.nextDueAfter(this.parkedAfter) : undefined;
  }

  /**
   * The rows `need` pages in (keys the table does not hold), read after every earlier write of the
   * queue is committed. `has` tells which keys are in memory already.
   */
  async read(need: PageNeed, has: (key: string) => boolean): Promise<StoredRow[]> {
    const paging = this.paging;
    if (!paging || this.parkedAfter === Infinity) return [];
    if (typeof need === 'object' && 'keys' in need && need.keys.every(has)) return [];
    await this.barrier();
    if (need === 'all') {
      const rows = await paging.timedBetween(this.parkedAfter, Number.MAX_SAFE_INTEGER);
      return rows.filter((r) => !has(r.key));
    }
    if ('keys' in need) return paging.timedByKeys(need.keys.filter((k) => !has(k)), this.parkedAfter);
    const row = await paging.oldestTimed(need.oldest, this.parkedAfter);
    return row && !has(row.key) ? [row] : [];
  }

  /** The rows due up to a new horizon, which becomes the table's; read after the queue's earlier writes are committed. */
  async advance(now: number, has: (key: string) => boolean): Promise<StoredRow[]> {
    const until = now + this.horizonMs;
    await this.barrier();
    const rows = await this.paging!.timedBetween(this.parkedAfter, until);
    this.parkedAfter = until;
    await this.findNextDue();
    return rows.filter((r) => !has(r.key));
  }

  /** Arms the timer that moves the horizon on when the earliest parked entry comes within it, while entries are parked. */
  arm(parked: number, wake: () => void): void {
    if (parked === 0 || this.nextDue === undefined) return this.stop();
    const at = this.nextDue - this.horizonMs;
    if (this.timer && this.timerAt === at) return;
    this.stop();
    this.timerAt = at;
    // unref: parked entries never keep a stopped node's process alive. Capped as the retry timer is:
    // an early wake moves the horizon on and arms again
    this.timer = setTimeout(() => {
      this.timer = undefined;
      wake();
    }, Math.min(MAX_TIMEOUT_MS, Math.max(0, at - Date.now()))).unref();
  }

  /** After a failed page-in: the timer tries again in a few seconds, not at once. */
  postpone(now: number): void {
    this.nextDue = now + this.horizonMs + 5_000;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** An empty write: resolves once every write submitted before it is committed (a failed one included). */
  private barrier(): Promise<void> {
    return this.store.write([]).catch(() => undefined);
  }
}
