/**
 * A counting semaphore with a bounded waiting line: at most `size` holders, at most `maxWaiting`
 * waiters (more are refused at once with 429), and a wait that gives up after a timeout.
 */
import { OverloadedError, TimeoutError } from '../../protocol/errors.js';

export class Slots {
  private held = 0;
  private readonly queue: Array<{ grant: () => void }> = [];

  constructor(
    private readonly size: number,
    private readonly maxWaiting: number,
  ) {}

  get busy(): number {
    return this.held;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Resolves with a release function once a slot is free. */
  acquire(timeoutMs: number): Promise<() => void> {
    const release = (): void => {
      const next = this.queue.shift();
      if (next) next.grant();
      else this.held--;
    };
    if (this.held < this.size) {
      this.held++;
      return Promise.resolve(release);
    }
    if (this.queue.length >= this.maxWaiting)
      return Promise.reject(new OverloadedError(`${this.size} running and ${this.maxWaiting} waiting; retry shortly`));
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          clearTimeout(timer);
          resolve(release);
        },
      };
      const timer = setTimeout(() => {
        const i = this.queue.indexOf(entry);
        if (i >= 0) this.queue.splice(i, 1);
        reject(new TimeoutError(`no free slot within ${timeoutMs} ms`));
      }, timeoutMs);
      this.queue.push(entry);
    });
  }
}
