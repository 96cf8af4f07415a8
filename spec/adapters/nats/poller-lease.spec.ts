import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { recorded } from '../../integration/queue/helpers.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { runNodeToExit, startNodeProcess } from '../../reliability/node-process.js';
import { tempDir } from '../../temp.js';
import type { NatsServer } from './server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from './server.js';
import { sleep, until } from '../../support/wait.js';
import { requireInstalled } from '../../support/installed.js';

const NODE_READY = /node running/;

function run(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (e) => (e ? reject(e) : resolve())));
}

describe('SQL pollers of one NAME on a NATS hive: one active poller (SQL_POLLLEASE)', function () {
  this.timeout(90_000);
  let server: NatsServer;
  let dir: string;
  let db: sqlite3.Database;
  const nodes: NodeProcess[] = [];
  before(function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill('SIGKILL')));
    await new Promise<void>((r) => (db ? db.close(() => r()) : r()));
    await server?.stop();
  });

  const setUp = async (opts: { jetstream?: boolean } = {}): Promise<void> => {
    server = await natsServer(opts);
    dir = tempDir('hn-lease-');
    writeFileSync(join(dir, 'token'), `${server.token}\n`);
    db = new sqlite3.Database(join(dir, 'events.db'));
    db.configure('busyTimeout', 5_000);
    await run(db, 'PRAGMA journal_mode=WAL; CREATE TABLE events (id INTEGER PRIMARY KEY, body TEXT NOT NULL);');
  };
  const nodeFile = (name: string, service: string): string => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      [
        `hive: {SERVERHOST: "${server.url}", SERVERAUTH: "file://${join(dir, 'token')}"}`,
        'services:',
        `  - ${service}`,
        '',
      ].join('\n'),
    );
    return file;
  };
  const poller = (lease = '2s'): string =>
    nodeFile(
      `poller-${lease}`,
      `{service: sql, NAME: events, SQL_POLLMODE: true, SQL_ENGINE: sqlite, SQL_DATABASE: "${join(dir, 'events.db')}", SQL_TABLE: events, SQL_COLUMNS: "id,body", SQL_TRACKCOLUMN: id, SQL_POLLINTERVAL: 200ms, SQL_POLLLEASE: ${lease}, OUTPUTCHANNEL: rows}`,
    );
  const start = async (file: string): Promise<NodeProcess> => {
    const n = await startNodeProcess(file, { ready: NODE_READY });
    nodes.push(n);
    return n;
  };
  const recorder = (): Promise<NodeProcess> =>
    start(
      nodeFile(
        'recorder',
        `{service: echo, NAME: recorder, INPUTCHANNEL: rows, RecordFile: "${join(dir, 'rows.jsonl')}"}`,
      ),
    );
  const ids = (): number[] => recorded(join(dir, 'rows.jsonl')).flatMap((r) => (r.message.Data.id ?? []).map(Number));
  const insert = (from: number, to: number): Promise<void> =>
    run(
      db,
      `INSERT INTO events (id, body) VALUES ${Array.from({ length: to - from + 1 }, (_, i) => `(${from + i}, 'row ${from + i}')`).join(',')}`,
    );

  it('two pollers: one is active, the other stands by, and every row is emitted once', async () => {
    await setUp();
    await recorder();
    const file = poller();
    const a = await start(file);
    const b = await start(file);
    await until(() => [a, b].some((n) => /active poller now/.test(n.output())), {
      ms: 10_000,
      every: 50,
      what: 'an active poller',
    });
    await insert(1, 50);
    await until(() => ids().length >= 50, { ms: 10_000, every: 50, what: '50 rows' });
    await sleep(1_000);
    expect(ids()).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
    const actives = [a, b].filter((n) => /active poller now/.test(n.output()));
    expect(actives).to.have.length(1);
    expect([a, b].find((n) => n !== actives[0])!.output()).to.match(
      /poller lease: standing by among the pollers named 'events'/,
    );
  });

  it('the active poller stopping hands over at once, and the next one goes on from the shared mark', async () => {
    await setUp();
    await recorder();
    const file = poller();
    const a = await start(file);
    await until(() => /active poller now/.test(a.output()), { ms: 10_000, every: 50, what: 'the first poller active' });
    const b = await start(file);
    await insert(1, 20);
    await until(() => ids().length >= 20, { ms: 10_000, every: 50, what: '20 rows' });
    const stopped = Date.now();
    await a.kill('SIGTERM');
    await until(() => /active poller now/.test(b.output()), { ms: 5_000, every: 50, what: 'the second poller active' });
    // a stopping holder deletes its lease: well under the 2 s lease
    expect(Date.now() - stopped).to.be.below(1_500);
    await insert(21, 40);
    await until(() => ids().length >= 40, { ms: 10_000, every: 50, what: '40 rows' });
    await sleep(500);
    expect(ids()).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('SQL_POLLLEASE 0 polls on every node (each emits the rows)', async () => {
    await setUp();
    await recorder();
    const file = poller('0');
    await start(file);
    await start(file);
    await insert(1, 10);
    await until(() => ids().length >= 20, { ms: 10_000, every: 50, what: 'the rows twice' });
    expect(ids().filter((id) => id === 1)).to.have.length(2);
  });

  it('a NATS server without JetStream refuses the start in one line that names SQL_POLLLEASE and the way out', async () => {
    await setUp({ jetstream: false });
    const out = await runNodeToExit(poller());
    expect(out.code).to.equal(2);
    const lines = out.stderr.trim().split('\n');
    expect(lines.at(-1)).to.match(
      /SQL_POLLLEASE: the pollers of one NAME elect one active poller in the JetStream KV bucket 'hivenode_pollers'.*enable JetStream.*or set SQL_POLLLEASE=0/,
    );
    expect(out.stderr).to.not.match(/\n\s+at /);
  });

  it('a lease under 1s is refused at start', async () => {
    await setUp();
    const out = await runNodeToExit(poller('500ms'));
    expect(out.code).to.equal(2);
    expect(out.stderr).to.match(/SQL_POLLLEASE is 500 ms; give at least 1s \(or 0 to poll on every node\)/);
  });
});
