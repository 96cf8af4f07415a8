/**
 * The queue's entries by key, in arrival order. Entries loaded from the store stay as their stored
 * JSON text until something needs them (delivery, fetch, list), when they are parsed once and kept
 * parsed. Why: parsing every document at start was most of the recovery time (10^6 entries: ~8 s,
 * 37% of it JSON.parse and 19% GC); the store keeps each entry's state and due time in their own
 * columns, which is all a start needs to schedule deliveries and retries.
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
  private readonly map = new Map<string, QueueEntry | StoredEntry>();
  constructor(private readonly onUnreadable: (key: string, error: Error) => void = () => undefined) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string): QueueEntry | undefined {
    const slot = this.map.get(key);
    return slot instanceof StoredEntry ? this.parse(slot) : slot;
  }

  set(key: string, entry: QueueEntry): void {
    this.map.set(key, entry);
  }

  setStored(entry: StoredEntry): void {
    this.map.set(entry.key, entry);
  }

  delete(key: string): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }

  /** Every entry in arrival order, parsing stored ones on the way. */
  *values(): IterableIterator<QueueEntry> {
    // parsing replaces or deletes the current key, which a Map's iteration allows
    for (const slot of this.map.values()) {
      const e = slot instanceof StoredEntry ? this.parse(slot) : slot;
      if (e) yield e;
    }
  }

  /** The entries in one state, parsing only those. */
  *ofState(state: EntryState): IterableIterator<QueueEntry> {
    for (const slot of this.map.values()) {
      if (slot.state !== state) continue;
      const e = slot instanceof StoredEntry ? this.parse(slot) : slot;
      if (e) yield e;
    }
  }

  /** How many entries are in each state, without parsing stored ones (status counts). */
  countByState(): Map<EntryState, number> {
    const counts = new Map<EntryState, number>();
    for (const slot of this.map.values()) counts.set(slot.state, (counts.get(slot.state) ?? 0) + 1);
    return counts;
  }

  /** Keys and due times of the entries waiting for a time (retrying, scheduled), without parsing stored ones. */
  *timed(): IterableIterator<{ key: string; dueAt: number }> {
    for (const slot of this.map.values()) if (slot.state === EntryState.Retrying || slot.state === EntryState.Scheduled) yield { key: slot.key, dueAt: slot.dueAt };
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
