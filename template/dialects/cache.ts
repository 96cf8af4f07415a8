/**
 * A small LRU of compiled dialect templates keyed by source text, so services that render the same
 * template for every message parse it once.
 */
export class CompiledCache<T> {
  private readonly map = new Map<string, T>();

  constructor(private readonly capacity = 64) {}

  /** The cached value for `key`, built with `make` on a miss. */
  get(key: string, make: () => T): T {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      // refresh recency
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const value = make();
    this.map.set(key, value);
    if (this.map.size > this.capacity) {
      const oldest = this.map.keys().next();
      if (oldest.done !== true) this.map.delete(oldest.value);
    }
    return value;
  }

  clear(): void {
    this.map.clear();
  }
}
