/**
 * Statements that take effect all together or not at all: the statements of one SQL_BATCH message
 * (batch.ts cuts its rows into as few as the engine allows). One statement is atomic on every engine
 * and runs as it is. Several run in one transaction:
 *
 * - PostgreSQL, MySQL/MariaDB, SQL Server, Oracle: a Sequelize transaction, which holds one pooled
 *   connection for them (acquired within SQL_ACQUIRETIMEOUT like any statement's, else 503);
 * - SQLite: BEGIN IMMEDIATE … COMMIT on the instance's one Sequelize connection, the one a timed-out
 *   statement is interrupted on. Every other statement of the instance runs on that connection too,
 *   so the instance's multi-row writes take turns: none lands inside another's transaction (and
 *   SQLite runs one writer at a time in any case).
 *
 * A failing statement rolls everything back and its error is the answer (a value the database
 * refuses 400 with its reason, 504 over SQL_TIMEOUT — a statement that ends after its deadline is
 * rolled back with the rest, never committed).
 */
import type { Transaction } from 'sequelize';
import type { Bind, Database, Outcome, WriteOutcome } from './database.js';
import { mapDbError } from './db-errors.js';
import type { PlanKind } from './statement.js';

/** One statement with its bound values. */
export interface BoundStatement {
  sql: string;
  bind: Bind;
}

const written = (o: Outcome): WriteOutcome => ('affected' in o ? o : { affected: 0 });

export class AllOrNothing {
  /** SQLite: the end of the last write queued (see above). */
  private lane: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Database) {}

  /** Runs the writes of `kind` in order, all or none; resolves with each one's outcome. */
  run(kind: PlanKind, statements: readonly BoundStatement[]): Promise<WriteOutcome[]> {
    if (this.db.dialect === 'sqlite') return this.inLane(() => (statements.length === 1 ? this.one(kind, statements[0]!) : this.sqlite(kind, statements)));
    return statements.length === 1 ? this.one(kind, statements[0]!) : this.server(kind, statements);
  }

  private inLane<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.lane.then(work);
    this.lane = turn.catch(() => undefined);
    return turn;
  }

  private async one(kind: PlanKind, s: BoundStatement): Promise<WriteOutcome[]> {
    return [written(await this.db.run(kind, s.sql, s.bind))];
  }

  private async sqlite(kind: PlanKind, statements: readonly BoundStatement[]): Promise<WriteOutcome[]> {
    // IMMEDIATE takes the write lock now: a writer elsewhere is met here, before any row is written
    await this.db.run('exec', 'BEGIN IMMEDIATE', {});
    try {
      const outcomes: WriteOutcome[] = [];
      for (const s of statements) outcomes.push(written(await this.db.run(kind, s.sql, s.bind)));
      await this.db.run('exec', 'COMMIT', {});
      return outcomes;
    } catch (e) {
      // an interrupted statement may have ended the transaction already: nothing left to undo then
      await this.db.run('exec', 'ROLLBACK', {}).catch(() => undefined);
      throw e;
    }
  }

  private async server(kind: PlanKind, statements: readonly BoundStatement[]): Promise<WriteOutcome[]> {
    let transaction: Transaction;
    try {
      transaction = await this.db.sequelize.transaction();
    } catch (e) {
      throw mapDbError(e, this.db.dialect, this.db.options);
    }
    try {
      const outcomes: WriteOutcome[] = [];
      for (const s of statements) outcomes.push(written(await this.db.run(kind, s.sql, s.bind, transaction)));
      await transaction.commit();
      return outcomes;
    } catch (e) {
      // a failed COMMIT, or MySQL's own rollback after a deadlock, leaves the transaction finished
      await transaction.rollback().catch(() => undefined);
      throw mapDbError(e, this.db.dialect, this.db.options);
    }
  }
}
