/**
 * Counts per source address with bounded memory, for the receiver's sources refused by AllowFrom:
 * a flood from many addresses (spoofed UDP) must not grow the status without end. At most
 * `tracked` addresses are held; when a new one arrives and the table is full, the less refused half
 * is folded into 'other', so the sources refused most stay named. The snapshot names the `shown`
 * most counted ones and puts the rest under 'other'; the counts always add up to the total.
 */
const OTHER_SOURCES = 'other';

export class SourceCounts {
  private readonly counts = new Map<string, number>();
  private other = 0;
  total = 0;

  constructor(
    private readonly shown = 20,
    private readonly tracked = 4 * shown,
  ) {}

  add(source: string): void {
    this.total++;
    const n = this.counts.get(source);
    if (n !== undefined) {
      this.counts.set(source, n + 1);
      return;
    }
    if (this.counts.size >= this.tracked) this.foldLeast();
    this.counts.set(source, 1);
  }

  /** The most counted sources, most first, and 'other' when some are not named. */
  snapshot(): Record<string, number> {
    const sorted = [...this.counts].sort((a, b) => b[1] - a[1]);
    const out: Record<string, number> = {};
    let other = this.other;
    for (const [i, [source, n]] of sorted.entries()) {
      if (i < this.shown) out[source] = n;
      else other += n;
    }
    if (other > 0) out[OTHER_SOURCES] = other;
    return out;
  }

  private foldLeast(): void {
    const least = [...this.counts].sort((a, b) => a[1] - b[1]).slice(0, Math.ceil(this.counts.size / 2));
    for (const [source, n] of least) {
      this.other += n;
      this.counts.delete(source);
    }
  }
}
