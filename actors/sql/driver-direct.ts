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

/** Values from which a statement goes to the driver directly (below, Sequelize's cost is small). */
export const DIRECT_FROM = 256;

interface PgConnection {
  query(text: string, values: unknown[], done: (e: Error | null, result: { rows: unknown[] }) => void): void;
}
interface MysqlConnection {
  execute(text: string, values: unknown[], done: (e: Error | null, result: unknown) => void): void;
}
interface SqliteConnection {
  run(text: string, values: unknown[], done: (this: { lastID: number; changes: number }, e: Error | null) => void): void;
}
interface Pool {
  getConnection(options: object): Promise<unknown>;
  releaseConnection(connection: unknown): void;
}

/** Runs `sql` with `values` on the driver; undefined for an engine that has no direct path (SQL Server, Oracle). */
export function runDirect(sequelize: Sequelize, dialect: Dialect, sql: string, values: unknown[], transaction?: Transaction): Promise<unknown> | undefined {
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

function onConnection(dialect: 'postgres' | 'mysql' | 'sqlite', connection: unknown, sql: string, values: unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    switch (dialect) {
      case 'postgres':
        return (connection as PgConnection).query(sql, values, (e, result) => (e ? reject(e) : resolve([result.rows, result])));
      case 'mysql':
        return (connection as MysqlConnection).execute(nativeText(sql), values, (e, result) => (e ? reject(e) : resolve([result, result])));
      case 'sqlite':
        return (connection as SqliteConnection).run(nativeText(sql), values, function (e) {
          if (e) reject(e);
          else resolve([this.lastID, this.changes]);
        });
    }
  });
}
