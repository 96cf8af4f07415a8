/**
 * At most one log line per key and period: a client repeating a refused request (a 403 in a loop)
 * must not flood the log. The first line of a period is written; the ones after it are counted and
 * their number is told with the next line written for that key. Keys are bounded: the oldest is
 * dropped past MAX_KEYS, so a client inventing keys cannot grow memory.
 */
const MAX_KEYS = 10_000;

export class LogThrottle {
  private readonly keys = new Map<string, { since: number; suppressed: number }>();

  constructor(private readonly periodMs = 60_000) {}

  /**
   * Whether a line for `key` is written now: `write` gets the number of lines held back since the
   * last one written for it (0 for the first), and is not called while the period runs.
   */
  note(key: string, write: (suppressed: number) => void, now = Date.now()): void {
    const seen = this.keys.get(key);
    if (seen && now - seen.since < this.periodMs) {
      seen.suppressed++;
      return;
    }
    if (seen) this.keys.delete(key);
    else if (this.keys.size >= MAX_KEYS) this.keys.delete(this.keys.keys().next().value as string);
    this.keys.set(key, { since: now, suppressed: 0 });
    write(seen?.suppressed ?? 0);
  }
}
