/**
 * The queue's entries by key, in arrival order. Entries loaded from the store stay as their stored
 * JSON text until something needs them (delivery, fetch, list), when they are parsed once and kept
 * parsed. Why: parsing every document at start was most of the recovery time (10^6 entries: ~8 s,
 * 37% of it JSON.parse and 19% GC); the store keeps each entry's state and due time in their own
 * columns, which is all a start needs to schedule deliveries and retries.
 *
 * With a store that pages (backlog.ts) the table also counts the entries it leaves in the store
 * (parked: waiting for a time due beyond the horizon): they are in `size` and the per-state counts,
 * not in the iterations, which the queue makes complete by paging them in first. Entries paged in
 * are put back in seq order before the next iteration, so iterations stay in arrival order.
 */
import type { QueueEntry } from './entry.js';
import { EntryState, fromStored } from './entry.js';

/** An entry as loaded, not parsed yet: what scheduling needs, and the document. */
export class StoredEntry {
  constructor(
    readonly key: string,
    readonly seq: number,
    readonly state: EntryState,
    readonly dueAt: number,
    readonly doc: string,
  ) {}
}

export class EntryTable {
  private map = new Map<string, QueueEntry | StoredEntry>();
  /** Entries left in the store, by state. */
  private readonly parked = new Map<EntryState, number>();
  private parkedTotal = 0;
  /** Set when an entry was paged in behind entries of a later seq: the map is put in seq order before it is iterated. */
  private unordered = false;
  private lastSeq = 0;
  constructor(private readonly onUnreadable: (key: string, error: Error) => void = () => undefined) {}

  /** Every entry: those in memory and those parked in the store. */
  get size(): number {
    return this.map.size + this.parkedTotal;
  }

  /** Entries parked in the store (not in memory). */
  get parkedCount(): number {
    return this.parkedTotal;
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  /** Counts `n` entries in `state` as parked in the store. */
  park(state: EntryState, n: number): void {
    this.parked.set(state, (this.parked.get(state) ?? 0) + n);
    this.parkedTotal += n;
  }

  /** A parked entry is paged in: in memory from now on, in its place by seq. */
  pageIn(entry: StoredEntry): void {
    const n = this.parked.get(entry.state) ?? 0;
    // never below 0: an entry committed across a restart of the actor may have been counted or not (queue-actor.ts)
    if (n > 0) {
      this.parked.set(entry.state, n - 1);
      this.parkedTotal--;
    }
    this.setStored(entry);
  }

  get(key: string): QueueEntry | undefined {
    const slot = this.map.get(key);
    return slot instanceof StoredEntry ? this.parse(slot) : slot;
  }

  set(key: string, entry: QueueEntry): void {
    this.place(entry.seq);
    this.map.set(key, entry);
  }

  setStored(entry: StoredEntry): void {
    this.place(entry.seq);
    this.map.set(entry.key, entry);
  }

  /** Notes whether an added entry keeps the map in seq order. */
  private place(seq: number): void {
    if (seq < this.lastSeq) this.unordered = true;
    else this.lastSeq = seq;
  }

  /** The map in seq order again (after page-ins), once before the next iteration. */
  private ordered(): Map<string, QueueEntry | StoredEntry> {
    if (this.unordered) {
      this.map = new Map([...this.map].sort((a, b) => a[1].seq - b[1].seq));
      this.unordered = false;
    }
    return this.map;
  }

  delete(key: string): boolean {
    return this.map.delete(key);
  }

  /** Every entry goes, the parked ones too (the store is cleared with them). */
  clear(): void {
    this.map.clear();
    this.parked.clear();
    this.parkedTotal = 0;
    this.unordered = false;
  }

  /** Every entry in arrival order, parsing stored ones on the way. */
  *values(): IterableIterator<QueueEntry> {
    // parsing replaces or deletes the current key, which a Map's iteration allows
    for (const slot of this.ordered().values()) {
      const e = slot instanceof StoredEntry ? this.parse(slot) : slot;
      if (e) yield e;
    }
  }

  /** The entries in one state, parsing only those. */
  *ofState(state: EntryState): IterableIterator<QueueEntry> {
    for (const slot of this.ordered().values()) {
      if (slot.state !== state) continue;
      const e = slot instanceof StoredEntry ? this.parse(slot) : slot;
      if (e) yield e;
    }
  }

  /** How many entries are in each state, without parsing stored ones (status counts). */
  countByState(): Map<EntryState, number> {
    const counts = new Map<EntryState, number>();
    for (const slot of this.map.values()) counts.set(slot.state, (counts.get(slot.state) ?? 0) + 1);
    for (const [state, n] of this.parked) counts.set(state, (counts.get(state) ?? 0) + n);
    return counts;
  }

  /** Keys and due times of the entries waiting for a time (retrying, scheduled), without parsing stored ones. */
  *timed(): IterableIterator<{ key: string; dueAt: number }> {
    for (const slot of this.map.values())
      if (slot.state === EntryState.Retrying || slot.state === EntryState.Scheduled)
        yield { key: slot.key, dueAt: slot.dueAt };
  }

  private parse(slot: StoredEntry): QueueEntry | undefined {
    try {
      const e = fromStored(slot.doc);
      this.map.set(slot.key, e);
      return e;
    } catch (error) {
      // a document that cannot be read can never be delivered: skip it (it stays in the store)
      this.map.delete(slot.key);
      this.onUnreadable(slot.key, error as Error);
      return undefined;
    }
  }
}
