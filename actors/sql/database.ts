/**
 * One database behind a Sequelize connection pool, and the single way statements reach it:
 * `sequelize.query(text, { bind, type })` (model methods inline values; query with bind does not:
 * docs/ARCHITECTURE.md, Library choices) — or, for a multi-row statement of many values, the driver
 * on a connection of that pool (driver-direct.ts). Connections are opened lazily and re-opened after an
 * outage by the pool, so a database that is down at start or restarts later only fails the
 * statements sent meanwhile (502).
 *
 * Statement timeout, per engine: PostgreSQL `statement_timeout`, MariaDB `max_statement_time`, MySQL
 * `max_execution_time` (SELECT only), SQL Server `requestTimeout`, Oracle `callTimeout` — the server or
 * driver cancels the statement. A client-side deadline (the same limit plus a grace) backs them up; on
 * SQLite it is the only limit, and the statement is interrupted when it passes.
 *
 * Sequelize is loaded when first needed, not at start (it and its dependencies were close
 * to half of a node's CPU until ready). SQLite opens its connection on the driver (sqlite-open.ts) and
 * runs the start's statements there — SQL_INITFILE and the catalog reads — so a SQLite service is
 * ready without it; the service starts loading it in the background once the node is ready
 * (`preload`), and a statement that needs it before then waits for it. PostgreSQL, MySQL/MariaDB,
 * SQL Server and Oracle load it at start: their check and everything after run on its pool.
 */
import { dirname } from 'node:path';
import type { Sequelize, Transaction } from 'sequelize';
import type { DatabaseOptions } from './connection-options.js';
import { sequelizeOptions, sqliteStorage } from './connection-options.js';
import type { HiveError } from '../../protocol/errors.js';
import { BadInputError, TimeoutError, UpstreamError } from '../../protocol/errors.js';
import type { Deadline } from '../shared/deadlines.js';
import { Deadlines } from '../shared/deadlines.js';
import { makeDirectory } from '../shared/make-directory.js';
import { mapDbError } from './db-errors.js';
import { DIRECT_FROM, DirectSelect, runDirect, sqliteBusy } from './driver-direct.js';
import type { Dialect } from './dialect.js';
import type { Bind, Outcome } from './outcome.js';
import { outcomeOf, queryTypeOf, sqliteBind } from './outcome.js';
import { dialectOf } from './dialect.js';
import { SqliteGate } from './sqlite-gate.js';
import type { SqliteDriverConnection } from './sqlite-open.js';
import { adopt, allOn, openSqlite, runOn } from './sqlite-open.js';
import { displaySql } from './placeholders.js';
import type { PlanKind } from './statement.js';
import type { EachDone, TransactionDone, TransactionStep } from './transaction.js';
import { TransactionRunner } from './transaction.js';

/** Told how a statement ended: its outcome, or the failure with its Code. */
export type StatementDone = (error: HiveError | undefined, outcome?: Outcome) => void;

/** Engine-side grace of the client-side timer: the server's own cancel should answer first. */
const CLIENT_GRACE_MS = 2000;

/** PostgreSQL text cannot hold NUL, and Sequelize would silently bind it as the two characters \0. */
function nulRefusal(dialect: Dialect, bind: Bind): BadInputError | undefined {
  if (dialect !== 'postgres') return undefined;
  for (const v of Object.values(bind)) {
    if (typeof v === 'string' && v.includes('\0'))
      return new BadInputError('a value contains a NUL character, which PostgreSQL cannot store in text');
  }
  return undefined;
}

/** What is made once Sequelize is loaded. */
interface Orm {
  sequelize: Sequelize;
  transactions: TransactionRunner;
  /** The statement path's SELECTs on the driver (driver-direct.ts: why, and what Sequelize still does). */
  selects: DirectSelect | undefined;
}

