/**
 * SQL service throughput: a SELECT by primary key through a hive call to the SQL service (no gateway)
 * against the same SELECT run directly with `sequelize.query(sql, { bind })` in the same process, at
 * concurrency 1 and 32, interleaved rounds, medians. SQLite always; PostgreSQL too when its binaries
 * are installed (a private server on a free port, as the adapter tests start it). Target ratio >= 0.8.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { QueryTypes, Sequelize } from 'sequelize';
import { makeMessage, mapOf } from '../protocol/message.js';
import { HiveNode } from '../supervisors/node.js';
import type { DbServer } from '../spec/adapters/sql/servers.js';
import { postgresBin, postgresServer } from '../spec/adapters/sql/servers.js';
import { drive, fmt, interleaved } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ROWS = 1000;
const OPS: Record<number, number> = { 1: Number(process.env.BENCH_OPS_1 ?? 3000), 32: Number(process.env.BENCH_OPS_32 ?? 10_000) };

interface Target {
  label: string;
  params: Record<string, string>;
  direct: Sequelize;
  quote: string;
  cleanup(): Promise<void>;
}

async function seed(direct: Sequelize, serial: string): Promise<void> {
  await direct.query('DROP TABLE IF EXISTS kv');
  await direct.query(`CREATE TABLE kv (${serial}, v VARCHAR(40) NOT NULL)`);
  const values = Array.from({ length: ROWS }, (_, i) => `('value ${i + 1}')`).join(', ');
  await direct.query(`INSERT INTO kv (v) VALUES ${values}`);
}

async function sqliteTarget(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'hn-sqlbench-'));
  const file = join(dir, 'bench.db');
  const direct = new Sequelize({ dialect: 'sqlite', storage: file, logging: false });
  await seed(direct, 'id INTEGER PRIMARY KEY AUTOINCREMENT');
  return { label: 'SQLite', params: { SQL_ENGINE: 'sqlite', SQL_DATABASE: file }, direct, quote: '"', cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function postgresTarget(): Promise<Target> {
  const server: DbServer = await postgresServer();
  const direct = new Sequelize(server.database, server.user, server.password, { dialect: 'postgres', host: '127.0.0.1', port: server.port, logging: false, pool: { max: 10 } });
  await seed(direct, 'id SERIAL PRIMARY KEY');
  const params = { SQL_ENGINE: 'postgres', SQL_SERVER: '127.0.0.1', SQL_PORT: String(server.port), SQL_DATABASE: server.database, SQL_USERNAME: server.user, SQL_PASSWORD: server.password };
  return { label: 'PostgreSQL', params, direct, quote: '"', cleanup: () => server.remove() };
}

async function bench(t: Target): Promise<void> {
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [{ kind: 'sql', layers: [{ source: 'bench', values: Object.entries({ NAME: 'kv', ...t.params, SQL_STATEMENT: 'select', SQL_TABLE: 'kv', SQL_WHERE: 'id = {{ id }}' }) }] }],
  });
  let n = 0;
  const nextId = (): string => String((n++ % ROWS) + 1);
  const viaHive = async (): Promise<void> => {
    const r = await node.hive.call('kv', makeMessage({ Data: mapOf({ id: [nextId()] }) }), 30_000);
    if (r.Code !== 200 || r.Data.rowcount?.[0] !== '1') throw new Error(`${r.Code} ${r.Message}`);
  };
  const sql = `SELECT * FROM ${t.quote}kv${t.quote} WHERE id = $id`;
  const direct = async (): Promise<void> => {
    const rows = await t.direct.query(sql, { bind: { id: nextId() }, type: QueryTypes.SELECT });
    if (rows.length !== 1) throw new Error('no row');
  };
  for (const concurrency of [1, 32]) {
    const ops = OPS[concurrency]!;
    // warm-up: connections opened, statements prepared, JIT settled
    await drive(Math.min(ops, 1000), concurrency, direct);
    await drive(Math.min(ops, 1000), concurrency, viaHive);
    const m = await interleaved(
      ROUNDS,
      () => drive(ops, concurrency, direct),
      () => drive(ops, concurrency, viaHive),
    );
    console.log(`${t.label.padEnd(10)} c=${String(concurrency).padEnd(2)}  direct sequelize.query ${fmt(m.a).padStart(7)} /s   via hive + SQL service ${fmt(m.b).padStart(7)} /s   ratio ${(m.b / m.a).toFixed(2)} (target >= 0.80)`);
  }
  await node.stop(2000);
  await t.direct.close();
  await t.cleanup();
}

console.log(`SELECT by primary key, ${ROWS} rows; ops per round: c=1 ${OPS[1]}, c=32 ${OPS[32]}; rounds ${ROUNDS} (median, interleaved)`);
await bench(await sqliteTarget());
if (postgresBin()) await bench(await postgresTarget());
else console.log('PostgreSQL    skipped: binaries not installed (apt-get install postgresql)');
