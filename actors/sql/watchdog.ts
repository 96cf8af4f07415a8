/**
 * Client-side statement deadlines with one shared interval timer instead of arming and clearing a
 * timer for every statement, which sits on the path of every sub-millisecond SELECT. Deadlines are
 * checked every quarter of the limit (at most every second), so one fires up to that much late.
 */
import { TimeoutError } from '../../protocol/errors.js';

export class Watchdog {
  private readonly pending = new Set<{ deadline: number; fail: () => void }>();
  private timer: NodeJS.Timeout | undefined;

  watch<T>(p: Promise<T>, limitMs: number, reportMs: number, onTimeout?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (): void => {
        reject(new TimeoutError(`the statement did not finish within ${reportMs} ms`));
        onTimeout?.();
      };
      const entry = { deadline: Date.now() + limitMs, fail };
      this.pending.add(entry);
      this.timer ??= setInterval(() => this.sweep(), Math.max(10, Math.min(1000, Math.floor(limitMs / 4)))).unref();
      // the late result (or error) of a timed-out statement is dropped, not reported as unhandled
      p.then(
        (v) => {
          this.pending.delete(entry);
          resolve(v);
        },
        (e: unknown) => {
          this.pending.delete(entry);
          reject(e as Error);
        },
      );
    });
  }

  private sweep(): void {
    const now = Date.now();
    for (const entry of this.pending) {
      if (entry.deadline > now) continue;
      this.pending.delete(entry);
      entry.fail();
    }
    if (this.pending.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
