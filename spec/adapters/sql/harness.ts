/**
 * One database per engine for the SQL adapter tests: a private PostgreSQL or MariaDB server
 * (servers.ts) or a SQLite file in a temp directory; the SQL_* parameters a service needs to reach it;
 * a direct Sequelize connection for setting up and checking tables behind the service's back; and
 * the engine-specific DDL the tests share.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { QueryTypes, Sequelize } from 'sequelize';
import type { DbServer } from './servers.js';
import { mariadbAvailable, mariadbServer, postgresBin, postgresServer } from './servers.js';
import { tempDir } from '../../temp.js';

export type TestEngine = 'postgres' | 'mariadb' | 'sqlite';
export const TEST_ENGINES: TestEngine[] = ['postgres', 'mariadb', 'sqlite'];

export interface EngineHarness {
  engine: TestEngine;
  server?: DbServer;
  /** SQL_ENGINE, SQL_SERVER, SQL_PORT, SQL_DATABASE, SQL_USERNAME, SQL_PASSWORD for a service. */
  params: Record<string, string>;
  /** The password, to check it never appears in logs ('' for SQLite). */
  password: string;
  direct: Sequelize;
  /** Runs SQL directly (no bound values). */
  exec(sql: string): Promise<void>;
  /** Rows of a direct query. */
  rows<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /** An auto-increment primary key column definition. */
  serial: string;
  close(): Promise<void>;
}

export function engineAvailable(engine: TestEngine): boolean {
  if (engine === 'postgres') return postgresBin() !== undefined;
  if (engine === 'mariadb') return mariadbAvailable();
  return true;
}

export async function openEngine(
  engine: TestEngine,
  opts: { logStatements?: boolean; binlog?: boolean } = {},
): Promise<EngineHarness> {
  const tmp = tempDir('hn-sql-');
  let server: DbServer | undefined;
  let params: Record<string, string>;
  let direct: Sequelize;
  let serial: string;
  if (engine === 'sqlite') {
    const file = join(tmp, 'test.db');
    params = { SQL_ENGINE: 'sqlite', SQL_DATABASE: file };
    direct = new Sequelize({ dialect: 'sqlite', storage: file, logging: false });
    serial = 'id INTEGER PRIMARY KEY AUTOINCREMENT';
  } else {
    server = engine === 'postgres' ? await postgresServer(opts) : await mariadbServer(opts);
    // the PostgreSQL password comes from a file:// secret, the MariaDB one inline
    const pwfile = join(tmp, 'password');
    writeFileSync(pwfile, `${server.password}\n`);
    params = {
      SQL_ENGINE: engine,
      SQL_SERVER: '127.0.0.1',
      SQL_PORT: String(server.port),
      SQL_DATABASE: server.database,
      SQL_USERNAME: server.user,
      SQL_PASSWORD: engine === 'postgres' ? `file://${pwfile}` : server.password,
    };
    direct = new Sequelize(server.database, server.user, server.password, {
      dialect: engine === 'postgres' ? 'postgres' : 'mysql',
      host: '127.0.0.1',
      port: server.port,
      logging: false,
      pool: { max: 2 },
    });
    serial = engine === 'postgres' ? 'id SERIAL PRIMARY KEY' : 'id INT AUTO_INCREMENT PRIMARY KEY';
  }
  return {
    engine,
    server,
    params,
    password: server?.password ?? '',
    direct,
    serial,
    async exec(sql) {
      await direct.query(sql, { type: QueryTypes.RAW });
    },
    async rows<T>(sql: string) {
      return (await direct.query(sql, { type: QueryTypes.SELECT })) as T[];
    },
    async close() {
      await direct.close().catch(() => undefined);
      await server?.remove();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
