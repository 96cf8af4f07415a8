/**
 * SQLite runs every statement of the service on one shared connection (Sequelize keeps one per file,
 * and an in-memory database exists only on it). A raw transaction runs there too, between BEGIN and
 * COMMIT, so any other statement sent on that connection meanwhile would run inside it — and be
 * undone with it, although already answered 200. The gate keeps them apart: a transaction starts
 * once the statements running have ended, and statements sent while it runs (or waits) run after it,
 * in the order they came.
 */

interface Waiting {
  transaction: boolean;
  run: () => void;
}

export class SqliteGate {
  /** Single statements sent and not yet ended. */
  private active = 0;
  /** A transaction has the connection. */
  private exclusive = false;
  private readonly waiting: Waiting[] = [];

  /**
   * True when a statement may run now (counted: it must call `statementEnded` once it ends); false when
   * a transaction has the connection or waits for it — then `wait` queues the statement behind it.
   */
  enter(): boolean {
    if (this.exclusive || this.waiting.length > 0) return false;
    this.active++;
    return true;
  }

  /** Runs a statement `enter` refused once the transactions before it are done (counted as by `enter`). */
  wait(run: () => void): void {
    this.waiting.push({ transaction: false, run });
  }

  /** Bound once, so the statement path passes it without making a closure per statement. */
  readonly statementEnded = (): void => {
    this.active--;
    this.next();
  };

  /** Runs a transaction alone on the connection; the gate opens again when its promise settles. */
  transaction(run: () => Promise<void>): void {
    this.waiting.push({
      transaction: true,
      run: () => {
        void run()
          .catch(() => undefined)
          .finally(() => {
            this.exclusive = false;
            this.next();
          });
      },
    });
    this.next();
  }

  private next(): void {
    while (!this.exclusive && this.waiting.length > 0) {
      const first = this.waiting[0]!;
      if (first.transaction) {
        if (this.active > 0) return;
        this.exclusive = true;
      } else {
        this.active++;
      }
      this.waiting.shift();
      first.run();
    }
  }
}
