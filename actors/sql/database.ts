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
 */
import type { Transaction } from 'sequelize';
import { QueryTypes, Sequelize } from 'sequelize';
import type { DatabaseOptions } from './connection-options.js';
import { sequelizeOptions } from './connection-options.js';
import type { HiveError } from '../../protocol/errors.js';
import { BadInputError, TimeoutError } from '../../protocol/errors.js';
import type { Deadline } from '../shared/deadlines.js';
import { Deadlines } from '../shared/deadlines.js';
import { mapDbError } from './db-errors.js';
import { DIRECT_FROM, runDirect } from './driver-direct.js';
import type { Dialect } from './dialect.js';
import { dialectOf } from './dialect.js';
import type { Row } from './results.js';
import { upsertCounts } from './rows.js';
import type { PlanKind } from './statement.js';

/**
 * The values of a statement, as Sequelize takes them: by name (`$name` in the text, an object) or by
 * position (`$1`…, an array; multi-row statements, rows.ts).
 */
export type Bind = Record<string, unknown> | unknown[];

/** What a write produced; `inserted`/`updated` for an UPSERT where the engine tells them apart (rows.ts). */
export interface WriteOutcome {
  affected: number;
  insertId?: number;
  inserted?: number;
  updated?: number;
}

/** What a statement produced. */
export type Outcome = { rows: Row[]; columns: string[] } | WriteOutcome;

/** Told how a statement ended: its outcome, or the failure with its Code. */
export type StatementDone = (error: HiveError | undefined, outcome?: Outcome) => void;

/** The Sequelize query type that makes each dialect report what a statement did. */
function queryTypeOf(dialect: Dialect, kind: PlanKind, sql: string): string {
  if (kind === 'select' || kind === 'query' || dialect !== 'sqlite') return QueryTypes.RAW;
  // SQLite's driver reports changes only for statements sequelize runs with `run`, chosen by type
  const verb = kind === 'exec' ? (/^\s*(insert|update|delete)\b/i.exec(sql)?.[1]?.toLowerCase() ?? 'other') : kind;
  return verb === 'insert' || verb === 'upsert' ? QueryTypes.INSERT : verb === 'update' ? QueryTypes.BULKUPDATE : verb === 'delete' ? QueryTypes.BULKDELETE : QueryTypes.RAW;
}

function columnsOf(dialect: Dialect, meta: unknown): string[] {
  // PostgreSQL: pg Result (one per statement) with fields; Oracle: metaData [{ name }]; others: none
  let fields: unknown;
  if (dialect === 'postgres') fields = (Array.isArray(meta) ? meta[meta.length - 1] : (meta as { fields?: unknown } | undefined))?.fields;
  else if (dialect === 'oracle') fields = meta;
  if (!Array.isArray(fields)) return [];
  return fields.map((f) => (f as { name?: unknown }).name).filter((n): n is string => typeof n === 'string');
}

/**
 * SQLite compares a text value with a number as unequal (a bound '2' is never equal to COUNT(*)), and
 * every Data value is text: bind text that is exactly a number's canonical form ('42', '-1.5', not
 * '007' or '1e3') as that number. Columns with TEXT affinity turn it back into the same text.
 */
export function sqliteBind<B extends Bind>(bind: B): B {
  if (Array.isArray(bind)) return bind.map(sqliteValue) as B;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(bind)) out[k] = sqliteValue(v);
  return out as B;
}

function sqliteValue(v: unknown): unknown {
  return typeof v === 'string' && /^-?\d/.test(v) && v.length <= 16 && String(Number(v)) === v ? Number(v) : v;
}

/** Affected rows and insert id from the shapes the dialects return for writes. */
export function writeOutcome(result: unknown): WriteOutcome {
  if (typeof result === 'number') return { affected: result };
  if (!Array.isArray(result)) return { affected: 0 };
  const [first, meta] = result as [unknown, unknown];
  if (typeof meta === 'number') {
    // INSERT on MySQL ([insertId, affectedRows]) and SQLite ([lastID, changes]); MS SQL RAW ([rows, rowCount])
    return { affected: meta, ...(typeof first === 'number' && first > 0 ? { insertId: first } : {}) };
  }
  const metas = Array.isArray(meta) ? meta : [meta];
  let affected = 0;
  let insertId: number | undefined;
  for (const m of metas as Record<string, unknown>[]) {
    if (!m || typeof m !== 'object') continue;
    const n = m.rowCount ?? m.affectedRows ?? m.changes ?? m.rowsAffected;
    if (typeof n === 'number') affected += n;
    const id = m.insertId ?? m.lastID;
    if (typeof id === 'number' && id > 0) insertId = id;
  }
  return insertId === undefined ? { affected } : { affected, insertId };
}

