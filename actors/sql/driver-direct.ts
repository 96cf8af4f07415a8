/**
 * Multi-row statements (rows.ts) with many values go to the driver directly, on a connection of
 * Sequelize's pool (or of the transaction they belong to), not through `sequelize.query`:
 *
 * - SQLite: Sequelize hands SQLite even an array as named parameters, and SQLite finds each name by
 *   searching the statement's names one by one — 80,000 values took 15 s that way, milliseconds by
 *   position;
 * - PostgreSQL, MySQL/MariaDB: Sequelize's bind formatting runs a callback per value over the whole
 *   text, about 10 ms for 30,000 values: a quarter of what the driver itself takes for the rows.
 *
 * The text is what rows.ts builds for these engines: `$1`, `$2`, … in order of appearance and no
 * other `$`. It becomes the driver's own markers (PostgreSQL `$n` as they are, MySQL and SQLite `?`),
 * and the result gets the shape Sequelize gives a RAW (SQLite: INSERT) query, so it is read
 * like any other (database.ts outcomeOf). Errors are the driver's, which db-errors.ts reads as it
 * reads them under Sequelize's wrapper.
 */
import type { Sequelize, Transaction } from 'sequelize';
import type { Dialect } from './dialect.js';
import type { SqliteConnection as KeptConnection } from './sqlite-statements.js';
import { SqliteStatements } from './sqlite-statements.js';
import type { PgClient } from './pg-pipeline.js';
import { markIfBroken, PgPipeline } from './pg-pipeline.js';
import type { LaneDriver } from './select-lanes.js';
import { SelectLanes } from './select-lanes.js';

/** Values from which a statement goes to the driver directly (below, Sequelize's cost is small). */
export const DIRECT_FROM = 256;

interface PgConnection extends Pick<PgClient, '_invalid'> {
  query(text: string, values: unknown[], done: (e: Error | null, result: { rows: unknown[] }) => void): void;
}
interface MysqlConnection {
  execute(text: string, values: unknown[], done: (e: Error | null, result: unknown) => void): void;
  query(options: { sql: string }, done: (e: Error | null, result: unknown) => void): void;
}
interface SqliteConnection extends KeptConnection {
  run(
    text: string,
    values: unknown[],
    done: (this: { lastID: number; changes: number }, e: Error | null) => void,
  ): void;
}
interface Pool {
  getConnection(options: object): Promise<unknown>;
  releaseConnection(connection: unknown): void;
}

/** Runs `sql` with `values` on the driver; undefined for an engine that has no direct path (SQL Server, Oracle). */
export function runDirect(
  sequelize: Sequelize,
  dialect: Dialect,
  sql: string,
  values: unknown[],
  transaction?: Transaction,
): Promise<unknown> | undefined {
  if (dialect !== 'postgres' && dialect !== 'mysql' && dialect !== 'sqlite') return undefined;
  const pool = sequelize.connectionManager as unknown as Pool;
  const held = (transaction as unknown as { connection?: unknown } | undefined)?.connection;
  return (async () => {
    // SQLite: the one connection every statement of the instance uses (transaction.ts)
    const connection = held ?? (await pool.getConnection({}));
    try {
      return await onConnection(dialect, connection, sql, values);
    } finally {
      if (held === undefined && dialect !== 'sqlite') pool.releaseConnection(connection);
    }
  })();
}

/** Texts in the driver's markers, kept for the texts rows.ts keeps (the same string objects). */
const NATIVE_TEXTS = new Map<string, string>();
const NATIVE_TEXTS_KEPT = 32;

function nativeText(sql: string): string {
  let text = NATIVE_TEXTS.get(sql);
  if (text === undefined) {
    if (NATIVE_TEXTS.size >= NATIVE_TEXTS_KEPT) NATIVE_TEXTS.clear();
    // the markers run 1, 2, 3, … in the text (rows.ts): plain `?` binds them in order (SQLite also
    // reads `?N`, but parses a text of tens of thousands of them measurably slower)
    text = sql.replace(/\$\d+/g, '?');
    NATIVE_TEXTS.set(sql, text);
  }
  return text;
}

