/**
 * Deduplication (issue 21): a second enqueue with the same `idempotency-key` control within
 * DedupWindow creates nothing and is answered with the first entry's key. A key is stored with its
 * entry, in the same transaction, but in a table of its own, so it outlives the entry (a duplicate of
 * an entry already delivered is still a duplicate). The keys of the window are held in memory:
 * loaded at start, dropped once expired (docs/ARCHITECTURE.md, The life of one queue entry).
 */
import { BadInputError } from '../../protocol/errors.js';
import type { Message, ValueMap } from '../../protocol/message.js';
import type { SeenRow, StoreOp } from './store.js';

/** The control naming an enqueue's idempotency key. */
export const IDEMPOTENCY_KEY = 'idempotency-key';
/** Longest key accepted: room for a UUID plus a prefix, without letting keys bloat the store. */
export const MAX_KEY_LENGTH = 200;
/** Printable ASCII: keys come from HTTP headers, where anything else is mangled or refused on the way. */
const PRINTABLE = /^[\x20-\x7e]+$/;
/** Expired keys are swept at most this often (and at least once per window), so adds stay O(1) on average. */
const SWEEP_EVERY_MS = 60_000;

/**
 * The idempotency key of an enqueue, or undefined without the control. Throws BadInputError (400)
 * naming the control for an empty, overlong, unprintable or repeated key.
 */
export function idempotencyKeyOf(controls: ValueMap): string | undefined {
  if (!Object.hasOwn(controls, IDEMPOTENCY_KEY)) return undefined;
  const values = controls[IDEMPOTENCY_KEY] ?? [];
  if (values.length !== 1) throw new BadInputError(`control ${IDEMPOTENCY_KEY} takes one value, got ${values.length}`);
  const key = values[0]!;
  if (key === '') throw new BadInputError(`control ${IDEMPOTENCY_KEY} is empty; give a key of 1 to ${MAX_KEY_LENGTH} printable characters`);
  if (key.length > MAX_KEY_LENGTH) throw new BadInputError(`control ${IDEMPOTENCY_KEY} is ${key.length} characters long; it may be at most ${MAX_KEY_LENGTH}`);
  if (!PRINTABLE.test(key)) throw new BadInputError(`control ${IDEMPOTENCY_KEY} may hold printable ASCII characters only`);
  return key;
}

/**
 * A key seen in the window and the entry it created. It is also the store write of the key (a
 * `seen` StoreOp): one object per keyed enqueue instead of two (bench/queue-ops.ts).
 */
export class SeenKey {
  readonly type = 'seen';
  /** Stored (true), or the error its write failed with; undefined while the write is under way. */
  private outcome: true | { error: unknown } | undefined;
  private waiting: Promise<void> | undefined;
  private settle: ((error?: unknown) => void) | undefined;

  constructor(
    readonly key: string,
    readonly entryKey: string,
    readonly seenAt: number,
    stored: boolean,
  ) {
    if (stored) this.outcome = true;
  }

  /**
   * Resolves once the first entry is durable, rejects if its write failed: a duplicate is answered
   * only then, so it never confirms an entry a crash could still lose. Made only when a duplicate
   * asks: most keys are never repeated, and a promise per key was a measurable part of a keyed
   * enqueue (bench/queue-ops.ts).
   */
  get durable(): Promise<void> {
    if (this.outcome === true) return Promise.resolve();
    if (this.outcome) return Promise.reject(this.outcome.error as Error);
    this.waiting ??= new Promise<void>((resolve, reject) => (this.settle = (e) => (e === undefined ? resolve() : reject(e))));
    return this.waiting;
  }

  committed(): void {
    this.outcome = true;
    this.settle?.();
  }

  failed(error: unknown): void {
    this.outcome = { error: error ?? new Error('the entry was not stored') };
    this.settle?.(this.outcome.error);
  }
}

/** An add sorted out: the messages that become entries and, per message, where its entry is. */
export interface AddPlan {
  /** The messages that become new entries, each with its idempotency key (if any). */
  fresh: Array<{ message: Message; key: string | undefined }>;
  /** Per message, in order: its index in `fresh`, or the idempotency key whose first entry it repeats. */
  order: Array<number | string>;
}

/** The keys of the window, in the order they were first seen (Map order), so a sweep stops at the first live one. */
export class DedupKeys {
  private readonly seen = new Map<string, SeenKey>();
  private lastSweep = 0;

  /** `windowMs` 0 turns deduplication off: the control is ignored. */
  constructor(readonly windowMs: number) {}

  get enabled(): boolean {
    return this.windowMs > 0;
  }

  get size(): number {
    return this.seen.size;
  }

  /** The key's first entry while the key is within the window. */
  lookup(key: string, now: number): SeenKey | undefined {
    const hit = this.seen.get(key);
    return hit && now - hit.seenAt < this.windowMs ? hit : undefined;
  }

  /**
   * Sorts an add's messages into new entries and duplicates, of a key seen earlier or earlier in the
   * same add. Every key is read first, so a bad one (400) adds nothing.
   */
  plan(messages: Message[], now: number): AddPlan {
    const plan: AddPlan = { fresh: [], order: [] };
    // made at the first key: most adds carry none, and this runs for every add
    let inThisAdd: Set<string> | undefined;
    for (const message of messages) {
      const key = this.enabled ? idempotencyKeyOf(message.Control) : undefined;
      if (key !== undefined && (inThisAdd?.has(key) || this.lookup(key, now))) {
        plan.order.push(key);
        continue;
      }
      if (key !== undefined) (inThisAdd ??= new Set()).add(key);
      plan.order.push(plan.fresh.length);
      plan.fresh.push({ message, key });
    }
    return plan;
  }

  /**
   * Records the keys of an add's new entries (`entryKeys`, in `plan.fresh` order), pending until
   * durable; each is also its store write, which goes in the entries' own transaction.
   */
  remember(plan: AddPlan, entryKeys: string[], now: number): SeenKey[] {
    const out: SeenKey[] = [];
    plan.fresh.forEach(({ key }, i) => {
      if (key === undefined) return;
      const seen = new SeenKey(key, entryKeys[i]!, now, false);
      this.seen.delete(key); // an expired key seen again moves to the end of the order
      this.seen.set(key, seen);
      out.push(seen);
    });
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
    if (this.seen.get(seen.key) === seen) this.seen.delete(seen.key);
  }

  /** Adopts a key committed before a restart of the actor (its state was reloaded without it). */
  adopt(seen: SeenKey): void {
    if (!this.seen.has(seen.key)) this.seen.set(seen.key, seen);
  }

  /** Loads the stored keys of the window (oldest first). */
  load(rows: SeenRow[]): void {
    for (const r of rows) {
      this.seen.delete(r.key); // a key stored twice (seen again after its window) keeps its later place
      this.seen.set(r.key, new SeenKey(r.key, r.entryKey, r.seenAt, true));
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
    for (const [key, seen] of this.seen) {
      if (seen.seenAt > before) break;
      this.seen.delete(key);
      dropped++;
    }
    return dropped > 0 ? { type: 'forget-seen', before } : undefined;
  }
}