export class Database {
  readonly dialect: Dialect;
  private readonly deadlines = new Deadlines();
  /** SQLite: keeps raw transactions and other statements apart on the one connection. */
  private readonly gate: SqliteGate | undefined;
  /** Set once Sequelize is loaded; until then statements that need it wait for `loading`. */
  private orm: Orm | undefined;
  private loading: Promise<Orm> | undefined;
  /** SQLite before Sequelize: the connection opened on the driver (handed to Sequelize when it loads). */
  private sqlite: Promise<SqliteDriverConnection> | undefined;
  private closed = false;

  constructor(readonly options: DatabaseOptions) {
    this.dialect = dialectOf(options.engine);
    // Sequelize makes a SQLite file's directory with Node's recursive mkdir, which spins forever where a
    // parent cannot hold children (under /proc): made here, one level at a time, with a one-line refusal
    const file = options.database.trim();
    if (this.dialect === 'sqlite' && file !== '' && !file.startsWith(':') && !file.startsWith('file:'))
      makeDirectory(dirname(file), 'SQL_DATABASE');
    if (this.dialect === 'sqlite') this.gate = new SqliteGate();
  }

  /** Sequelize, loaded and set up at the first call (SQLite: given the connection already open). */
  private withOrm(): Promise<Orm> {
    return (this.loading ??= this.loadOrm());
  }

  private async loadOrm(): Promise<Orm> {
    const { Sequelize } = await import('sequelize');
    const sequelize = new Sequelize(sequelizeOptions(this.options));
    // read after the import: a connection opened meanwhile is the one handed over, never a second one
    const open = this.sqlite;
    if (open) {
      // a connection that failed to open is not handed over: Sequelize opens (and reports) its own
      const connection = await open.catch(() => undefined);
      if (connection) adopt(sequelize.connectionManager, sqliteStorage(this.options.database), connection);
    }
    const transactions = new TransactionRunner({
      sequelize,
      dialect: this.dialect,
      options: this.options,
      deadlines: this.deadlines,
      query: (step, transaction) =>
        this.query(step.kind, step.sql, step.bind, transaction).then((result) =>
          outcomeOf(this.dialect, step.kind, result),
        ),
      interruptSqlite: () => this.interruptSqlite(),
    });
    this.orm = { sequelize, transactions, selects: DirectSelect.for(sequelize, this.dialect, this.options.poolSize) };
    return this.orm;
  }

  /**
   * Starts loading Sequelize now, off the statement path (after the node is ready), so the first
   * statement that needs it rarely waits; a failure is left for that statement to report.
   */
  preload(): void {
    if (!this.closed) this.withOrm().catch(() => undefined);
  }

  /** SQLite's connection on the driver, opened once (only before Sequelize is loaded). */
  private sqliteConnection(): Promise<SqliteDriverConnection> {
    if (!this.sqlite) {
      this.sqlite = openSqlite(sqliteStorage(this.options.database));
      // a failed open is tried again at the next call, as Sequelize's manager would
      const opening = this.sqlite;
      opening.catch(() => this.sqlite === opening && !this.orm && (this.sqlite = undefined));
    }
    return this.sqlite;
  }

  /** Where the service connects, for logs (never the password). */
  describe(): string {
    const o = this.options;
    if (this.dialect === 'sqlite')
      return `sqlite database ${o.database.trim() === '' ? '(in memory)' : `'${o.database}'`}`;
    const where = o.protocol === 'unix' ? `socket ${o.host}` : `${o.host}:${o.port}`;
    return `${o.engine} database '${o.database}' at ${where}${o.username ? ` as '${o.username}'` : ''}`;
  }

  /** Opens (and returns) one connection to check the database answers. */
  async check(): Promise<void> {
    if (this.dialect === 'sqlite' && !this.orm) {
      try {
        // what `authenticate` did: open the file and run a statement on it
        await allOn(await this.sqliteConnection(), 'SELECT 1+1 AS result', {});
      } catch (e) {
        // worded as under Sequelize, whose manager wraps an open failure as a connection error
        throw new UpstreamError(`database unavailable: ${(e as Error).message}`, { cause: e });
      }
      return;
    }
    try {
      await (await this.withOrm()).sequelize.authenticate({ logging: false });
    } catch (e) {
      throw mapDbError(e, this.dialect, this.options);
    }
  }

