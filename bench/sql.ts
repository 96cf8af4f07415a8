/**
 * SQL service throughput: a SELECT by primary key through a hive call to the SQL service (no gateway)
 * against the same SELECT run directly with `sequelize.query(sql, { bind })` (what the service is
 * built on) and with the raw driver (sqlite3, pg, mysql2 — a pool of 10 where the driver pools) in the
 * same process, at concurrency 1 and 32, interleaved rounds, medians. SQLite always; PostgreSQL and
 * MariaDB too when their binaries are installed (private servers on free ports, as the adapter tests
 * start them). Targets against the raw driver: >= 0.85 at concurrency 1; at 32, >= 1.0 on PostgreSQL
 * and MariaDB (their SELECTs run on pipelined lanes of held connections), >= 0.8 on SQLite.
 */
import { PassThrough } from 'node:stream';
import { createRequire } from 'node:module';
import mysql from 'mysql2/promise';
import { QueryTypes, Sequelize } from 'sequelize';
import sqlite3 from 'sqlite3';
import { makeMessage, mapOf } from '../protocol/message.js';
import { HiveNode } from '../node/node.js';
import type { DbServer } from '../spec/adapters/sql/servers.js';
import { mariadbServer, postgresServer } from '../spec/adapters/sql/servers.js';
import { drive, fmt, interleavedAll, report } from './lib.js';
import { seedKv, sqliteKv } from './support/sql-tables.js';
import { onEachEngine } from './support/sql-engines.js';

/** The little of pg's Pool the bench uses; loaded with require because the project carries no types for pg. */
interface PgPool {
  query(sql: string, values: string[]): Promise<{ rowCount: number | null }>;
  on(event: 'error', listener: (e: Error) => void): void;
  end(): Promise<void>;
}
const pg = createRequire(import.meta.url)('pg') as { Pool: new (options: Record<string, unknown>) => PgPool };

// 9 rounds: on 2 shared cores with the database server beside the node, 5 rounds left the median
// ratio swinging ±0.06 from run to run
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const ROWS = 1000;
const OPS: Record<number, number> = {
  1: Number(process.env.BENCH_OPS_1 ?? 2000),
  32: Number(process.env.BENCH_OPS_32 ?? 6000),
};

interface Target {
  label: string;
  params: Record<string, string>;
  direct: Sequelize;
  quote: string;
  /** The raw driver's name and one SELECT by id through it (resolves with the row count). */
  driver: string;
  rawSelect(sql: string, id: string): Promise<number>;
  cleanup(): Promise<void>;
}

async function sqliteTarget(): Promise<Target> {
  const { file, direct, remove } = await sqliteKv('hn-sqlbench-', ROWS);
  const db = new sqlite3.Database(file);
  const rawSelect = (sql: string, id: string): Promise<number> =>
    new Promise((resolve, reject) => db.all(sql, [id], (e, rows) => (e ? reject(e) : resolve(rows.length))));
  const cleanup = async (): Promise<void> => {
    await new Promise((r) => db.close(r));
    remove();
  };
  return {
    label: 'SQLite',
    params: { SQL_ENGINE: 'sqlite', SQL_DATABASE: file },
    direct,
    quote: '"',
    driver: 'sqlite3',
    rawSelect,
    cleanup,
  };
}

async function postgresTarget(): Promise<Target> {
  const server: DbServer = await postgresServer();
  const direct = new Sequelize(server.database, server.user, server.password, {
    dialect: 'postgres',
    host: '127.0.0.1',
    port: server.port,
    logging: false,
    pool: { max: 10 },
  });
  await seedKv(direct, 'id SERIAL PRIMARY KEY', ROWS);
  const pool = new pg.Pool({
    host: '127.0.0.1',
    port: server.port,
    user: server.user,
    password: server.password,
    database: server.database,
    max: 10,
  });
  // the server is shut down at the end while idle clients may still be closing: not an error of the bench
  pool.on('error', () => undefined);
  const params = {
    SQL_ENGINE: 'postgres',
    SQL_SERVER: '127.0.0.1',
    SQL_PORT: String(server.port),
    SQL_DATABASE: server.database,
    SQL_USERNAME: server.user,
    SQL_PASSWORD: server.password,
  };
  const rawSelect = async (sql: string, id: string): Promise<number> =>
    (await pool.query(sql.replace('?', '$1'), [id])).rowCount ?? 0;
  return {
    label: 'PostgreSQL',
    params,
    direct,
    quote: '"',
    driver: 'pg Pool',
    rawSelect,
    cleanup: async () => (await pool.end(), await server.remove()),
  };
}

