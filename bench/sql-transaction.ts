/**
 * Raw transactions (SQL_RAWTRANSACTION): UPDATE; INSERT; SELECT in one transaction through a hive
 * call to the SQL service, against the same three statements in one managed `sequelize.transaction()`
 * run directly in the same process (a pooled connection held for the transaction), at concurrency 1
 * and 8, interleaved rounds, medians; PostgreSQL and MariaDB on private servers. Target ratio >= 0.8
 * of direct Sequelize.
 *
 * SQLite is left out: there each commit waits for the disk, both sides would share one file, and the
 * locks of the two connections on it delay each other, so its ratio measured the disk and the other
 * connection rather than the service (from 1.2 to 3.7 between runs of the same code).
 */
import { PassThrough } from 'node:stream';
import { QueryTypes, Sequelize } from 'sequelize';
import type { Transaction } from 'sequelize';
import { makeMessage, mapOf } from '../protocol/message.js';
import { HiveNode } from '../node/node.js';
import type { DbServer } from '../spec/adapters/sql/servers.js';
import { mariadbAvailable, mariadbServer, postgresBin, postgresServer } from '../spec/adapters/sql/servers.js';
import { drive, fmt, interleavedAll, report } from './lib.js';
import { seedKv } from './support/sql-tables.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ROWS = 1000;
const OPS = Number(process.env.BENCH_OPS ?? 1500);

interface Target {
  label: string;
  params: Record<string, string>;
  direct: Sequelize;
  /** Runs `body` in one transaction directly. */
  transaction(body: (t: Transaction) => Promise<void>): Promise<void>;
  cleanup(): Promise<void>;
}

async function seed(direct: Sequelize, serial: string): Promise<void> {
  await seedKv(direct, serial, ROWS);
  await direct.query('DROP TABLE IF EXISTS kvlog');
  await direct.query(`CREATE TABLE kvlog (${serial}, kv_id INT NOT NULL, v VARCHAR(40) NOT NULL)`);
}

async function serverTarget(
  label: string,
  server: DbServer,
  dialect: 'postgres' | 'mysql',
  serial: string,
): Promise<Target> {
  const direct = new Sequelize(server.database, server.user, server.password, {
    dialect,
    host: '127.0.0.1',
    port: server.port,
    logging: false,
    pool: { max: 10 },
  });
  await seed(direct, serial);
  const params = {
    SQL_ENGINE: server.engine,
    SQL_SERVER: '127.0.0.1',
    SQL_PORT: String(server.port),
    SQL_DATABASE: server.database,
    SQL_USERNAME: server.user,
    SQL_PASSWORD: server.password,
  };
  return {
    label,
    params,
    direct,
    transaction: (body) => direct.transaction((t) => body(t)),
    cleanup: () => server.remove(),
  };
}

async function bench(t: Target): Promise<void> {
  const statements = [
    'UPDATE kv SET v = $v WHERE id = $id',
    'INSERT INTO kvlog (kv_id, v) VALUES ($id, $v)',
    'SELECT v FROM kv WHERE id = $id',
  ];
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      {
        kind: 'sql',
        layers: [
          {
            source: 'bench',
            values: Object.entries({
              NAME: 'tx',
              ...t.params,
              SQL_RAWMODE: 'true',
              SQL_RAWTRANSACTION: 'true',
              SQL_RAWVALUE: statements.map((s) => s.replace(/\$(\w+)/g, '{{ $1 }}')).join(';\n'),
            }),
          },
        ],
      },
    ],
  });
  let n = 0;
  const next = (): { id: string; v: string } => ({ id: String((n % ROWS) + 1), v: `v${n++}` });
  const viaHive = async (): Promise<void> => {
    const { id, v } = next();
    const r = await node.hive.call('tx', makeMessage({ Data: mapOf({ id: [id], v: [v] }) }), 30_000);
    if (r.Code !== 200 || r.Data.v?.[0] !== v) throw new Error(`${r.Code} ${r.Message}`);
  };
  const direct = async (): Promise<void> => {
    const bind = next();
    let rows: Array<{ v: string }> = [];
    await t.transaction(async (transaction) => {
      await t.direct.query(statements[0]!, { raw: true, transaction, bind, type: QueryTypes.UPDATE });
      await t.direct.query(statements[1]!, { raw: true, transaction, bind, type: QueryTypes.INSERT });
      rows = await t.direct.query(statements[2]!, {
        raw: true,
        transaction,
        bind: { id: bind.id },
        type: QueryTypes.SELECT,
      });
    });
    if (rows[0]?.v !== bind.v) throw new Error('not committed');
  };
  for (const concurrency of [1, 8]) {
    for (const op of [direct, viaHive]) await drive(Math.min(OPS, 300), concurrency, op);
    const [d, h] = await interleavedAll(
      ROUNDS,
      [direct, viaHive].map((op) => () => drive(OPS, concurrency, op)),
    );
    console.log(
      `${t.label.padEnd(10)} c=${concurrency}  direct sequelize transaction ${fmt(d!).padStart(6)} /s   via hive + SQL service ${fmt(h!).padStart(6)} /s   ratio ${(h! / d!).toFixed(2)} (target >= 0.80)`,
    );
    report({
      figure: `${t.label} raw transaction UPDATE; INSERT; SELECT via hive + SQL service, concurrency ${concurrency}`,
      hivenode: h!,
      unit: 'transactions/s',
      baseline: 'direct sequelize transaction',
      baselineValue: d!,
      target: '≥ 0.8',
      met: h! / d! >= 0.8,
    });
  }
  await node.stop(2000);
  await t.direct.close();
  await t.cleanup();
}

console.log(
  `raw transaction UPDATE; INSERT; SELECT, ${ROWS} rows; ${OPS} transactions per round; rounds ${ROUNDS} (median, interleaved)`,
);
// BENCH_ENGINES=postgres or =mariadb runs one of them (both by default)
const engines = new Set((process.env.BENCH_ENGINES ?? 'postgres,mariadb').split(',').map((e) => e.trim()));
if (engines.has('postgres') && postgresBin())
  await bench(await serverTarget('PostgreSQL', await postgresServer(), 'postgres', 'id SERIAL PRIMARY KEY'));
else console.log('PostgreSQL    skipped: not installed or not in BENCH_ENGINES');
if (engines.has('mariadb') && mariadbAvailable())
  await bench(await serverTarget('MariaDB', await mariadbServer(), 'mysql', 'id INTEGER PRIMARY KEY AUTO_INCREMENT'));
else console.log('MariaDB       skipped: not installed or not in BENCH_ENGINES');