  /**
   * Runs one statement with bound values; failures come back as HiveErrors with their Code.
   */
  run(kind: PlanKind, sql: string, bind: Bind): Promise<Outcome> {
    return new Promise((resolve, reject) =>
      this.submit(kind, sql, bind, (error, outcome) => (error ? reject(error) : resolve(outcome!))),
    );
  }

  /**
   * `run` for what the service itself runs — SQL_INITFILE's statements ('exec', no values) and the
   * catalog's reads ('query') — which on SQLite go to the driver's connection while Sequelize is not
   * loaded; a busy file goes to Sequelize, which retries it.
   */
  runOwn(kind: 'exec' | 'query', sql: string, bind: Record<string, unknown>): Promise<Outcome> {
    return new Promise((resolve, reject) =>
      this.submit(kind, sql, bind, (error, outcome) => (error ? reject(error) : resolve(outcome!)), true),
    );
  }

  /**
   * `run` for the statement path: `done` is told once, and nothing is awaited in between — no async
   * function, no promise of its own — so a statement costs the service one reaction to the query.
   */
  submit(kind: PlanKind, sql: string, bind: Bind, done: StatementDone, own = false): void {
    const refused = nulRefusal(this.dialect, bind);
    if (refused) return done(refused);
    const gate = this.gate;
    if (!gate) return this.send(kind, sql, bind, done, { own });
    // the gate opens when the statement ends, which may be after a timeout has answered it
    if (gate.enter()) return this.send(kind, sql, bind, done, { own, ended: gate.statementEnded });
    gate.wait(() => this.send(kind, sql, bind, done, { own, ended: gate.statementEnded }));
  }

  /** `own`: a statement of the service's own (runOwn); `ended`: told when the statement ends, answered or not (the gate). */
  private send(
    kind: PlanKind,
    sql: string,
    bind: Bind,
    done: StatementDone,
    how: { own: boolean; ended?: () => void },
  ): void {
    const { own, ended } = how;
    const query =
      own && this.dialect === 'sqlite' && !this.orm && !Array.isArray(bind)
        ? this.onDriver(kind, sql, bind)
        : this.orm
          ? this.query(kind, sql, bind, undefined)
          : this.withOrm().then(() => this.query(kind, sql, bind, undefined));
    const deadline = this.deadlineFor(done);
    void query.then(
      (result) => {
        ended?.();
        if (deadline && !this.deadlines.settle(deadline)) return;
        done(undefined, outcomeOf(this.dialect, kind, result));
      },
      (e: unknown) => {
        ended?.();
        // the late failure of a statement that already timed out is dropped
        if (deadline && !this.deadlines.settle(deadline)) return;
        done(mapDbError(e, this.dialect, this.options));
      },
    );
  }

  /**
   * Runs the statements of a raw transaction (transaction.ts) on one connection, all or nothing;
   * `done` is told once, with each statement's outcome when it committed.
   */
  transaction(steps: readonly TransactionStep[], done: TransactionDone): void {
    this.transactionOf(steps, done, (runner) => runner.run(steps, done));
  }

  /** Runs the statements in one transaction, each in its own savepoint: one the database refuses is undone alone (transaction.ts, runEach). */
  transactionEach(steps: readonly TransactionStep[], done: EachDone): void {
    this.transactionOf(steps, done, (runner) => runner.runEach(steps, done));
  }

  private transactionOf(
    steps: readonly TransactionStep[],
    done: (error: Error) => void,
    start: (runner: TransactionRunner) => Promise<void>,
  ): void {
    for (const step of steps) {
      const refused = nulRefusal(this.dialect, step.bind);
      if (refused) return done(refused);
    }
    const run = (): Promise<void> =>
      this.withOrm().then(
        (orm) => start(orm.transactions),
        (e: unknown) => done(mapDbError(e, this.dialect, this.options)),
      );
    if (this.gate) this.gate.transaction(run);
    else void run();
  }

