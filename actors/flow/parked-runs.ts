/**
 * Runs waiting in the store only (README, Flows: memory): a run waiting (a wait step, a retry's
 * pause) until after the horizon (PageHorizon from now) is not loaded at start, and one written
 * waiting that long leaves memory once its write is durable; its store row holds it, counted here,
 * and it is read back as its time comes near (the horizon moves on by a timer) or when a command
 * names it (fetch, replay, cancel, purge, a start's idempotency key) — a list reads the parked runs
 * for its answer without keeping them. The paging itself is the queue's (actors/queue/store-paging.ts):
 * a waiting run's row is a timed one ('scheduled' in the state column, run.ts putOp).
 */
import type { QueueStore } from '../queue/store.js';
import { Backlog } from '../queue/store-paging.js';
import type { Run } from './run.js';
import { RunState, runOf } from './run.js';

/** What a command needs read from the parked runs: some by key (kept), or all of them (for a list, not kept). */
export type ParkedNeed = { keys: readonly string[] } | 'all';

export class ParkedRuns {
  /** Runs held in the store only. */
  count = 0;
  private readonly backlog: Backlog;

  /** `horizonMs` 0 (or a store that does not page: memory) holds every run in memory. */
  constructor(
    private readonly store: QueueStore,
    horizonMs: number,
  ) {
    this.backlog = new Backlog(store, horizonMs);
  }

  /** Reads the stored runs but the parked ones (counted); resolves with the highest seq stored and the horizon, if any. */
  async load(onRun: (run: Run) => void): Promise<{ lastSeq: number; horizon: number | undefined }> {
    const horizon = this.backlog.startHorizon(Date.now());
    let lastSeq = 0;
    await this.store.load((rows) => {
      for (const r of rows) {
        lastSeq = Math.max(lastSeq, r.seq);
        onRun(runOf(r.doc));
      }
    }, horizon);
    if (horizon !== undefined) {
      const paging = this.store.paging!;
      for (const { n } of await paging.countTimedAfter(horizon)) this.count += n;
      // new runs' seqs pass the parked ones' too (a seq is the row's primary key)
      lastSeq = Math.max(lastSeq, await paging.lastSeq());
      await this.backlog.findNextDue();
    }
    return { lastSeq, horizon };
  }

  /** The parked runs `need` names that are not in memory; read after every earlier write committed. */
  async read(need: ParkedNeed, has: (key: string) => boolean): Promise<Run[]> {
    if (this.count === 0) return [];
    return (await this.backlog.read(need, has)).map((r) => runOf(r.doc));
  }

  /** The horizon moves on: the parked runs due before the new one, to come into memory. */
  async advance(has: (key: string) => boolean): Promise<Run[]> {
    if (this.count === 0) return [];
    try {
      return (await this.backlog.advance(Date.now(), has)).map((r) => runOf(r.doc));
    } catch (e) {
      this.backlog.postpone(Date.now());
      throw e;
    }
  }

  /** Whether a run just written waiting may leave memory (it is due beyond the horizon); counted as parked if so. */
  park(run: Run): boolean {
    if (run.state !== RunState.Waiting || !this.backlog.parkable(run.dueAt, Date.now(), this.count)) return false;
    this.count++;
    this.backlog.parked(run.dueAt);
    return true;
  }

  /** A parked run came into memory. */
  pagedIn(): void {
    this.count--;
  }

  /** The timer that moves the horizon on, while runs are parked. */
  arm(wake: () => void): void {
    this.backlog.arm(this.count, wake);
  }

  stop(): void {
    this.backlog.stop();
  }
}
