/**
 * SQL change streams (README, Change streams) on PostgreSQL: (1) changes per second from the slot to
 * the hive — a backlog of BENCH_CHANGES committed single-row inserts read by the SQL service
 * (SQL_CHANGES, every row handed over with `execute` and acknowledged by a listener) against a bare
 * consumer of the same library (pg-logical-replication with its pgoutput decoder) reading the same
 * backlog from a slot of its own and acknowledging each commit — target ≥ 0.7 of it; rates from the
 * first row received to the last, so connecting counts on neither side; medians of interleaved rounds.
 * (2) End-to-end lag at 1,000 changes a second: ten single-row transactions every 10 ms for
 * BENCH_LAG_SECONDS while the stream reads, each row's lag from its commit returning to the writer to
 * the listener receiving it — target p99 ≤ 50 ms. MariaDB's binlog stream is not measured here.
 */
import { PassThrough } from 'node:stream';
import { LogicalReplicationService, PgoutputPlugin } from 'pg-logical-replication';
import type { Pgoutput } from 'pg-logical-replication';
import pg from 'pg';
import { HiveNode } from '../node/node.js';
import type { DbServer } from '../spec/adapters/sql/servers.js';
import { postgresBin, postgresServer } from '../spec/adapters/sql/servers.js';
import { fmt, interleavedSamples, median, pairedRatio, report } from './lib.js';

const CHANGES = Number(process.env.BENCH_CHANGES ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const LAG_SECONDS = Number(process.env.BENCH_LAG_SECONDS ?? 5);
const TARGET_RATIO = 0.7;
const TARGET_P99_MS = 50;

let nextId = 1;
let round = 0;

function clientConfig(server: DbServer, replication = false): pg.ClientConfig {
  return {
    host: '127.0.0.1',
    port: server.port,
    user: server.user,
    password: server.password,
    database: server.database,
    ...(replication ? { replication: 'database' } : {}),
  };
}

/** Commits `count` single-row inserts, one transaction each (as an application writes), 500 to a round trip. */
async function writeBacklog(db: pg.Client, count: number): Promise<void> {
  for (let done = 0; done < count; done += 500) {
    const ids = Array.from({ length: Math.min(500, count - done) }, () => nextId++);
    await db.query(
      ids.map((id) => `BEGIN; INSERT INTO events (id, body) VALUES (${id}, 'event ${id}'); COMMIT;`).join(' '),
    );
  }
}

/** Drops a slot once its reader's server process has let it go (that takes a moment after the client closed). */
async function dropSlot(db: pg.Client, slot: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await db.query('SELECT pg_drop_replication_slot($1)', [slot]);
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== '55006' || tries > 100) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Resolves with the rate once `count` rows were counted; `seen` is called per row. */
function counter(count: number): { seen: () => void; done: Promise<number> } {
  let n = 0;
  let first = 0;
  let resolve: (rate: number) => void = () => undefined;
  const done = new Promise<number>((r) => (resolve = r));
  return {
    seen: () => {
      if (n === 0) first = performance.now();
      if (++n === count) resolve((count - 1) / ((performance.now() - first) / 1000));
    },
    done,
  };
}

/** The bare consumer: the library alone on a slot of its own, each commit acknowledged. */
async function bareRound(server: DbServer, db: pg.Client): Promise<number> {
  const slot = `bench_bare_${round++}`;
  await db.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
  await writeBacklog(db, CHANGES);
  const { seen, done } = counter(CHANGES);
  const svc = new LogicalReplicationService(
    clientConfig(server, true) as ConstructorParameters<typeof LogicalReplicationService>[0],
    { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } },
  );
  svc.on('data', (_lsn: string, log: Pgoutput.Message) => {
    if (log.tag === 'insert') seen();
    else if (log.tag === 'commit' && log.commitEndLsn) void svc.acknowledge(log.commitEndLsn).catch(() => undefined);
  });
  void svc
    .subscribe(new PgoutputPlugin({ protoVersion: 1, publicationNames: ['bench_events'] }), slot)
    .catch(() => undefined);
  const rate = await done;
  await svc.destroy();
  await dropSlot(db, slot);
  return rate;
}

/** The SQL service's change stream, every row handed over with execute to an acknowledging listener. */
async function hivenodeRound(server: DbServer, db: pg.Client, password: string): Promise<number> {
  const slot = `bench_hn_${round++}`;
  await db.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
  await writeBacklog(db, CHANGES);
  const { seen, done } = counter(CHANGES);
  const node = await startStream(server, password, slot);
  await node.hive.listen('changes', (d) => {
    seen();
    d.ack();
  });
  const rate = await done;
  await node.stop(5000);
  await dropSlot(db, slot);
  return rate;
}