  /** The service's own SQLite statements on the driver's connection (runOwn). */
  private onDriver(kind: PlanKind, sql: string, bind: Record<string, unknown>): Promise<unknown> {
    const viaSequelize = (): Promise<unknown> => this.withOrm().then(() => this.query(kind, sql, bind, undefined));
    // the text as Sequelize would send it: its bind rewriting turns the `$$` of StatementText back into `$`
    const text = displaySql(sql);
    const direct = this.sqliteConnection().then((connection): Promise<unknown> =>
      kind === 'exec'
        ? runOn(connection, text)
        : allOn(connection, text, sqliteBind(bind)).then((rows) => [rows, undefined]),
    );
    return direct.catch((e: unknown) => (sqliteBusy(e) ? viaSequelize() : Promise.reject(e)));
  }

  /** A statement through Sequelize (loaded: `orm` is set). */
  private query(kind: PlanKind, sql: string, bind: Bind, transaction: Transaction | undefined): Promise<unknown> {
    const { sequelize, selects } = this.orm!;
    const type = queryTypeOf(this.dialect, kind, sql);
    const values = this.dialect === 'sqlite' ? sqliteBind(bind) : bind;
    // a batch's many values go to the driver itself (driver-direct.ts: Sequelize's binding grows too fast)
    const direct =
      Array.isArray(values) && values.length >= DIRECT_FROM && (kind === 'insert' || kind === 'upsert')
        ? runDirect(sequelize, this.dialect, sql, values, transaction)
        : undefined;
    if (direct) return direct;
    const viaSequelize = (): Promise<unknown> =>
      sequelize.query(sql, {
        bind: values,
        type,
        raw: true,
        logging: false,
        ...(transaction ? { transaction } : {}),
      }) as Promise<unknown>;
    const select = kind === 'select' && !transaction && !Array.isArray(values) ? selects?.run(sql, values) : undefined;
    if (!select) return viaSequelize();
    return this.dialect === 'sqlite'
      ? select.catch((e: unknown) => (sqliteBusy(e) ? viaSequelize() : Promise.reject(e)))
      : select;
  }

  /** The client-side deadline of a statement (none when SQL_TIMEOUT is 0). */
  private deadlineFor(done: StatementDone): Deadline | undefined {
    const ms = this.options.timeoutMs;
    if (ms <= 0) return undefined;
    const timedOut = (): void => done(new TimeoutError(`the statement did not finish within ${ms} ms`));
    if (this.dialect !== 'sqlite') return this.deadlines.start(ms + CLIENT_GRACE_MS, timedOut);
    return this.deadlines.start(ms, () => {
      timedOut();
      void this.interruptSqlite();
    });
  }

  /**
   * SQLite has no statement timeout: a timed-out statement would keep the one shared connection busy,
   * so it is interrupted (sqlite3_interrupt stops what runs on that connection now).
   */
  private async interruptSqlite(): Promise<void> {
    try {
      if (!this.orm) return (await this.sqlite)?.interrupt();
      const cm = this.orm.sequelize.connectionManager as unknown as {
        getConnection(o: object): Promise<{ interrupt?: () => void }>;
      };
      (await cm.getConnection({})).interrupt?.();
    } catch {
      // nothing to interrupt
    }
  }

  /** Pool figures for the status page. */
  pool(): Record<string, number> {
    if (!this.orm) return {};
    const pool = (
      this.orm.sequelize.connectionManager as unknown as {
        pool?: { size?: number; available?: number; using?: number; waiting?: number };
      }
    ).pool;
    if (!pool || typeof pool.size !== 'number') return {};
    return { size: pool.size, available: pool.available ?? 0, using: pool.using ?? 0, waiting: pool.waiting ?? 0 };
  }

  async close(): Promise<void> {
    this.closed = true;
    // a load under way finishes first, so what it opened is closed too
    const orm = this.loading ? await this.loading.catch(() => undefined) : undefined;
    if (orm) {
      orm.selects?.forget();
      return orm.sequelize.close();
    }
    const connection = await this.sqlite?.catch(() => undefined);
    this.sqlite = undefined;
    if (connection) await new Promise<void>((resolve) => connection.close(() => resolve()));
  }
}
