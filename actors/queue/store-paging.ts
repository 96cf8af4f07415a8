/**
 * Paging a store's timed rows (store.ts EntryPaging) in and out of memory: rows waiting for a time
 * due beyond a horizon (PageHorizon from now) stay in the store, counted, and are read back as their
 * time comes near (a timer moves the horizon on when the earliest parked row comes within
 * PageHorizon of now) or when a command names them. The queue's entries (backlog.ts) and a flow's
 * waiting runs (actors/flow/run-table.ts) are paged by it, so it knows neither.
 *
 * A read comes after a write barrier: every write its owner made before is committed when the store
 * is read, and the owner (one actor) changes nothing meanwhile, so what is read is what the store
 * holds for rows it does not have in memory.
 */
import type { EntryPaging, QueueStore, StoredRow } from './store.js';

/** What a read pages in: rows by key, the oldest parked row in one of some states, or every parked row. */
export type PageNeed = { keys: readonly string[] } | { oldest: readonly string[] } | 'all';

/** The longest one timer waits (Node's timers hold at most 2^31-1 ms); an early wake arms again. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The owner's side of paging: where the horizon is, and the timer that moves it. */
export class Backlog {
  /** Timed entries due after this (epoch ms) may be in the store only; Infinity: every entry is loaded. */
  parkedAfter = Infinity;
  /** The earliest due time of a parked entry (when known): the horizon moves on before it is reached. */
  private nextDue: number | undefined;
  /** nextDue is the earliest parked row's due time (not a postponed retry's). */
  private nextDueExact = true;
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
    this.nextDue =
      this.paging && this.parkedAfter !== Infinity ? await this.paging.nextDueAfter(this.parkedAfter) : undefined;
    this.nextDueExact = true;
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
    if ('keys' in need)
      return paging.timedByKeys(
        need.keys.filter((k) => !has(k)),
        this.parkedAfter,
      );
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

  /**
   * Whether a row written now as waiting until `dueAt` may leave memory for the store: it is due
   * beyond the horizon. With nothing parked due before now + horizon the horizon first moves on to it
   * (nothing is missed: every parked row is due after it), so a row is parked only when it is due
   * beyond the window memory holds, whenever the last page-in was.
   */
  parkable(dueAt: number, now: number, parked: number): boolean {
    if (!this.paging || this.parkedAfter === Infinity) return false;
    const horizon = now + this.horizonMs;
    if (parked === 0 || (this.nextDueExact && this.nextDue !== undefined && this.nextDue > horizon))
      this.parkedAfter = Math.max(this.parkedAfter, horizon);
    return dueAt > this.parkedAfter;
  }

  /** A row left memory for the store (parkable said so): the timer wakes for it too. */
  parked(dueAt: number): void {
    if (this.nextDue === undefined || dueAt < this.nextDue) this.nextDue = dueAt;
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
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        wake();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now())),
    ).unref();
  }

  /** After a failed page-in: the timer tries again in a few seconds, not at once. */
  postpone(now: number): void {
    this.nextDue = now + this.horizonMs + 5_000;
    this.nextDueExact = false;
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
