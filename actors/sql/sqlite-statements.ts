/**
 * Prepared SELECT statements kept on SQLite's one connection, a few per text. `Database#all(text)`
 * prepares, runs and finalizes a statement for every call — three trips through libuv's thread pool —
 * where a kept statement runs in one: at one statement at a time that was the difference between the
 * service and raw sqlite3. A statement runs one call at a time, so a text gets up to
 * PER_TEXT statements and a call that finds them all busy runs as `all(text)` does. A statement that
 * failed is finalized rather than reused; all are finalized before the connection closes (SQLite
 * refuses to close a connection with statements open).
 */

/** What sqlite3's Statement offers that is used here. */
interface Statement {
  all(values: Record<string, unknown>, done: (e: Error | null, rows: unknown[]) => void): void;
  finalize(done?: () => void): void;
}

export interface SqliteConnection {
  all(text: string, values: Record<string, unknown>, done: (e: Error | null, rows: unknown[]) => void): void;
  prepare(text: string, done: (e: Error | null) => void): Statement;
}

const PER_TEXT = 4;
const TEXTS_KEPT = 32;

interface Kept {
  idle: Statement[];
  made: number;
  /** No longer kept (too many texts, or closing): its statements are finalized when they finish. */
  dropped: boolean;
}

export class SqliteStatements {
  private readonly texts = new Map<string, Kept>();
  constructor(private readonly connection: SqliteConnection) {}

  /** Runs a SELECT; resolves with its rows. */
  all(text: string, values: Record<string, unknown>): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      let kept = this.texts.get(text);
      if (kept === undefined) {
        if (this.texts.size >= TEXTS_KEPT) this.dropAll();
        kept = { idle: [], made: 0, dropped: false };
        this.texts.set(text, kept);
      }
      const statement = kept.idle.pop();
      if (statement) return this.run(kept, statement, values, resolve, reject);
      if (kept.made >= PER_TEXT) return this.connection.all(text, values, (e, rows) => (e ? reject(e) : resolve(rows)));
      kept.made++;
      const made = this.connection.prepare(text, (e) => {
        if (!e) return this.run(kept, made, values, resolve, reject);
        // the text does not prepare: the statement's own run reports why, as without kept statements
        kept.made--;
        made.finalize();
        this.connection.all(text, values, (e2, rows) => (e2 ? reject(e2) : resolve(rows)));
      });
    });
  }

  /** Finalizes every kept statement (before the connection closes; none runs then). */
  close(): void {
    this.dropAll();
  }

  private run(
    kept: Kept,
    statement: Statement,
    values: Record<string, unknown>,
    resolve: (rows: unknown[]) => void,
    reject: (e: Error) => void,
  ): void {
    statement.all(values, (e, rows) => {
      if (e || kept.dropped) {
        kept.made--;
        statement.finalize();
      } else {
        kept.idle.push(statement);
      }
      if (e) reject(e);
      else resolve(rows);
    });
  }

  private dropAll(): void {
    for (const kept of this.texts.values()) {
      kept.dropped = true;
      for (const statement of kept.idle.splice(0)) statement.finalize();
    }
    this.texts.clear();
  }
}
