/**
 * Deduplication: a second enqueue with the same `idempotency-key` control within
 * DedupWindow creates nothing and is answered with the first entry's key. A key is stored with its
 * entry, in the same transaction, but in a table of its own, so it outlives the entry (a duplicate of
 * an entry already delivered is still a duplicate). The keys of the window are held in memory:
 * loaded at start, dropped once expired (docs/ARCHITECTURE.md, The life of one queue entry).
 */
import { idempotencyKeyOf } from '../../protocol/idempotency.js';
import type { Message } from '../../protocol/message.js';
import type { SeenRow, StoreOp } from './store.js';

/** Expired keys are swept at most this often (and at least once per window), so adds stay O(1) on average. */
const SWEEP_EVERY_MS = 60_000;

/** A duplicate waiting for its first entry's write: the promise it got and how to settle it. */
interface Waiter {
  promise: Promise<void>;
  settle: (error?: unknown) => void;
}

/**
 * A key seen in the window and the entry it created, while its write is under way. It is also the
 * store write of the key (a `seen` StoreOp): one object per keyed enqueue instead of two. The
 * window's keys are not held as SeenKeys: DedupKeys keeps them in slots and makes a SeenKey only
 * for a duplicate (lookup), so each kept key costs its two strings and no object of its own.
 */
export class SeenKey {
  /**
   * `true` once stored; `{ error }` if its write failed; while the write is under way, undefined,
   * or the waiter of the duplicates that asked for `durable` meanwhile.
   */
  private state: true | { error: unknown } | Waiter | undefined;
  /** The keys it was remembered in, and its slot there, so its outcome settles it there. */
  owner: DedupKeys | undefined;
  slot = -1;

  constructor(
    readonly key: string,
    readonly entryKey: string,
    readonly seenAt: number,
    stored: boolean,
  ) {
    this.state = stored || undefined;
  }

  /** Its kind as a store write; on the prototype, so no SeenKey carries a field for it. */
  get type(): 'seen' {
    return 'seen';
  }

  /**
   * Resolves once the first entry is durable, rejects if its write failed: a duplicate is answered
   * only then, so it never confirms an entry a crash could still lose. Made only when a duplicate
   * asks: most keys are never repeated, and a promise per key was a measurable part of a keyed
   * enqueue (bench/queue-ops.ts).
   */
  get durable(): Promise<void> {
    const state = this.state;
    if (state === true) return Promise.resolve();
    if (state === undefined) {
      let settle!: (error?: unknown) => void;
      const promise = new Promise<void>(
        (resolve, reject) => (settle = (e) => (e === undefined ? resolve() : reject(e))),
      );
      this.state = { promise, settle };
      return promise;
    }
    return 'promise' in state ? state.promise : Promise.reject(state.error as Error);
  }

  committed(): void {
    this.settle(true);
  }

  failed(error: unknown): void {
    this.settle({ error: error ?? new Error('the entry was not stored') });
  }

  private settle(outcome: true | { error: unknown }): void {
    const before = this.state;
    this.state = outcome;
    this.owner?.settled(this);
    if (before !== undefined && before !== true && 'settle' in before)
      before.settle(outcome === true ? undefined : outcome.error);
  }
}

/** An add sorted out: the messages that become entries and, per message, where its entry is. */
export interface AddPlan {
  /**
   * The messages that become new entries, each with its idempotency key (if any); `expired` when
   * the key is still held from an earlier window (remember() then moves it to the end).
   */
  fresh: Array<{ message: Message; key: string | undefined; expired: boolean }>;
  /** Per message, in order: its index in `fresh`, or the idempotency key whose first entry it repeats. */
  order: Array<number | string>;
}

/**
 * The keys of the window, in the order they were first seen (Map order), so a sweep stops at the
 * first live one. Each key maps to a slot: slots are numbered in that same order, and a slot's entry
 * key and time sit in two arrays (times unboxed), so a key held for the window is a Map entry and
 * two array elements, no object of its own beside its two strings: about 75 bytes less heap per key
 * than a SeenKey each (10^6 keys of a DedupWindow: about 72 MB less). Keys whose write is under way
 * are also in `pending`, small, for the duplicates that must wait for it.
 */
export class DedupKeys {
  private readonly slots = new Map<string, number>();
  private readonly pending = new Map<string, SeenKey>();
  /** The entry key and first-seen time (epoch ms) of slot `base + i`, at index i. */
  private readonly entryKeys: string[] = [];
  private readonly seenAts: number[] = [];
  private base = 0;
  private lastSweep = 0;

  /** `windowMs` 0 turns deduplication off: the control is ignored. */
  constructor(readonly windowMs: number) {}

  get enabled(): boolean {
    return this.windowMs > 0;
  }

  get size(): number {
    return this.slots.size;
  }

