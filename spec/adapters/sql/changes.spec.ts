/**
 * The PostgreSQL change stream (SQL_CHANGES) against a live server with wal_level=logical: one
 * message per changed row in commit order, nothing for a rolled-back transaction, TRUNCATE logged and
 * not emitted, column types as strings, the slot and publication created, a refusing hive holding
 * reading back, a restart of the node resuming without a gap; refusals at start in one line.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
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
import type { EngineHarness } from './harness.js';
import { engineAvailable, openEngine } from './harness.js';
import { requireServer } from './servers.js';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';
import { sleep, until } from '../../support/wait.js';

describe('sql change stream on postgres (adapter)', function () {
  this.timeout(60_000);
  let db: EngineHarness;
  const s = new StreamHarness(() => ({ ...db.params, SQL_TABLE: 'orders, public.items' }));

  before(async function () {
    requireServer(this, engineAvailable('postgres'), 'postgres');
    db = await openEngine('postgres');
    await db.exec(
      'CREATE TABLE orders (id INT PRIMARY KEY, note TEXT, amount NUMERIC(12,3), at TIMESTAMPTZ, doc JSONB, blob BYTEA)',
    );
    await db.exec('CREATE TABLE items (id INT PRIMARY KEY, name TEXT)');
    await db.exec('ALTER TABLE orders REPLICA IDENTITY FULL');
  });
  beforeEach(() => {
    s.reset();
  });
  afterEach(() => s.stop());
  after(async () => {
    await db?.close();
  });

  it('creates the publication and slot, and emits inserts, updates and deletes with their controls and types', async () => {
    await s.start();
    const slots = await db.rows<{ slot_name: string; plugin: string }>(
      "SELECT slot_name, plugin FROM pg_replication_slots WHERE slot_name = 'hivenode_orders_feed'",
    );
    expect(slots).to.deep.equal([{ slot_name: 'hivenode_orders_feed', plugin: 'pgoutput' }]);
    await db.exec(
      "INSERT INTO orders VALUES (1, 'first', 12.345, '2026-01-02T03:04:05+02:00', '{\"a\": [1, 2]}', '\\x00ff10'::bytea)",
    );
    await db.exec('UPDATE orders SET note = NULL, amount = 99999999.999 WHERE id = 1');
    await db.exec('DELETE FROM orders WHERE id = 1');
    await until(() => s.received.length >= 3, 10_000);
    expect(s.ops()).to.deep.equal(['insert:public.orders:1', 'update:public.orders:1', 'delete:public.orders:1']);
    const [ins, upd, del] = s.received as [Message, Message, Message];
    expect(ins.Class).to.equal('cdc');
    expect({ ...ins.Data }).to.deep.equal({
      id: ['1'],
      note: ['first'],
      amount: ['12.345'],
      at: ['2026-01-02T01:04:05.000Z'],
      doc: ['{"a":[1,2]}'],
      blob: [Buffer.from([0, 255, 16]).toString('base64')],
    });
    expect(ins.Control.position![0]).to.match(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(Number(ins.Control.tx![0])).to.be.greaterThan(0);
    expect(Date.parse(ins.Control.commit_time![0]!)).to.be.closeTo(Date.now(), 30_000);
    expect(ins.Control['idempotency-key']![0]).to.match(/^sql-change:hivenode_orders_feed:[0-9A-F]+\/[0-9A-F]+:0$/);
    expect(ins.Control.before_note).to.equal(undefined);
    // NULL is the empty list; REPLICA IDENTITY FULL sends the old values
    expect(upd.Data.note).to.deep.equal([]);
    expect(upd.Data.amount).to.deep.equal(['99999999.999']);
    expect(upd.Control.before_note).to.deep.equal(['first']);
    expect(upd.Control.before_amount).to.deep.equal(['12.345']);
    expect(del.Data.id).to.deep.equal(['1']);
    expect(del.Data.note).to.deep.equal([]);
    expect(new Set(s.received.map((m) => m.Control['idempotency-key']![0])).size).to.equal(3);
    // the status figures /metrics exports (hivenode_service_figure): rows handed over and the lag of the last
    const status = s.status();
    expect(status).to.include({
      mode: 'changes',
      emitted: 3,
      transactions: 3,
      slot: 'hivenode_orders_feed',
      connected: true,
    });
    expect(status.lagMs).to.be.a('number').and.to.be.at.least(0);
  });

  it('emits one message per row of a transaction in commit order, nothing for a rolled-back one, and logs a TRUNCATE without emitting it', async () => {
    await s.start();
    await writeInterleaved(db);
    await until(() => s.received.length >= 5, 10_000);
    await sleep(300);
    expect(s.ops()).to.deep.equal([
      'insert:public.items:20',
      'insert:public.items:21',
      'insert:public.items:10',
      'insert:public.orders:11',
      'insert:public.items:40',
    ]);
    expect(s.received[0]!.Control.tx).to.deep.equal(s.received[1]!.Control.tx);
    expect(s.received[2]!.Control.tx).to.deep.equal(s.received[3]!.Control.tx);
    expect(s.logs()).to.contain('TRUNCATE of public.items');
  });

  it('holds reading while the hive refuses, and resumes at the acknowledged position after a restart (at least once, no gap)', async () => {
    await refusedThenResumed(s, db, 'public.items');
  });

  it('never skips a change the hive did not take: stopped while refusing, the next start emits it', async () => {
    await stoppedWhileRefusing(s, db, 'public.items');
  });

  it('reads on after a database restart, from the confirmed position', async () => {
    await databaseRestarted(s, db, 'public.items', /reading slot hivenode_orders_feed again after \d+ failed attempt/);
  });

  it('moves the slot past WAL that is not its own while its tables are quiet: a fast shutdown is not held up by the reader, and reading resumes within seconds', async () => {
    await db.exec('CREATE TABLE IF NOT EXISTS unrelated (id INT PRIMARY KEY)');
    await s.start();
    await db.exec("INSERT INTO items VALUES (85, 'before')");
    await until(() => s.received.length >= 1, 10_000);
    // WAL of a table the stream does not read: pgoutput sends nothing of it, only keepalives move on
    for (let i = 0; i < 20; i++) await db.exec(`INSERT INTO unrelated VALUES (${i})`);
    const slotLag = async (): Promise<number> =>
      Number(
        (
          await db.rows<{ lag: string }>(
            "SELECT pg_current_wal_lsn() - confirmed_flush_lsn AS lag FROM pg_replication_slots WHERE slot_name = 'hivenode_orders_feed'",
          )
        )[0]?.lag,
      );
    const began = Date.now();
    // a fast shutdown lets a logical walsender go only once its reader confirmed all it sent
    await db.server!.stop();
    const stopMs = Date.now() - began;
    await db.server!.start();
    expect(stopMs, 'fast shutdown held by the reader (ms)').to.be.below(5_000);
    await db.exec("INSERT INTO items VALUES (86, 'after')");
    await until(() => s.received.length >= 2, 10_000);
    expect(s.ops()).to.deep.equal(['insert:public.items:85', 'insert:public.items:86']);
    // idle again: the slot follows the server's WAL (the keepalive the server sends at wal_sender_timeout / 2)
    await db.exec("ALTER SYSTEM SET wal_sender_timeout = '2s'");
    await db.exec('SELECT pg_reload_conf()');
    try {
      for (let i = 20; i < 40; i++) await db.exec(`INSERT INTO unrelated VALUES (${i})`);
      await until(async () => (await slotLag()) === 0, 10_000);
    } finally {
      await db.exec('ALTER SYSTEM RESET wal_sender_timeout');
      await db.exec('SELECT pg_reload_conf()');
    }
  });

  it("answers the server's keepalives: an idle stream is not cut off by wal_sender_timeout", async () => {
    await db.exec("ALTER SYSTEM SET wal_sender_timeout = '1s'");
    await db.exec('SELECT pg_reload_conf()');
    try {
      await s.start();
      await sleep(4_000);
      expect(s.logs()).not.to.contain('reading again');
      await db.exec("INSERT INTO items VALUES (90, 'after idle')");
      await until(() => s.received.length >= 1, 10_000);
      expect(s.ops()).to.deep.equal(['insert:public.items:90']);
    } finally {
      await db.exec('ALTER SYSTEM RESET wal_sender_timeout');
      await db.exec('SELECT pg_reload_conf()');
    }
  });

  it('hivenode changes drop <NAME> removes the slot a removed stream left behind, and says when there is none', async () => {
    await s.start();
    await s.stop();
    const drop = () =>
      spawnSync(
        process.execPath,
        [
          ...HIVENODE_ARGS,
          'changes',
          'drop',
          'orders-feed',
          ...Object.entries(db.params).map(([k, v]) => `-${k}=${v}`),
        ],
        { encoding: 'utf8', timeout: 30_000 },
      );
    const first = drop();
    expect(first.stderr).to.equal('');
    expect(first.stdout.trim()).to.equal('dropped replication slot hivenode_orders_feed');
    expect(await db.rows("SELECT 1 FROM pg_replication_slots WHERE slot_name = 'hivenode_orders_feed'")).to.deep.equal(
      [],
    );
    expect(drop().stdout.trim()).to.equal(
      "no replication slot hivenode_orders_feed in database 'postgres': nothing to drop",
    );
  });

  it('SQL_CHANGESNAPSHOT: a new stream first emits the rows as read, consistent with its start, and only once', async () => {
    await snapshotFirst(s, db, 'public.items');
  });

  it('refuses at start in one line: an engine without a change stream, a missing table, a bad slot name, and a combination with SQL_POLLMODE', async () => {
    const refused = async (params: Record<string, string | boolean>): Promise<string> => {
      try {
        await startTestNode([{ service: 'sql', NAME: 'bad', SQL_CHANGES: true, SQL_TABLE: 'orders', ...params }]);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('started');
    };
    expect(await refused({ SQL_ENGINE: 'sqlite' })).to.match(/SQL_CHANGES: sqlite publishes no change stream/);
    expect(await refused({ ...db.params, SQL_TABLE: 'nosuch' })).to.match(/table 'public.nosuch' does not exist/);
    expect(await refused({ ...db.params, SQL_CHANGESLOT: 'Bad-Slot' })).to.match(
      /SQL_CHANGESLOT: 'Bad-Slot' is not a replication slot name/,
    );
    expect(await refused({ ...db.params, SQL_POLLMODE: true })).to.match(/cannot be combined with SQL_POLLMODE/);
  });

  it('refuses a user without the REPLICATION privilege, naming it', async () => {
    await db.exec("CREATE ROLE plain LOGIN PASSWORD 'plainpw'");
    await db.exec('GRANT SELECT ON orders TO plain');
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
        },
      ]);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).to.contain(
      "needs the REPLICATION privilege for SQL_USERNAME 'plain': ALTER ROLE plain REPLICATION",
    );
  });
});
