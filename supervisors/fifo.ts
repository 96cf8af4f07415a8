/**
 * A first-in first-out queue over an array with a moving head: push and shift are O(1) and the array
 * is compacted now and then, so a queue that never runs empty does not grow without bound.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Takes the oldest item; call only when size > 0. */
  shift(): T {
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined;
    this.head++;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Removes and returns every queued item. */
  drain(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return rest;
  }
}
