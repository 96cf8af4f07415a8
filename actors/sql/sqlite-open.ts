/**
 * SQLite's one connection opened on the driver itself, as Sequelize's SQLite connection manager opens
 * it (read-write, created if missing, foreign keys on), so the SQL service can open the file, run
 * SQL_INITFILE and read the catalog before Sequelize is loaded (Sequelize and its
 * dependencies were close to half of a node's CPU until ready). When Sequelize loads, this connection
 * is handed to its manager (`adopt`), so every later statement — and an in-memory database, which
 * exists only on its connection — uses the same one.
 */
import type { Database as Sqlite3Database } from 'sqlite3';

export type SqliteDriverConnection = Sqlite3Database;

/** Opens the file (its directory already made, database.ts); rejects with the driver's error. */
export async function openSqlite(storage: string): Promise<SqliteDriverConnection> {
  // sqlite3 is CommonJS: Sequelize's `require('sqlite3')` later finds this same module in the cache
  const { default: sqlite3 } = await import('sqlite3');
  const connection = await new Promise<SqliteDriverConnection>((resolve, reject) => {
    const opened: SqliteDriverConnection = new sqlite3.Database(
      storage,
      sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE,
      (e) => (e ? reject(e) : resolve(opened)),
    );
  });
  // what Sequelize runs on every connection it opens (its `foreignKeys` option is left at its default)
  await new Promise<void>((resolve, reject) =>
    connection.run('PRAGMA FOREIGN_KEYS=ON', (e) => (e ? reject(e) : resolve())),
  );
  return connection;
}

/** Hands the connection to Sequelize's SQLite manager, which keeps one per storage (key 1 in memory, else 'default'). */
export function adopt(connectionManager: unknown, storage: string, connection: SqliteDriverConnection): void {
  const manager = connectionManager as { connections?: Record<string, unknown> };
  if (manager.connections) manager.connections[storage === ':memory:' ? 1 : 'default'] = connection;
}

/** SELECT-like statements (rows back) on the connection, values by `$name`. */
export function allOn(
  connection: SqliteDriverConnection,
  sql: string,
  bind: Record<string, unknown>,
): Promise<unknown[]> {
  const values: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(bind)) values[`$${k}`] = v;
  return new Promise((resolve, reject) => connection.all(sql, values, (e, rows) => (e ? reject(e) : resolve(rows))));
}

/** A statement without values (SQL_INITFILE); resolves as Sequelize's INSERT type does: [lastID, changes]. */
export function runOn(connection: SqliteDriverConnection, sql: string): Promise<[number, number]> {
  return new Promise((resolve, reject) =>
    connection.run(sql, function (e) {
      if (e) reject(e);
      else resolve([this.lastID, this.changes]);
    }),
  );
}
