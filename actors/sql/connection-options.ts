/**
 * The connection settings of the SQL service: from the configuration (whose SQL_PORT default is
 * already the engine's usual port, config/sql.ts) to the Sequelize options of each engine — pool size and acquire timeout,
 * the server-side statement timeout, unix sockets, and MySQL's FOUND_ROWS so UPDATE counts matched rows.
 * The password goes only into the driver's options, never into text that could be logged.
 */
import type { Options } from 'sequelize';
import { ConfigError } from '../../protocol/errors.js';
import type { Engine } from './dialect.js';
import { dialectOf } from './dialect.js';

export interface DatabaseOptions {
  engine: Engine;
  host: string;
  port: number;
  /** 'tcp', or 'unix' with `host` the socket (PostgreSQL: its directory). */
  protocol: 'tcp' | 'unix';
  database: string;
  username: string;
  password: string;
  poolSize: number;
  /** 0 = no statement timeout. */
  timeoutMs: number;
  acquireTimeoutMs: number;
}

/** The connection options of a configuration; ConfigError for values that cannot work. */
export function databaseOptions(c: {
  SQL_ENGINE: string;
  SQL_SERVER: string;
  SQL_PORT: number;
  SQL_PROTOCOL: string;
  SQL_DATABASE: string;
  SQL_USERNAME: string;
  SQL_PASSWORD: string;
  SQL_POOLSIZE: number;
  SQL_TIMEOUT: number;
  SQL_ACQUIRETIMEOUT: number;
}): DatabaseOptions {
  const engine = c.SQL_ENGINE as Engine;
  const protocol = c.SQL_PROTOCOL.trim().toLowerCase();
  if (protocol !== 'tcp' && protocol !== 'unix')
    throw new ConfigError(`SQL_PROTOCOL: '${c.SQL_PROTOCOL}' is not 'tcp' or 'unix'`);
  if (protocol === 'unix' && !['postgres', 'mysql', 'mariadb'].includes(engine))
    throw new ConfigError(`SQL_PROTOCOL: 'unix' sockets are supported for postgres, mysql and mariadb, not ${engine}`);
  if (protocol === 'unix' && c.SQL_SERVER.trim() === '')
    throw new ConfigError("SQL_PROTOCOL 'unix' needs SQL_SERVER: the socket path (PostgreSQL: the socket directory)");
  if (engine !== 'sqlite' && c.SQL_DATABASE.trim() === '' && engine !== 'mysql' && engine !== 'mariadb')
    throw new ConfigError(`SQL_DATABASE: the ${engine} engine needs a database name`);
  if (c.SQL_ACQUIRETIMEOUT <= 0) throw new ConfigError('SQL_ACQUIRETIMEOUT must be above 0');
  return {
    engine,
    host: c.SQL_SERVER.trim() || 'localhost',
    port: c.SQL_PORT,
    protocol,
    database: c.SQL_DATABASE,
    username: c.SQL_USERNAME,
    password: c.SQL_PASSWORD,
    poolSize: c.SQL_POOLSIZE,
    timeoutMs: c.SQL_TIMEOUT,
    acquireTimeoutMs: c.SQL_ACQUIRETIMEOUT,
  };
}

/** The SQLite file of SQL_DATABASE, as Sequelize's storage and the driver open it: empty is a database in memory. */
export const sqliteStorage = (database: string): string => (database.trim() === '' ? ':memory:' : database);

export function sequelizeOptions(o: DatabaseOptions): Options {
  const dialect = dialectOf(o.engine);
  const base: Options = {
    dialect,
    logging: false,
    benchmark: false,
    pool: { max: o.poolSize, min: 0, acquire: o.acquireTimeoutMs, idle: 10_000, evict: 1_000 },
    // sequelize retries only errors matching these; a busy SQLite file is worth a few retries
    retry: { max: 3, match: [/SQLITE_BUSY/] },
  };
  if (dialect === 'sqlite') return { ...base, storage: sqliteStorage(o.database) };
  const server: Options = {
    ...base,
    database: o.database,
    username: o.username,
    password: o.password,
    host: o.host,
    port: o.port,
  };
  const hooks: Options['hooks'] = {};
  switch (o.engine) {
    case 'postgres':
      // a unix socket is a directory given as host; pg finds .s.PGSQL.<port> in it
      return {
        ...server,
        dialectOptions: {
          ...(o.timeoutMs > 0 ? { statement_timeout: o.timeoutMs } : {}),
          connectionTimeoutMillis: o.acquireTimeoutMs,
        },
      };
    case 'mysql':
    case 'mariadb': {
      const setting =
        o.engine === 'mariadb' ? `max_statement_time = ${o.timeoutMs / 1000}` : `max_execution_time = ${o.timeoutMs}`;
      if (o.timeoutMs > 0) hooks.afterConnect = (connection: unknown) => mysqlSet(connection, `SET SESSION ${setting}`);
      // FOUND_ROWS: UPDATE reports the rows matched, as PostgreSQL and SQLite do (sequelize turns it off)
      // maxPreparedStatements: mysql2 prepares each distinct text once per connection and keeps up to
      // 16000; a batch's text differs with its row count, so the pool's total is kept below the
      // server's max_prepared_stmt_count (16382 by default)
      const maxPreparedStatements = Math.max(16, Math.floor(8000 / o.poolSize));
      return {
        ...server,
        hooks,
        dialectOptions: {
          flags: 'FOUND_ROWS',
          maxPreparedStatements,
          connectTimeout: o.acquireTimeoutMs,
          ...(o.protocol === 'unix' ? { socketPath: o.host } : {}),
        },
      };
    }
    case 'mssql':
      return {
        ...server,
        dialectOptions: {
          options: { requestTimeout: o.timeoutMs > 0 ? o.timeoutMs : 0, connectTimeout: o.acquireTimeoutMs },
        },
      };
    case 'oracle':
      if (o.timeoutMs > 0)
        hooks.afterConnect = (connection: unknown) =>
          void ((connection as { callTimeout: number }).callTimeout = o.timeoutMs);
      return { ...server, hooks };
    case 'sqlite':
      return base;
  }
}

function mysqlSet(connection: unknown, sql: string): Promise<void> {
  return new Promise((resolve, reject) => {
    (connection as { query(sql: string, cb: (e: Error | null) => void): void }).query(sql, (e) =>
      e ? reject(e) : resolve(),
    );
  });
}
