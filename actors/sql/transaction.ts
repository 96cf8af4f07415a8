/**
 * Runs the statements of a raw transaction (SQL_RAWTRANSACTION), or the statements a SQL_BATCH message's
 * rows are cut into (batch.ts), on one connection, all or nothing:
 * BEGIN, each statement in order with its own bound values, COMMIT — and ROLLBACK on any failure,
 * which is answered naming the statement ("statement 2 of 3: …") with the Code its error maps to.
 *
 * The connection is held from BEGIN to COMMIT or ROLLBACK and always given back: server engines take
 * one from the pool through a Sequelize transaction (503 when none becomes free in time); SQLite uses
 * its one shared connection, which the gate (sqlite-gate.ts) keeps to the transaction meanwhile.
 *
 * SQL_TIMEOUT covers the whole transaction, not each statement: past it the answer is 504, no further
 * statement starts and the transaction is rolled back. The statement running then is stopped by the
 * engine where it can be told the time left — PostgreSQL `SET LOCAL statement_timeout` (once a tenth
 * of the time is gone), MariaDB `SET STATEMENT max_statement_time=… FOR` before each statement after
 * the first; SQLite is interrupted. Elsewhere (MySQL, SQL Server, Oracle) it runs to its own
 * per-statement limit first.
 * Once COMMIT is sent the deadline no longer answers: the caller learns whether it was committed.
 */
import type { Sequelize, Transaction } from 'sequelize';
import { TimeoutError, codeOf } from '../../protocol/errors.js';
import type { Deadlines } from '../shared/deadlines.js';
import type { DatabaseOptions } from './connection-options.js';
import type { Bind, Outcome } from './outcome.js';
import { mapDbError, namingStatement } from './db-errors.js';
import type { Dialect } from './dialect.js';
import type { PlanKind } from './statement.js';

/** One statement of a transaction: its text, how it is read, its bound values (by name, or by position for a batch's rows). */
export interface TransactionStep {
  kind: PlanKind;
  sql: string;
  bind: Bind;
  /** What a failure names (default `statement i of n`; a batch's statement names its rows). */
  label?: string;
}

/** Told how a transaction ended: the failure with its Code, or what each statement produced. */
export type TransactionDone = (error: Error | undefined, outcomes?: Outcome[]) => void;

/**
 * Told how a transaction of statements each in its own savepoint ended (runEach): the failure that
 * ended it all, or per statement what it produced or the 4xx error that refused it alone.
 */
export type EachDone = (error: Error | undefined, outcomes?: (Outcome | Error)[]) => void;

/** The savepoint around one statement of runEach, per engine (SQL Server names it with SAVE TRANSACTION and has no release). */
function savepointSql(dialect: Dialect): { set: string; release: string | undefined; back: string } {
  const name = 'hivenode_row';
  if (dialect === 'mssql')
    return { set: `SAVE TRANSACTION ${name}`, release: undefined, back: `ROLLBACK TRANSACTION ${name}` };
  // Oracle has no RELEASE SAVEPOINT: a savepoint set again under its name replaces it
  return {
    set: `SAVEPOINT ${name}`,
    release: dialect === 'oracle' ? undefined : `RELEASE SAVEPOINT ${name}`,
    back: `ROLLBACK TO SAVEPOINT ${name}`,
  };
}

/** How one statement reaches the database and what it produced (database.ts: the single statement path's own). */
export type StepQuery = (step: TransactionStep, transaction: Transaction | undefined) => Promise<Outcome>;

/** The connection of one transaction. */
/** The two steps of Sequelize 6's Transaction that give its connection back (undeclared in its types). */
interface SequelizeTransactionEnd {
  /** Releases the connection to the pool. */
  cleanup(): void;
  /** Closes the connection (its state unknown) and releases it. */
  forceCleanup(): Promise<void>;
}

