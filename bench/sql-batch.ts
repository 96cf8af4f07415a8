/**
 * SQL_BATCH: 10,000 rows inserted by one hive message to the SQL service (SQL_BATCH=true), against
 * (1) the same rows through the raw driver in one transaction — the same multi-row INSERT, bound by
 * position, chunked under the engine's parameter limit, between BEGIN and COMMIT — target ≥ 0.8 of it;
 * and (2) the same rows sent as 10,000 single-row messages to a plain INSERT instance, concurrency
 * 32 — expected ≥ 10× slower. Rows per second, medians of interleaved rounds, each round's rows
 * deleted outside the timing so every round writes into the same table. SQLite always; PostgreSQL and
 * MariaDB when their binaries are installed (private servers, as bench/sql.ts starts them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import mysql from 'mysql2/promise';
import { Sequelize } from 'sequelize';
import sqlite3 from 'sqlite3';
import { PARAM_LIMIT } from '../actors/sql/rows.js';
import { HiveNode } from '../node/node.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import type { DbServer } from '../spec/adapters/sql/servers.js';
import { mariadbServer, postgresServer } from '../spec/adapters/sql/servers.js';
import { drive, fmt, interleavedAll, report } from './lib.js';
import { onEachEngine } from './support/sql-engines.js';

/** The little of pg's Client the bench uses; loaded with require because the project carries no types for pg. */
interface PgClient {
  connect(): Promise<void>;
  query(sql: string, values?: unknown[]): Promise<unknown>;
  end(): Promise<void>;
}
const pg = createRequire(import.meta.url)('pg') as { Client: new (options: Record<string, unknown>) => PgClient };

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
/**
 * Single-row messages are one commit each: an fsync each on SQLite, about 100 s a round of 10,000 on
 * the bench machine, so one round there (the ratio is in the hundreds: one round decides it).
 */
const SINGLE_ROUNDS = Number(process.env.BENCH_SINGLE_ROUNDS ?? 3);
const SQLITE_SINGLE_ROUNDS = Number(process.env.BENCH_SQLITE_SINGLE_ROUNDS ?? 1);
const CONCURRENCY = 32;
const COLUMNS = ['id', 'name', 'qty'];

interface Target {
  label: string;
  dialect: 'sqlite' | 'postgres' | 'mysql';
  params: Record<string, string>;
  direct: Sequelize;
  driver: string;
  /** The statements through the raw driver, in one transaction. */
  rawInsert(statements: { sql: string; values: unknown[] }[]): Promise<void>;
  cleanup(): Promise<void>;
}

/** Ids never repeat across rounds, so no round meets another's rows even if a delete were late. */
let nextId = 1;
function rows(): Record<string, string[]> {
  const ids = Array.from({ length: ROWS }, () => nextId++);
  return { id: ids.map(String), name: ids.map((i) => `item ${i}`), qty: ids.map((i) => String(i % 1000)) };
}

/** The multi-row INSERTs of `data` as the raw driver is given them: `?` or `$n` markers, values by position. */
function rawStatements(t: Target, data: Record<string, string[]>): { sql: string; values: unknown[] }[] {
  const perStatement = Math.floor(PARAM_LIMIT[t.dialect] / COLUMNS.length);
  const q = t.dialect === 'mysql' ? '`' : '"';
  const out: { sql: string; values: unknown[] }[] = [];
  for (let start = 0; start < ROWS; start += perStatement) {
    const count = Math.min(perStatement, ROWS - start);
    const values: unknown[] = [];
    const tuples: string[] = [];
    for (let r = start; r < start + count; r++) {
      const marks = COLUMNS.map((c) => {
        values.push(t.dialect === 'sqlite' && c !== 'name' ? Number(data[c]![r]) : data[c]![r]);
        return t.dialect === 'postgres' ? `$${values.length}` : '?';
      });
      tuples.push(`(${marks.join(', ')})`);
    }
    out.push({
      sql: `INSERT INTO ${q}items${q} (${COLUMNS.map((c) => `${q}${c}${q}`).join(', ')}) VALUES ${tuples.join(', ')}`,
      values,
    });
  }
  return out;
}