/** The Outcome of a statement from what sequelize returned for it. */
function outcomeOf(dialect: Dialect, kind: PlanKind, result: unknown): Outcome {
  if (kind === 'upsert') return upsertCounts(dialect, result) ?? { affected: writeOutcome(result).affected };
  if (kind !== 'select' && kind !== 'query') return writeOutcome(result);
  const [rows, meta] = Array.isArray(result) ? (result as [unknown, unknown]) : [[], undefined];
  return { rows: Array.isArray(rows) ? (rows as Row[]) : [], columns: columnsOf(dialect, meta) };
}

/** Engine-side grace of the client-side timer: the server's own cancel should answer first. */
const CLIENT_GRACE_MS = 2000;

export class Database {
  readonly sequelize: Sequelize;
  readonly dialect: Dialect;
  private readonly deadlines = new Deadlines();

  constructor(readonly options: DatabaseOptions) {
    this.dialect = dialectOf(options.engine);
    this.sequelize = new Sequelize(sequelizeOptions(options));
  }

  /** Where the service connects, for logs (never the password). */
  describe(): string {
    const o = this.options;
    if (this.dialect === 'sqlite') return `sqlite database ${o.database.trim() === '' ? '(in memory)' : `'${o.database}'`}`;
    const where = o.protocol === 'unix' ? `socket ${o.host}` : `${o.host}:${o.port}`;
    return `${o.engine} database '${o.database}' at ${where}${o.username ? ` as '${o.username}'` : ''}`;
  }

  /** Opens (and returns) one connection to check the database answers. */
  async check(): Promise<void> {
    try {
      await this.sequelize.authenticate({ logging: false });
    } catch (e) {
      throw mapDbError(e, this.dialect, this.options);
    }
  }

  /**
   * Runs one statement with bound values; failures come back as HiveErrors with their Code. Within
   * `transaction` (transaction.ts) it runs on that transaction's connection.
   */
  run(kind: PlanKind, sql: string, bind: Bind, transaction?: Transaction): Promise<Outcome> {
    return new Promise((resolve, reject) => this.submit(kind, sql, bind, (error, outcome) => (error ? reject(error) : resolve(outcome!)), transaction));
  }

  /**
   * `run` for the statement path: `done` is told once, and nothing is awaited in between — no async
   * function, no promise of its own — so a statement costs the service one reaction to the query.
   */
  submit(kind: PlanKind, sql: string, bind: Bind, done: StatementDone, transaction?: Transaction): void {
    const type = queryTypeOf(this.dialect, kind, sql);
    // PostgreSQL text cannot hold NUL, and Sequelize would silently bind it as the two characters \0
    if (this.dialect === 'postgres') {
      for (const v of Array.isArray(bind) ? bind : Object.values(bind)) {
        if (typeof v === 'string' && v.includes('\0')) return done(new BadInputError('a value contains a NUL character, which PostgreSQL cannot store in text'));
      }
    }
    const values = this.dialect === 'sqlite' ? sqliteBind(bind) : bind;
    const direct = Array.isArray(values) && values.length >= DIRECT_FROM && (kind === 'insert' || kind === 'upsert') ? runDirect(this.sequelize, this.dialect, sql, values, transaction) : undefined;
    const query = direct ?? (this.sequelize.query(sql, { bind: values, type, raw: true, logging: false, ...(transaction ? { transaction } : {}) }) as Promise<unknown>);
    const deadline = this.deadlineFor(done);
    void query.then(
      (result) => {
        if (deadline && !this.deadlines.settle(deadline)) return;
        done(undefined, outcomeOf(this.dialect, kind, result));
      },
      (e: unknown) => {
        // the late failure of a statement that already timed out is dropped
        if (deadline && !this.deadlines.settle(deadline)) return;
        done(mapDbError(e, this.dialect, this.options));
      },
    );
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
      const cm = this.sequelize.connectionManager as unknown as { getConnection(o: object): Promise<{ interrupt?: () => void }> };
      (await cm.getConnection({})).interrupt?.();
    } catch {
      // nothing to interrupt
    }
  }

  /** Pool figures for the status page. */
  pool(): Record<string, number> {
    const pool = (this.sequelize.connectionManager as unknown as { pool?: { size?: number; available?: number; using?: number; waiting?: number } }).pool;
    if (!pool || typeof pool.size !== 'number') return {};
    return { size: pool.size, available: pool.available ?? 0, using: pool.using ?? 0, waiting: pool.waiting ?? 0 };
  }

  close(): Promise<void> {
    return this.sequelize.close();
  }
}