function startStream(server: DbServer, password: string, slot: string): Promise<HiveNode> {
  const values = {
    NAME: 'bench-feed',
    SQL_ENGINE: 'postgres',
    SQL_SERVER: '127.0.0.1',
    SQL_PORT: String(server.port),
    SQL_DATABASE: server.database,
    SQL_USERNAME: server.user,
    SQL_PASSWORD: password,
    SQL_CHANGES: 'true',
    SQL_TABLE: 'events',
    SQL_CHANGESLOT: slot,
    SQL_CHANGEPUBLICATION: 'bench_events',
    OUTPUTCHANNEL: 'changes',
  };
  return HiveNode.start({
    logStream: new PassThrough(),
    services: [{ kind: 'sql', layers: [{ source: 'bench', values: Object.entries(values) }] }],
  });
}

/** Lag of each row at 1,000 changes a second: its commit returning to the writer → the listener. */
async function lagRun(server: DbServer, db: pg.Client, password: string): Promise<number[]> {
  const slot = `bench_lag_${round++}`;
  const node = await startStream(server, password, slot);
  const committed = new Map<string, number>();
  const received = new Map<string, number>();
  await node.hive.listen('changes', (d) => {
    received.set(d.message.Data.id?.[0] ?? '', performance.now());
    d.ack();
  });
  // the stream reads once its slot exists (it creates it at start)
  await new Promise((r) => setTimeout(r, 500));
  const ticks = LAG_SECONDS * 100;
  const writer = new pg.Client(clientConfig(server));
  await writer.connect();
  // the bench server runs with synchronous_commit=off, where a commit returns before its WAL is flushed
  // and the WAL sender streams only flushed WAL (up to wal_writer_delay, 200 ms, later): as an application
  // that waits for its commits writes
  await writer.query('SET synchronous_commit = on');
  const start = performance.now();
  for (let t = 0; t < ticks; t++) {
    const wait = start + t * 10 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const batch: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      const id = nextId++;
      batch.push(
        writer
          .query('INSERT INTO events (id, body) VALUES ($1, $2)', [id, `event ${id}`])
          .then(() => committed.set(String(id), performance.now())),
      );
    }
    void Promise.all(batch);
  }
  const expected = ticks * 10;
  const deadline = Date.now() + 30_000;
  while (received.size < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await writer.end();
  await node.stop(5000);
  await dropSlot(db, slot);
  // a row can reach the listener before its commit's answer reaches the writer: its lag is 0
  return [...committed].map(([id, at]) => Math.max(0, (received.get(id) ?? Infinity) - at));
}

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

async function main(): Promise<void> {
  if (!postgresBin()) {
    console.log('bench/changes: PostgreSQL is not installed (scripts/sql-servers.sh installs it); skipped');
    return;
  }
  const server = await postgresServer();
  const db = new pg.Client(clientConfig(server));
  try {
    await db.connect();
    await db.query('CREATE TABLE events (id INT PRIMARY KEY, body TEXT NOT NULL)');
    await db.query('CREATE PUBLICATION bench_events FOR TABLE events');
    const password = server.password;
    const [hn, bare] = await interleavedSamples(ROUNDS, [
      () => hivenodeRound(server, db, password),
      () => bareRound(server, db),
    ]);
    const ratio = pairedRatio(hn!, bare!);
    console.log(
      `change stream, ${fmt(CHANGES)} committed inserts: hivenode ${fmt(median(hn!))} changes/s to the hive, bare pg-logical-replication ${fmt(median(bare!))} changes/s — ratio ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO})`,
    );
    report({
      figure: `SQL change stream (PostgreSQL, pgoutput): slot → hive, ${fmt(CHANGES)} single-row transactions`,
      hivenode: median(hn!),
      unit: 'changes/s',
      baseline: 'pg-logical-replication 2.5 alone on the same backlog',
      baselineValue: median(bare!),
      ratio,
      target: `≥ ${TARGET_RATIO}`,
      met: ratio >= TARGET_RATIO,
    });
    const lags = await lagRun(server, db, password);
    const p50 = percentile(lags, 50);
    const p99 = percentile(lags, 99);
    console.log(
      `change stream lag at 1,000 changes/s for ${LAG_SECONDS} s: ${lags.length} rows, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target p99 ≤ ${TARGET_P99_MS} ms)`,
    );
    report({
      figure: 'SQL change stream (PostgreSQL): commit → hive listener lag p99 at 1,000 changes/s',
      hivenode: p99,
      unit: 'ms',
      target: `≤ ${TARGET_P99_MS} ms`,
      met: p99 <= TARGET_P99_MS,
      lowerIsBetter: true,
    });
  } finally {
    await db.end().catch(() => undefined);
    await server.remove();
  }
}

await main();