interface Session {
  query(step: TransactionStep, leftMs: number | undefined): Promise<Outcome>;
  /** A statement of the transaction's own (a savepoint). */
  exec(sql: string): Promise<void>;
  end(commit: boolean): Promise<void>;
}

/** Engine-side grace of the client-side deadline where the engine is told the time left. */
const ENGINE_GRACE_MS = 2000;

/**
 * PostgreSQL is told the time left (one more round trip) only once less than this share of SQL_TIMEOUT
 * is left: a quick transaction pays nothing, and a statement started before then runs at most to the
 * session's own limit, a tenth of SQL_TIMEOUT past the transaction's end (the answer is 504 anyway).
 */
const NARROW_BELOW = 0.9;

export class TransactionRunner {
  private readonly sequelize: Sequelize;
  private readonly dialect: Dialect;
  private readonly options: DatabaseOptions;
  private readonly deadlines: Deadlines;
  private readonly query: StepQuery;
  /** Stops what runs on SQLite's connection now. */
  private readonly interruptSqlite: () => Promise<void>;

  constructor(parts: {
    sequelize: Sequelize;
    dialect: Dialect;
    options: DatabaseOptions;
    deadlines: Deadlines;
    query: StepQuery;
    interruptSqlite: () => Promise<void>;
  }) {
    ({
      sequelize: this.sequelize,
      dialect: this.dialect,
      options: this.options,
      deadlines: this.deadlines,
      query: this.query,
      interruptSqlite: this.interruptSqlite,
    } = parts);
  }

  /** Runs the steps; `done` is told once. Settles (never rejects) when the connection is given back. */
  run(steps: readonly TransactionStep[], done: TransactionDone): Promise<void> {
    // without savepoints every failure ends the transaction: the outcomes are all Outcomes
    return this.runSteps(steps, done as EachDone, false);
  }

  /**
   * Runs the steps in one transaction, each in its own savepoint: a step the database refuses for
   * its values (a 4xx: a constraint, a bad value) is rolled back alone and the others go on; any
   * other failure (the database gone, SQL_TIMEOUT) ends it all as `run` does. SQL_BATCH's rows
   * redone one by one (README, The SQL service: SQL_ROWCODES).
   */
  runEach(steps: readonly TransactionStep[], done: EachDone): Promise<void> {
    return this.runSteps(steps, done, true);
  }

  private async runSteps(steps: readonly TransactionStep[], done: EachDone, alone: boolean): Promise<void> {
    let answered = false;
    const answer: EachDone = (error, outcomes) => {
      if (answered) return;
      answered = true;
      done(error, outcomes);
    };
    const ms = this.options.timeoutMs;
    const endsAt = Date.now() + ms;
    let expired = false;
    let running = false;
    const told = this.dialect === 'postgres' || this.options.engine === 'mariadb';
    const deadline =
      ms > 0
        ? this.deadlines.start(told ? ms + ENGINE_GRACE_MS : ms, () => {
            expired = true;
            answer(this.timedOut());
            if (this.dialect === 'sqlite' && running) void this.interruptSqlite();
          })
        : undefined;
    let session: Session | undefined;
    let committed = false;
    try {
      session = await this.begin();
      const outcomes: (Outcome | Error)[] = [];
      const savepoint = alone ? savepointSql(this.dialect) : undefined;
      for (let i = 0; i < steps.length; i++) {
        if (expired) return;
        running = true;
        try {
          if (savepoint) await session.exec(savepoint.set);
          outcomes.push(await session.query(steps[i]!, i > 0 && ms > 0 ? endsAt - Date.now() : undefined));
          if (savepoint?.release) await session.exec(savepoint.release);
        } catch (e) {
          const error = mapDbError(e, this.dialect, this.options);
          if (savepoint && !(error instanceof TimeoutError) && codeOf(error) < 500 && !expired) {
            // refused for its values: this step alone is undone, the transaction goes on
            await session.exec(savepoint.back);
            outcomes.push(error);
            continue;
          }
          answer(
            error instanceof TimeoutError
              ? this.timedOut(error)
              : namingStatement(error, `${steps[i]!.label ?? `statement ${i + 1} of ${steps.length}`}: `),
          );
          return;
        } finally {
          running = false;
        }
      }
      // from here the commit's outcome is the answer, not the deadline
      if (deadline && !this.deadlines.settle(deadline)) return;
      await session.end(true);
      committed = true;
      answer(undefined, outcomes);
    } catch (e) {
      // BEGIN (no free connection, database down) or COMMIT failed
      answer(
        session
          ? namingStatement(mapDbError(e, this.dialect, this.options), 'COMMIT: ')
          : mapDbError(e, this.dialect, this.options),
      );
    } finally {
      if (deadline) this.deadlines.settle(deadline);
      // a statement SQLite interrupted has already rolled the transaction back: that ROLLBACK fails, harmlessly
      if (session && !committed) await session.end(false).catch(() => undefined);
    }
  }