async function sqliteTarget(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'hn-sqlbatch-'));
  const file = join(dir, 'bench.db');
  const direct = new Sequelize({ dialect: 'sqlite', storage: file, logging: false });
  const db = new sqlite3.Database(file);
  const run = (sql: string, values: unknown[] = []): Promise<void> =>
    new Promise((resolve, reject) => db.run(sql, values, (e) => (e ? reject(e) : resolve())));
  const rawInsert = async (statements: { sql: string; values: unknown[] }[]): Promise<void> => {
    await run('BEGIN IMMEDIATE');
    for (const s of statements) await run(s.sql, s.values);
    await run('COMMIT');
  };
  const cleanup = async (): Promise<void> => {
    await new Promise((r) => db.close(r));
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    label: 'SQLite',
    dialect: 'sqlite',
    params: { SQL_ENGINE: 'sqlite', SQL_DATABASE: file },
    direct,
    driver: 'sqlite3',
    rawInsert,
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
  });
  const client = new pg.Client({
    host: '127.0.0.1',
    port: server.port,
    user: server.user,
    password: server.password,
    database: server.database,
  });
  await client.connect();
  const rawInsert = async (statements: { sql: string; values: unknown[] }[]): Promise<void> => {
    await client.query('BEGIN');
    for (const s of statements) await client.query(s.sql, s.values);
    await client.query('COMMIT');
  };
  const params = {
    SQL_ENGINE: 'postgres',
    SQL_SERVER: '127.0.0.1',
    SQL_PORT: String(server.port),
    SQL_DATABASE: server.database,
    SQL_USERNAME: server.user,
    SQL_PASSWORD: server.password,
  };
  return {
    label: 'PostgreSQL',
    dialect: 'postgres',
    params,
    direct,
    driver: 'pg',
    rawInsert,
    cleanup: async () => (await client.end(), await server.remove()),
  };
}

async function mariadbTarget(): Promise<Target> {
  const server: DbServer = await mariadbServer();
  const direct = new Sequelize(server.database, server.user, server.password, {
    dialect: 'mysql',
    host: '127.0.0.1',
    port: server.port,
    logging: false,
  });
  const connection = await mysql.createConnection({
    host: '127.0.0.1',
    port: server.port,
    user: server.user,
    password: server.password,
    database: server.database,
  });
  // execute: a prepared statement, as the service's driver (through Sequelize) sends it
  const rawInsert = async (statements: { sql: string; values: unknown[] }[]): Promise<void> => {
    await connection.beginTransaction();
    for (const s of statements) await connection.execute(s.sql, s.values as string[]);
    await connection.commit();
  };
  const params = {
    SQL_ENGINE: 'mariadb',
    SQL_SERVER: '127.0.0.1',
    SQL_PORT: String(server.port),
    SQL_DATABASE: server.database,
    SQL_USERNAME: server.user,
    SQL_PASSWORD: server.password,
  };
  return {
    label: 'MariaDB',
    dialect: 'mysql',
    params,
    direct,
    driver: 'mysql2',
    rawInsert,
    cleanup: async () => (await connection.end(), await server.remove()),
  };
}

