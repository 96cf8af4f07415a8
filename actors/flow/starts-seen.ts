/**
 * The idempotency keys of a flow's starts within DedupWindow (README, Flows): a second start with a
 * key seen in the window starts nothing and is answered with the first run's key. The keys are written
 * with their run's first write (`seen` rows of the queue store) and read back at start.
 */
import type { SeenRow, StoreOp } from '../queue/store.js';

export class StartsSeen {
  private readonly seen = new Map<string, { run: string; at: number }>();

  /** `windowMs` 0 turns deduplication off. */
  constructor(private readonly windowMs: number) {}

  get on(): boolean {
    return this.windowMs > 0;
  }

  load(rows: readonly SeenRow[]): void {
    for (const s of rows) this.seen.set(s.key, { run: s.entryKey, at: s.seenAt });
  }

  /** The run key a start with `key` started within the window. */
  runOf(key: string | undefined, now = Date.now()): string | undefined {
    if (key === undefined || !this.on) return undefined;
    const s = this.seen.get(key);
    return s && s.at > now - this.windowMs ? s.run : undefined;
  }

  /** Remembers `key` for run `run`; the store op to write with the run (none when off or without a key). */
  remember(key: string | undefined, run: string, at: number): StoreOp[] {
    if (key === undefined || !this.on) return [];
    this.seen.set(key, { run, at });
    return [{ type: 'seen', key, entryKey: run, seenAt: at }];
  }

  /** Forgets `key` if it still names `run` (its run could not be stored). */
  forget(key: string | undefined, run: string): void {
    if (key !== undefined && this.seen.get(key)?.run === run) this.seen.delete(key);
  }

  /** Drops the keys out of the window; the store op forgetting them too, if any went. */
  sweep(now: number): StoreOp | undefined {
    if (!this.on) return undefined;
    const before = now - this.windowMs;
    let forgot = false;
    for (const [k, s] of this.seen) {
      if (s.at > before) continue;
      this.seen.delete(k);
      forgot = true;
    }
    return forgot ? { type: 'forget-seen', before } : undefined;
  }
}
