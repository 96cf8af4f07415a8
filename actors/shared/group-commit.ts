/**
 * Group commit: items submitted while a commit is under way are committed together by the next one,
 * and each submitter is answered only when the commit holding its item finished. One fsync then
 * serves many writers (the queue store, the echo record file).
 */
export class GroupCommit<T> {
  private pending: { item: T; resolve: () => void; reject: (e: Error) => void }[] = [];
  private running: Promise<void> | undefined;

  /** `commit` writes a batch durably, or throws (then every item of that batch is rejected with `mapError(error)`). */
  constructor(
    private readonly commit: (items: T[]) => Promise<void>,
    private readonly mapError: (e: unknown) => Error = (e) => e as Error,
  ) {}

  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      // the first commit after a pause starts once the code that submitted ends (a microtask), so the
      // writes the same turn's work submits (an actor's pass of messages) share it, instead of the
      // first going alone and the rest waiting a whole commit for the next one
      this.running ??= Promise.resolve().then(() => this.drain());
    });
  }

  /** Resolves when nothing is pending or being committed. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0);
      try {
        await this.commit(batch.map((b) => b.item));
        for (const b of batch) b.resolve();
      } catch (e) {
        const error = this.mapError(e);
        for (const b of batch) b.reject(error);
      }
    }
    this.running = undefined;
  }
}