  private timedOut(cause?: unknown): TimeoutError {
    return new TimeoutError(
      `the transaction did not finish within ${this.options.timeoutMs} ms (SQL_TIMEOUT covers all its statements) and was rolled back`,
      cause === undefined ? {} : { cause },
    );
  }

  private async begin(): Promise<Session> {
    if (this.dialect === 'sqlite') {
      // IMMEDIATE takes the write lock at once: a deferred one could fail half-way on a lock upgrade
      await this.control('BEGIN IMMEDIATE');
      return {
        query: (step) => this.query(step, undefined),
        exec: (sql) => this.control(sql),
        end: (commit) => this.control(commit ? 'COMMIT' : 'ROLLBACK'),
      };
    }
    const transaction = await this.sequelize.transaction({ logging: false });
    return {
      query: async (step, leftMs) => {
        if (leftMs === undefined) return this.query(step, transaction);
        if (leftMs <= 0) throw this.timedOut();
        if (this.dialect === 'postgres' && leftMs < this.options.timeoutMs * NARROW_BELOW) {
          // SET LOCAL ends with the transaction: the pooled connection keeps its own limit
          await this.sequelize.query(`SET LOCAL statement_timeout = ${Math.ceil(leftMs)}`, {
            type: 'RAW',
            raw: true,
            logging: false,
            transaction,
          });
        } else if (this.options.engine === 'mariadb') {
          return this.query(
            {
              ...step,
              sql: `SET STATEMENT max_statement_time = ${(Math.ceil(leftMs) / 1000).toFixed(3)} FOR ${step.sql}`,
            },
            transaction,
          );
        }
        return this.query(step, transaction);
      },
      exec: async (sql) => {
        await this.sequelize.query(sql, { type: 'RAW', raw: true, logging: false, transaction });
      },
      end: (commit) => this.finish(transaction, commit),
    };
  }

  /**
   * COMMIT or ROLLBACK, as `Transaction.commit()` / `rollback()` do it but without their console.warn
   * ("Committing transaction … failed …") when the connection is lost: that line went to the process's
   * stderr, outside the service's logger. A failure is thrown to the caller, which answers with it; the
   * connection, whose state is then unknown, is closed rather than given back to the pool, as Sequelize
   * does.
   */
  private async finish(transaction: Transaction, commit: boolean): Promise<void> {
    const queries = this.sequelize.getQueryInterface();
    const t = transaction as Transaction & SequelizeTransactionEnd;
    try {
      await (commit
        ? queries.commitTransaction(transaction, { logging: false })
        : queries.rollbackTransaction(transaction, { logging: false }));
      t.cleanup();
    } catch (e) {
      await t.forceCleanup();
      throw e;
    }
  }

  private async control(sql: string): Promise<void> {
    await this.sequelize.query(sql, { type: 'RAW', raw: true, logging: false });
  }
}