  /** The key's first entry while the key is within the window. */
  lookup(key: string, now: number): SeenKey | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    const seenAt = this.seenAts[slot - this.base]!;
    if (now - seenAt >= this.windowMs) return undefined;
    return this.pending.get(key) ?? new SeenKey(key, this.entryKeys[slot - this.base]!, seenAt, true);
  }

  /**
   * Gives `key` the next slot. The key must not be in `slots` (callers delete it first), so the
   * Map's order stays the slots' order.
   */
  private append(key: string, entryKey: string, seenAt: number): number {
    const slot = this.base + this.entryKeys.length;
    this.entryKeys.push(entryKey);
    this.seenAts.push(seenAt);
    this.slots.set(key, slot);
    return slot;
  }

  /** A remembered key's write is settled: duplicates no longer wait for it. */
  settled(seen: SeenKey): void {
    if (this.pending.get(seen.key) === seen) this.pending.delete(seen.key);
  }

  /**
   * Sorts an add's messages into new entries and duplicates, of a key seen earlier or earlier in the
   * same add. Every key is read first, so a bad one (400) adds nothing.
   */
  plan(messages: Message[], now: number): AddPlan {
    const plan: AddPlan = { fresh: [], order: [] };
    // the keys of this add so far: the first one alone, a set from the second on (most adds hold one
    // message, and this runs for every add)
    let firstKey: string | undefined;
    let inThisAdd: Set<string> | undefined;
    for (const message of messages) {
      const key = this.enabled ? idempotencyKeyOf(message.Control) : undefined;
      let expired = false;
      if (key !== undefined) {
        const inThisAddAlready = key === firstKey || inThisAdd?.has(key) === true;
        // one Map lookup per key: it tells a live key (a duplicate) from an expired one (remember())
        const slot = inThisAddAlready ? undefined : this.slots.get(key);
        if (inThisAddAlready || (slot !== undefined && now - this.seenAts[slot - this.base]! < this.windowMs)) {
          plan.order.push(key);
          continue;
        }
        expired = slot !== undefined;
        if (firstKey === undefined) firstKey = key;
        else (inThisAdd ??= new Set([firstKey])).add(key);
      }
      plan.order.push(plan.fresh.length);
      plan.fresh.push({ message, key, expired });
    }
    return plan;
  }

  /**
   * Records the keys of an add's new entries (`entryKeys`, in `plan.fresh` order), pending until
   * durable; each is also its store write, which goes in the entries' own transaction.
   */
  remember(plan: AddPlan, entryKeys: string[], now: number): SeenKey[] {
    const out: SeenKey[] = [];
    for (let i = 0; i < plan.fresh.length; i++) {
      const { key, expired } = plan.fresh[i]!;
      if (key === undefined) continue;
      const seen = new SeenKey(key, entryKeys[i]!, now, false);
      // an expired key seen again moves to the end of the order; a new one (plan looked) just goes there
      if (expired) this.slots.delete(key);
      seen.slot = this.append(key, seen.entryKey, now);
      seen.owner = this;
      this.pending.set(key, seen);
      out.push(seen);
    }
    return out;
  }

  /**
   * Per message of a remembered add, the key of its entry (the first entry for a duplicate), and
   * the first entries the duplicates wait for.
   */
  firsts(plan: AddPlan, entryKeys: string[], now: number): { keys: string[]; repeated: SeenKey[] } {
    const out: { keys: string[]; repeated: SeenKey[] } = { keys: [], repeated: [] };
    for (const o of plan.order) {
      if (typeof o === 'number') {
        out.keys.push(entryKeys[o]!);
        continue;
      }
      const first = this.lookup(o, now)!;
      out.keys.push(first.entryKey);
      out.repeated.push(first);
    }
    return out;
  }

  /** Takes back a key whose entry was not stored (unless a later enqueue has replaced it). */
  forget(seen: SeenKey): void {
    if (seen.owner !== this) return;
    this.settled(seen);
    if (this.slots.get(seen.key) !== seen.slot) return;
    this.slots.delete(seen.key);
    this.entryKeys[seen.slot - this.base] = ''; // its place stays until a sweep passes it; its string need not
  }

  /** Adopts a key committed before a restart of the actor (its state was reloaded without it). */
  adopt(seen: SeenKey): void {
    if (!this.slots.has(seen.key)) this.append(seen.key, seen.entryKey, seen.seenAt);
  }

  /** Loads the stored keys of the window (oldest first). */
  load(rows: SeenRow[]): void {
    for (const r of rows) {
      this.slots.delete(r.key); // a key stored twice (seen again after its window) keeps its later place
      this.append(r.key, r.entryKey, r.seenAt);
    }
  }

  /**
   * Drops expired keys when a sweep is due; returns the store write that drops them there too
   * (undefined when none expired).
   */
  sweep(now: number): StoreOp | undefined {
    if (!this.enabled || now - this.lastSweep < Math.min(SWEEP_EVERY_MS, this.windowMs)) return undefined;
    this.lastSweep = now;
    const before = now - this.windowMs;
    let dropped = 0;
    let firstLive = this.base + this.entryKeys.length;
    for (const [key, slot] of this.slots) {
      if (this.seenAts[slot - this.base]! > before) {
        firstLive = slot;
        break;
      }
      this.slots.delete(key);
      dropped++;
    }
    // the slots before the first live key are all dropped (Map order is slot order), and so are the
    // places of keys taken back or seen again among them
    if (firstLive > this.base) {
      this.entryKeys.splice(0, firstLive - this.base);
      this.seenAts.splice(0, firstLive - this.base);
      this.base = firstLive;
    }
    return dropped > 0 ? { type: 'forget-seen', before } : undefined;
  }
}