function onConnection(
  dialect: 'postgres' | 'mysql' | 'sqlite',
  connection: unknown,
  sql: string,
  values: unknown[],
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    switch (dialect) {
      case 'postgres':
        return (connection as PgConnection).query(sql, values, (e, result) =>
          e ? reject(e) : resolve([result.rows, result]),
        );
      case 'mysql':
        return (connection as MysqlConnection).execute(nativeText(sql), values, (e, result) =>
          e ? reject(e) : resolve([result, result]),
        );
      case 'sqlite':
        return (connection as SqliteConnection).run(nativeText(sql), values, function (e) {
          if (e) reject(e);
          else resolve([this.lastID, this.changes]);
        });
    }
  });
}

/**
 * mysql2 on a lane (select-lanes.ts): the connection keeps the SELECTs given it in its own queue and
 * writes the next as soon as it has read the answer to the last (the protocol has no pipelining).
 * Two in flight a lane: past that another connection works beside it — measured on 2 cores, ten
 * connections with three each ran at 1.2x a pool's rate, four with eight at 0.7x.
 */
const MYSQL_LANE: LaneDriver<MysqlConnection> = {
  depth: 2,
  taken: () => undefined,
  givenBack: () => undefined,
  run: (client, text, values, done) => client.execute(text, values, done),
};

/** Sequelize's own conversion of a text with `$name` binds into the driver's text and values (its dialect's Query class). */
type FormatBind = (
  sql: string,
  bind: Record<string, unknown>,
  dialect: string,
) => [string, unknown[] | Record<string, unknown>];

/** A statement text in the driver's form, and the bind names in the order of the driver's values. */
interface DriverText {
  text: string;
  names: string[];
}

/**
 * The SELECTs of the statement path (planner.ts) on the driver itself, on a connection of Sequelize's
 * pool: at concurrency 32 `sequelize.query` cost more than the query (the service reached
 * 0.55-0.79 of a raw pg Pool, 0.58 of mysql2's, and on SQLite 0.18 — Sequelize runs every SQLite
 * statement in `serialize()`, one after the other, and before a SELECT on a back-quoted table first
 * asks the table's column types, which a RAW query never uses). What Sequelize still does here is
 * what it is there for: the dialect's bind conversion (its own function, run once per text and bind
 * names, so text and values are exactly what it would send), the pool (acquire, release, re-open
 * after an outage), the connection settings (statement timeouts, type parsers) and, for any other
 * statement, everything else. The result has the shape a RAW `sequelize.query` gives, so database.ts
 * reads it as before; errors are the driver's, read by db-errors.ts as under Sequelize's wrapper.
 * SQLite runs its SELECTs side by side on the one connection (the gate in database.ts still keeps
 * them out of a raw transaction); a busy file (SQLITE_BUSY) goes back to `sequelize.query`, which
 * retries it as before.
 */
export class DirectSelect {
  private readonly formatBind: FormatBind;
  private readonly pool: Pool;
  private readonly texts = new Map<string, DriverText>();
  /** SQLite: prepared statements on Sequelize's one connection, kept once opened (its manager hands out the same one until closed). */
  private sqlite: SqliteStatements | undefined;
  /** PostgreSQL and MySQL: SELECTs with values on lanes of held connections (select-lanes.ts; PostgreSQL pipelined as named statements, pg-pipeline.ts). */
  private readonly lanes: SelectLanes<PgClient> | SelectLanes<MysqlConnection> | undefined;

  /** Undefined for an engine without this path (SQL Server, Oracle); `poolSize` is the most connections the pool lends. */
  static for(sequelize: Sequelize, dialect: Dialect, poolSize: number): DirectSelect | undefined {
    return dialect === 'postgres' || dialect === 'mysql' || dialect === 'sqlite'
      ? new DirectSelect(sequelize, dialect, poolSize)
      : undefined;
  }

