/**
 * The MariaDB change stream (SQL_CHANGES on the row-based binlog) against a live server with log_bin
 * and binlog_format=ROW: one message per changed row in commit order, nothing for a rolled-back
 * transaction, TRUNCATE logged and not emitted, column types as strings, the position kept in
 * SQL_STATEFILE only past acknowledged rows, a refusing hive holding reading back, a restart of the
 * node or of the server resuming without a gap; refusals at start in one line.
 */
import { expect } from 'chai';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '../../../protocol/message.js';
import { startTestNode } from '../../integration/helpers.js';
import {
  StreamHarness,
  databaseRestarted,
  refusedThenResumed,
  snapshotFirst,
  stoppedWhileRefusing,
  writeInterleaved,
} from './change-harness.js';
import { tempDir } from '../../temp.js';
import { buildFlow } from '../../../node/console/flow-graph.js';
import type { EngineHarness } from './harness.js';
import { engineAvailable, openEngine } from './harness.js';
import { mariadbRoot, requireServer } from './servers.js';
import { sleep, until } from '../../support/wait.js';

describe('sql change stream on mariadb (adapter)', function () {
  this.timeout(90_000);
  let db: EngineHarness;
  let dir: string;
  let stateFile: string;
  const s = new StreamHarness(() => ({ ...db.params, SQL_TABLE: 'orders, hive.items', SQL_STATEFILE: stateFile }));
  const kept = (): string => (JSON.parse(readFileSync(stateFile, 'utf8')) as { value: string }).value;
  const masterPosition = async (): Promise<string> => {
    const [r] = await db.rows<{ File: string; Position: number }>('SHOW MASTER STATUS');
    return `${r!.File}:${r!.Position}`;
  };

  before(async function () {
    requireServer(this, engineAvailable('mariadb'), 'mariadb');
    db = await openEngine('mariadb');
    await db.exec(
      'CREATE TABLE orders (id INT PRIMARY KEY, note TEXT, amount DECIMAL(12,3), at TIMESTAMP(3) NULL, dt DATETIME, doc JSON, blob_ BLOB, big BIGINT)',
    );
    await db.exec('CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40))');
    await db.exec('CREATE TABLE other (id INT PRIMARY KEY)');
  });
  beforeEach(() => {
    s.reset();
    dir = tempDir('hn-binlog-');
    stateFile = join(dir, 'position.json');
  });
  afterEach(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  after(async () => {
    await db?.close();
  });

  it('keeps the binlog end as its start, and emits inserts, updates and deletes with their controls and types', async () => {
    await s.start();
    const start = await masterPosition();
    expect(kept()).to.equal(start);
    expect(s.logs()).to.contain(`a new stream starts at the binlog's end, ${start}`);
    await db.exec(
      "INSERT INTO orders VALUES (1, 'first', 12.345, '2026-01-02 03:04:05.678', '2026-01-02 03:04:05', '{\"a\": [1, 2]}', x'00ff10', 9007199254740993)",
    );
    await db.exec('UPDATE orders SET note = NULL, amount = 999999999.999 WHERE id = 1');
    await db.exec('DELETE FROM orders WHERE id = 1');
    await until(() => s.received.length >= 3, 10_000);
    expect(s.ops()).to.deep.equal(['insert:hive.orders:1', 'update:hive.orders:1', 'delete:hive.orders:1']);
    const [ins, upd, del] = s.received as [Message, Message, Message];
    expect(ins.Class).to.equal('cdc');
    // the writer's session is UTC (Sequelize's +00:00), and the stream reads TIMESTAMP and DATETIME as UTC
    expect({ ...ins.Data }).to.deep.equal({
      id: ['1'],
      note: ['first'],
      amount: ['12.345'],
      at: ['2026-01-02T03:04:05.678Z'],
      dt: ['2026-01-02T03:04:05.000Z'],
      doc: ['{"a": [1, 2]}'],
      blob_: [Buffer.from([0, 255, 16]).toString('base64')],
      big: ['9007199254740993'],
    });
    // the first transaction begins where the binlog ended when the stream started
    expect(ins.Control.position).to.deep.equal([start]);
    expect(ins.Control.tx![0]).to.match(/^\d+-1-\d+$/);
    expect(Date.parse(ins.Control.commit_time![0]!)).to.be.closeTo(Date.now(), 30_000);
    expect(ins.Control['idempotency-key']).to.deep.equal([`sql-change:hivenode_orders_feed:${start}:0`]);
    expect(ins.Control.before_note).to.equal(undefined);
    // NULL is the empty list; binlog_row_image FULL sends the old values
    expect(upd.Data.note).to.deep.equal([]);
    expect(upd.Data.amount).to.deep.equal(['999999999.999']);
    expect(upd.Control.before_note).to.deep.equal(['first']);
    expect(upd.Control.before_amount).to.deep.equal(['12.345']);
    expect(del.Data.id).to.deep.equal(['1']);
    expect(del.Data.note).to.deep.equal([]);
    expect(del.Control.before_id).to.deep.equal(['1']);
    expect(new Set(s.received.map((m) => m.Control['idempotency-key']![0])).size).to.equal(3);
    // the position kept is past the last acknowledged transaction: the binlog's end now
    await until(async () => kept() === (await masterPosition()), 5_000);
    const status = s.status();
    expect(status).to.include({ mode: 'changes', emitted: 3, transactions: 3, connected: true });
    expect(status.confirmed).to.equal(kept());
    expect(status.lagMs).to.be.a('number').and.to.be.at.least(0);
    // the console's flow draws the stream as a source (its rate: the rows handed over) into the service, and the service's sends to its channel
    const flow = buildFlow(
      s.node!.services.map((x) => ({
        kind: x.kind,
        name: x.name,
        channel: '',
        config: x.config,
        status: () => x.running.status(),
      })),
    );
    expect(flow.nodes.find((n) => n.id === 'src:changes:orders-feed')).to.include({
      kind: 'source',
      label: 'binlog: orders, hive.items',
      detail: 'change stream',
    });
    expect(flow.edges.find((e) => e.from === 'src:changes:orders-feed')).to.deep.include({
      to: 'svc:orders-feed',
      counted: { service: 'orders-feed', figure: 'emitted' },
    });
    expect(flow.edges.some((e) => e.from === 'svc:orders-feed' && e.channel === 'changes')).to.equal(true);
  });

  it('emits one message per row of a transaction in commit order, nothing for a rolled-back one or another table, and logs a TRUNCATE without emitting it', async () => {
    await s.start();
    await writeInterleaved(db);
    await db.exec('INSERT INTO other VALUES (1)');
    await until(() => s.received.length >= 5, 10_000);
    await sleep(300);
    expect(s.ops()).to.deep.equal([
      'insert:hive.items:20',
      'insert:hive.items:21',
      'insert:hive.items:10',
      'insert:hive.orders:11',
      'insert:hive.items:40',
    ]);
    expect(s.received[0]!.Control.tx).to.deep.equal(s.received[1]!.Control.tx);
    expect(s.received[2]!.Control.tx).to.deep.equal(s.received[3]!.Control.tx);
    expect(s.received[0]!.Control.tx).not.to.deep.equal(s.received[2]!.Control.tx);
    expect(s.received.map((m) => m.Control['idempotency-key']![0]!.replace(/.*:/, ''))).to.deep.equal([
      '0',
      '1',
      '0',
      '1',
      '0',
    ]);
    expect(s.logs()).to.match(/'TRUNCATE items' is not emitted/);
  });

  it('holds reading while the hive refuses, and resumes at the kept position after a restart (at least once, no gap)', async () => {
    await refusedThenResumed(s, db, 'hive.items');
  });

  it('never skips a change the hive did not take: stopped while refusing, the next start emits it', async () => {
    await stoppedWhileRefusing(s, db, 'hive.items');
  });

  it('reads on after a server restart, from the kept position', async () => {
    await databaseRestarted(s, db, 'hive.items', /reading the binlog at \S+ again after \d+ failed attempt/);
  });

  it('SQL_CHANGESNAPSHOT: a new stream first emits the rows as read, consistent with its start, and only once', async () => {
    await snapshotFirst(s, db, 'hive.items', { SQL_STATEFILE: join(dir, 'snap.json') });
  });

  it('refuses at start in one line: no SQL_STATEFILE, a slot name, a missing table, a state file of something else, binlog_format not ROW', async () => {
    const refused = async (params: Record<string, string | boolean>): Promise<string> => {
      try {
        await startTestNode([
          {
            service: 'sql',
            NAME: 'bad',
            ...db.params,
            SQL_CHANGES: true,
            SQL_TABLE: 'orders',
            SQL_STATEFILE: stateFile,
            ...params,
          },
        ]);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('started');
    };
    expect(await refused({ SQL_STATEFILE: '' })).to.match(/keeps its binlog position in SQL_STATEFILE/);
    expect(await refused({ SQL_CHANGESLOT: 'x' })).to.match(/SQL_CHANGESLOT names a PostgreSQL replication slot/);
    expect(await refused({ SQL_TABLE: 'nosuch' })).to.match(/table 'hive.nosuch' does not exist/);
    const other = join(dir, 'poller.json');
    writeFileSync(other, JSON.stringify({ column: 'id', type: 'number', value: 5 }));
    expect(await refused({ SQL_STATEFILE: other })).to.match(/holds no binlog position of a change stream/);
    mariadbRoot(db.server!, "SET GLOBAL binlog_format = 'MIXED'");
    try {
      expect(await refused({})).to.match(/needs the server setting binlog_format=ROW \(it is 'MIXED'\)/);
    } finally {
      mariadbRoot(db.server!, "SET GLOBAL binlog_format = 'ROW'");
    }
  });

  it('refuses a user without the REPLICATION SLAVE privilege, naming it', async () => {
    mariadbRoot(db.server!, "CREATE USER 'plain'@'%' IDENTIFIED BY 'plainpw'; GRANT SELECT ON hive.* TO 'plain'@'%'");
    let message = '';
    try {
      await startTestNode([
        {
          service: 'sql',
          NAME: 'plain',
          ...db.params,
          SQL_USERNAME: 'plain',
          SQL_PASSWORD: 'plainpw',
          SQL_CHANGES: true,
          SQL_TABLE: 'orders',
          SQL_STATEFILE: stateFile,
        },
      ]);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).to.contain(
      "needs the REPLICATION SLAVE privilege for SQL_USERNAME 'plain': GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'plain'@'%'",
    );
  });

  it('refuses a server without the binary log, naming log_bin', async () => {
    const plain = await openEngine('mariadb', { binlog: false });
    try {
      await plain.exec('CREATE TABLE orders (id INT PRIMARY KEY)');
      let message = '';
      try {
        await startTestNode([
          {
            service: 'sql',
            NAME: 'nolog',
            ...plain.params,
            SQL_CHANGES: true,
            SQL_TABLE: 'orders',
            SQL_STATEFILE: stateFile,
          },
        ]);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).to.match(/^SQL_CHANGES needs the MariaDB\/MySQL server setting log_bin/);
    } finally {
      await plain.close();
    }
  });
});