async function mariadbTarget(): Promise<Target> {
  const server: DbServer = await mariadbServer();
  const direct = new Sequelize(server.database, server.user, server.password, {
    dialect: 'mysql',
    host: '127.0.0.1',
    port: server.port,
    logging: false,
    pool: { max: 10 },
  });
  await seedKv(direct, 'id INTEGER PRIMARY KEY AUTO_INCREMENT', ROWS);
  const pool = mysql.createPool({
    host: '127.0.0.1',
    port: server.port,
    user: server.user,
    password: server.password,
    database: server.database,
    connectionLimit: 10,
  });
  const params = {
    SQL_ENGINE: 'mariadb',
    SQL_SERVER: '127.0.0.1',
    SQL_PORT: String(server.port),
    SQL_DATABASE: server.database,
    SQL_USERNAME: server.user,
    SQL_PASSWORD: server.password,
  };
  const rawSelect = async (sql: string, id: string): Promise<number> =>
    ((await pool.query(sql, [id]))[0] as unknown[]).length;
  return {
    label: 'MariaDB',
    params,
    direct,
    quote: '`',
    driver: 'mysql2 pool',
    rawSelect,
    cleanup: async () => (await pool.end(), await server.remove()),
  };
}

async function bench(t: Target): Promise<void> {
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      {
        kind: 'sql',
        layers: [
          {
            source: 'bench',
            values: Object.entries({
              NAME: 'kv',
              ...t.params,
              SQL_STATEMENT: 'select',
              SQL_TABLE: 'kv',
              SQL_WHERE: 'id = {{ id }}',
            }),
          },
        ],
      },
    ],
  });
  let n = 0;
  const nextId = (): string => String((n++ % ROWS) + 1);
  const viaHive = async (): Promise<void> => {
    const r = await node.hive.call('kv', makeMessage({ Data: mapOf({ id: [nextId()] }) }), 30_000);
    if (r.Code !== 200 || r.Data.rowcount?.[0] !== '1') throw new Error(`${r.Code} ${r.Message}`);
  };
  const table = `${t.quote}kv${t.quote}`;
  const sql = `SELECT * FROM ${table} WHERE id = $id`;
  const direct = async (): Promise<void> => {
    const rows = await t.direct.query(sql, { bind: { id: nextId() }, type: QueryTypes.SELECT });
    if (rows.length !== 1) throw new Error('no row');
  };
  const rawSql = `SELECT * FROM ${table} WHERE id = ?`;
  const raw = async (): Promise<void> => {
    if ((await t.rawSelect(rawSql, nextId())) !== 1) throw new Error('no row');
  };
  for (const concurrency of [1, 32]) {
    const ops = OPS[concurrency]!;
    // warm-up: connections opened, statements prepared, JIT settled
    for (const op of [direct, raw, viaHive]) await drive(Math.min(ops, 1000), concurrency, op);
    const [d, r, h] = await interleavedAll(
      ROUNDS,
      [direct, raw, viaHive].map((op) => () => drive(ops, concurrency, op)),
    );
    // PostgreSQL and MariaDB at 32: beyond the raw pool (pipelined lanes, actors/sql/select-lanes.ts)
    const target = concurrency === 1 ? 0.85 : t.label === 'SQLite' ? 0.8 : 1.0;
    console.log(
      `${t.label.padEnd(10)} c=${String(concurrency).padEnd(2)}  raw ${t.driver} ${fmt(r!).padStart(7)} /s   via hive + SQL service ${fmt(h!).padStart(7)} /s   ratio ${(h! / r!).toFixed(2)} (target >= ${target.toFixed(2)})   direct sequelize.query ${fmt(d!)} /s (ratio ${(h! / d!).toFixed(2)})`,
    );
    const figure = `${t.label} SELECT by primary key via hive + SQL service, concurrency ${concurrency}`;
    report({
      figure,
      hivenode: h!,
      unit: 'queries/s',
      baseline: `raw ${t.driver}`,
      baselineValue: r!,
      target: `≥ ${target}`,
      met: h! / r! >= target,
    });
    report({ figure, hivenode: h!, unit: 'queries/s', baseline: 'direct sequelize.query', baselineValue: d! });
  }
  await node.stop(2000);
  await t.direct.close();
  await t.cleanup();
}

console.log(
  `SELECT by primary key, ${ROWS} rows; ops per round: c=1 ${OPS[1]}, c=32 ${OPS[32]}; rounds ${ROUNDS} (median, interleaved)`,
);
await onEachEngine({ sqlite: sqliteTarget, postgres: postgresTarget, mariadb: mariadbTarget }, bench);