  private constructor(
    sequelize: Sequelize,
    private readonly dialect: 'postgres' | 'mysql' | 'sqlite',
    poolSize: number,
  ) {
    this.formatBind = (
      sequelize as unknown as { dialect: { Query: { formatBindParameters: FormatBind } } }
    ).dialect.Query.formatBindParameters;
    this.pool = sequelize.connectionManager as unknown as Pool;
    if (dialect === 'postgres') this.lanes = new SelectLanes(this.pool, poolSize, new PgPipeline());
    else if (dialect === 'mysql') this.lanes = new SelectLanes(this.pool, poolSize, MYSQL_LANE);
  }

  run(sql: string, bind: Record<string, unknown>): Promise<unknown> {
    const { text, names } = this.driverText(sql, bind);
    if (this.dialect === 'sqlite') {
      const values: Record<string, unknown> = {};
      for (const name of names) values[`$${name}`] = bind[name];
      if (this.sqlite) return this.all(this.sqlite, text, values);
      return (this.pool.getConnection({}) as Promise<SqliteConnection>).then((connection) =>
        this.all((this.sqlite ??= new SqliteStatements(connection)), text, values),
      );
    }
    const values = names.map((name) => bind[name]);
    const lanes = this.lanes;
    if (lanes && values.length > 0) {
      const postgres = this.dialect === 'postgres';
      return new Promise((resolve, reject) =>
        lanes.select(text, values, (e, result) =>
          e ? reject(e) : resolve([postgres ? (result as { rows: unknown[] }).rows : result, result]),
        ),
      );
    }
    const dialect = this.dialect;
    const pool = this.pool;
    return (pool.getConnection({ type: 'SELECT' }) as Promise<PgConnection & MysqlConnection>).then(
      (connection) =>
        new Promise((resolve, reject) => {
          const settle = (e: Error | null, result?: unknown): void => {
            pool.releaseConnection(connection);
            if (!e)
              return resolve(
                dialect === 'postgres' ? [(result as { rows: unknown[] }).rows, result] : [result, result],
              );
            if (dialect === 'postgres') markIfBroken(connection, e);
            reject(e);
          };
          if (dialect === 'postgres') connection.query(text, values, settle);
          else if (values.length > 0) connection.execute(text, values, settle);
          else connection.query({ sql: text }, settle);
        }),
    );
  }

  /** Closed with the database: the next statement asks the manager again. */
  forget(): void {
    this.lanes?.forget();
    this.sqlite?.close();
    this.sqlite = undefined;
  }

  private all(statements: SqliteStatements, text: string, values: Record<string, unknown>): Promise<unknown> {
    return statements.all(text, values).then((rows) => [rows, undefined]);
  }

  /**
   * Sequelize's conversion, once per text and set of names: run on a bind whose every value is its
   * own name, the values it returns are the names in the driver's order (SQLite: by name, as given).
   */
  private driverText(sql: string, bind: Record<string, unknown>): DriverText {
    const keys = Object.keys(bind);
    const key = keys.length === 0 ? sql : `${sql}\0${keys.join('\0')}`;
    let found = this.texts.get(key);
    if (found === undefined) {
      const [text, values] = this.formatBind(sql, Object.fromEntries(keys.map((k) => [k, k])), this.dialect);
      found = { text, names: Array.isArray(values) ? (values as string[]) : keys };
      if (this.texts.size >= NATIVE_TEXTS_KEPT) this.texts.clear();
      this.texts.set(key, found);
    }
    return found;
  }
}

/** Whether a direct SQLite statement failed only because another connection holds the file: Sequelize's path retries that. */
export const sqliteBusy = (e: unknown): boolean =>
  /SQLITE_BUSY/.test((e as { code?: string; message?: string }).code ?? (e as Error).message ?? '');
