/**
 * Failed sign-ins counted per client address and per user name: past the limit within the window,
 * further attempts are refused at once with 429 and Retry-After, without a bcrypt comparison — a
 * guessing client costs next to nothing once it is throttled. A success is never throttled when its
 * credentials are cached (auth.ts looks there first), so a signed-in user keeps working while somebody
 * guesses their password; a user not yet signed in waits out the window. Keys are bounded (MAX_KEYS,
 * the oldest dropped): a client inventing addresses or user names cannot grow memory.
 */

/** Failures allowed within WINDOW_MS from one address, and against one user name. */
export const FAILURES_PER_ADDRESS = 20;
const FAILURES_PER_USER = 50;
const WINDOW_MS = 60_000;
const MAX_KEYS = 10_000;

export class SignInThrottle {
  /** Per key, the times of its failures within the window (oldest first). */
  private readonly failures = new Map<string, number[]>();
  /** Attempts refused since the last report line. */
  refused = 0;

  constructor(
    private readonly perAddress = FAILURES_PER_ADDRESS,
    private readonly perUser = FAILURES_PER_USER,
    private readonly windowMs = WINDOW_MS,
  ) {}

  /** Seconds to wait when the address or the user is throttled now; undefined when an attempt may go ahead. */
  retryAfter(address: string, user: string, now = Date.now()): number | undefined {
    const wait = Math.max(
      this.waitOf(`a:${address}`, this.perAddress, now),
      this.waitOf(`u:${user}`, this.perUser, now),
    );
    if (wait <= 0) return undefined;
    this.refused++;
    return Math.max(1, Math.ceil(wait / 1000));
  }

  /**
   * Counts an attempt about to be verified as a failure until it is known: a flood's attempts are all
   * in flight at once, and counted only once they had failed, the first hundreds would pass the check.
   * A success takes it back (`succeeded`).
   */
  attempt(address: string, user: string, now = Date.now()): void {
    this.note(`a:${address}`, now);
    this.note(`u:${user}`, now);
  }

  /** Forgets every failure: the users file changed, and a user added since must not inherit the failures of before. */
  clear(): void {
    this.failures.clear();
  }

  /** Takes back the count of an attempt that succeeded. */
  succeeded(address: string, user: string): void {
    for (const key of [`a:${address}`, `u:${user}`]) {
      const times = this.failures.get(key);
      times?.pop();
      if (times?.length === 0) this.failures.delete(key);
    }
  }

  private waitOf(key: string, limit: number, now: number): number {
    const times = this.prune(key, now);
    // the limit reached: wait until the oldest failure counted leaves the window
    return times.length >= limit ? times[times.length - limit]! + this.windowMs - now : 0;
  }

  private note(key: string, now: number): void {
    const times = this.prune(key, now);
    if (times.length === 0) {
      if (this.failures.size >= MAX_KEYS) this.failures.delete(this.failures.keys().next().value as string);
      this.failures.set(key, times);
    }
    times.push(now);
    // never more than the larger limit: the window's count is all that matters
    if (times.length > Math.max(this.perAddress, this.perUser)) times.shift();
  }

  private prune(key: string, now: number): number[] {
    const times = this.failures.get(key) ?? [];
    while (times.length > 0 && times[0]! <= now - this.windowMs) times.shift();
    if (times.length === 0) this.failures.delete(key);
    return times;
  }
}