async function bench(t: Target): Promise<void> {
  await t.direct.query('DROP TABLE IF EXISTS items');
  await t.direct.query('CREATE TABLE items (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL, qty INTEGER NOT NULL)');
  const insert = {
    ...t.params,
    SQL_STATEMENT: 'insert',
    SQL_TABLE: 'items',
    SQL_COLUMNS: COLUMNS.join(','),
    SQL_VALUEPARAMS: COLUMNS.join(','),
  };
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      {
        kind: 'sql',
        layers: [
          {
            source: 'bench',
            values: Object.entries({ NAME: 'batch', ...insert, SQL_BATCH: 'true', SQL_MAXBATCH: String(ROWS) }),
          },
        ],
      },
      {
        kind: 'sql',
        layers: [
          { source: 'bench', values: Object.entries({ NAME: 'single', ...insert, SQL_POOLSIZE: String(CONCURRENCY) }) },
        ],
      },
    ],
  });
  /**
   * Rows per second of one round: `prepare` (not timed) turns the round's rows into what is sent —
   * the message, the driver's statements — then `write` sends them; the rows are deleted afterwards
   * (not timed).
   */
  const round =
    <P>(prepare: (data: Record<string, string[]>) => P, write: (prepared: P) => Promise<void>) =>
    async (): Promise<number> => {
      const prepared = prepare(rows());
      const started = performance.now();
      await write(prepared);
      const seconds = (performance.now() - started) / 1000;
      await t.direct.query('DELETE FROM items');
      return ROWS / seconds;
    };
  const viaBatch = round(
    (data) => makeMessage({ Data: mapOf(data) }),
    async (message) => {
      const r = await node.hive.call('batch', message, 120_000);
      if (r.Code !== 200 || r.Data.affected?.[0] !== String(ROWS)) throw new Error(`${r.Code} ${r.Message}`);
    },
  );
  const raw = round(
    (data) => rawStatements(t, data),
    (statements) => t.rawInsert(statements),
  );
  const viaSingle = round(
    (data) =>
      data.id!.map((id, i) => makeMessage({ Data: mapOf({ id: [id], name: [data.name![i]!], qty: [data.qty![i]!] }) })),
    async (messages) => {
      let i = 0;
      await drive(ROWS, CONCURRENCY, async () => {
        const r = await node.hive.call('single', messages[i++]!, 60_000);
        if (r.Code !== 200) throw new Error(`${r.Code} ${r.Message}`);
      });
    },
  );
  // warm-up: connections opened, statements prepared, JIT settled
  for (const op of [viaBatch, raw, viaBatch, raw]) await op();
  const [b, r] = await interleavedAll(ROUNDS, [viaBatch, raw]);
  console.log(
    `${t.label.padEnd(10)} ${fmt(ROWS)} rows: one SQL_BATCH message ${fmt(b!).padStart(9)} rows/s   raw ${t.driver} in one transaction ${fmt(r!).padStart(9)} rows/s   ratio ${(b! / r!).toFixed(2)} (target >= 0.80)`,
  );
  report({
    figure: `${t.label} ${fmt(ROWS)}-row INSERT in one SQL_BATCH message via hive + SQL service`,
    hivenode: b!,
    unit: 'rows/s',
    baseline: `raw ${t.driver}, same multi-row INSERT in one transaction`,
    baselineValue: r!,
    target: '≥ 0.8',
    met: b! / r! >= 0.8,
  });
  const [b2, s] = await interleavedAll(t.dialect === 'sqlite' ? SQLITE_SINGLE_ROUNDS : SINGLE_ROUNDS, [
    viaBatch,
    viaSingle,
  ]);
  console.log(
    `${t.label.padEnd(10)} ${fmt(ROWS)} rows: one SQL_BATCH message ${fmt(b2!).padStart(9)} rows/s   ${fmt(ROWS)} single-row messages (c=${CONCURRENCY}) ${fmt(s!).padStart(9)} rows/s   ratio ${(b2! / s!).toFixed(1)} (expected >= 10)`,
  );
  report({
    figure: `${t.label} ${fmt(ROWS)} rows in one SQL_BATCH message, against single-row messages`,
    hivenode: b2!,
    unit: 'rows/s',
    baseline: `${fmt(ROWS)} single-row INSERT messages, concurrency ${CONCURRENCY}`,
    baselineValue: s!,
    target: '≥ 10',
    met: b2! / s! >= 10,
  });
  await node.stop(2000);
  await t.direct.close();
  await t.cleanup();
}

console.log(
  `SQL_BATCH: ${fmt(ROWS)} rows of 3 columns; rounds ${ROUNDS} against the raw driver, ${SINGLE_ROUNDS} against single-row messages (SQLite ${SQLITE_SINGLE_ROUNDS}) (median, interleaved)`,
);
await onEachEngine({ sqlite: sqliteTarget, postgres: postgresTarget, mariadb: mariadbTarget }, bench);
