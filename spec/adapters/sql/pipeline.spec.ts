/**
 * PostgreSQL SELECTs pipelined on shared connections as named prepared statements (actors/sql/
 * pg-pipeline.ts), against a real server: many SELECTs at once each get their own row, a failing one
 * fails alone, a column added under `SELECT *` (a stale cached plan) is answered with the new column,
 * a slow SELECT does not hold up the fast ones behind it, and an exhausted pool still answers 503
 * after SQL_ACQUIRETIMEOUT; MariaDB SELECTs queued on held connections keep the same promises.
 */
import { expect } from 'chai';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness } from './harness.js';
import { engineAvailable, openEngine } from './harness.js';
import { requireServer } from './servers.js';

describe('sql service: PostgreSQL SELECTs pipelined as prepared statements (adapter)', function () {
  this.timeout(90_000);
  let pg: EngineHarness;
  let node: HiveNode | undefined;
  const call = (channel: string, data: Record<string, string[]> = {}): Promise<Result> =>
    node!.hive.call(channel, makeMessage({ Data: mapOf(data) }), 30_000);
  const ROWS = 200;

  before(async function () {
    requireServer(this, engineAvailable('postgres'), 'postgres');
    pg = await openEngine('postgres');
    await pg.exec(`CREATE TABLE items (${pg.serial}, name TEXT NOT NULL)`);
    await pg.exec(`INSERT INTO items (name) SELECT 'item ' || i FROM generate_series(1, ${ROWS}) AS i`);
    // a view whose row 2 takes a second to read: the slow SELECT of the head-of-line test
    await pg.exec(
      'CREATE FUNCTION nap(i int) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN IF i = 2 THEN PERFORM pg_sleep(1); END IF; RETURN true; END $$',
    );
    await pg.exec('CREATE VIEW napping AS SELECT id, name FROM items WHERE nap(id)');
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });
  after(async () => {
    await pg?.close();
  });

  it('hundreds of SELECTs at once: each answer is its own row; a failing one fails alone', async () => {
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'item',
        ...pg.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'items',
        SQL_WHERE: 'id = {{ id }}',
        SQL_POOLSIZE: 3,
      },
    ]));
    for (let round = 0; round < 3; round++) {
      const ids = Array.from({ length: ROWS }, (_, i) => i + 1);
      const answers = await Promise.all(
        ids.map((id) => call('item', { id: [id === 77 ? 'not a number' : String(id)] })),
      );
      for (const [i, r] of answers.entries()) {
        const id = ids[i]!;
        if (id === 77) {
          expect(r.Code, r.Message).to.equal(400);
          expect(r.Message).to.match(/invalid input syntax for type integer/);
          continue;
        }
        expect(r.Code, r.Message).to.equal(200);
        expect(r.Data.id, `answer ${i}`).to.deep.equal([String(id)]);
        expect(r.Data.name).to.deep.equal([`item ${id}`]);
      }
    }
  });

  it('a column added under SELECT *: the statement is prepared again and the answer has the new column', async () => {
    await pg.exec('CREATE TABLE grows (id INT PRIMARY KEY, a TEXT)');
    await pg.exec(`INSERT INTO grows SELECT i, 'a' || i FROM generate_series(1, 50) AS i`);
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'grows',
        ...pg.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'grows',
        SQL_WHERE: 'id = {{ id }}',
      },
    ]));
    const all = (): Promise<Result[]> =>
      Promise.all(Array.from({ length: 50 }, (_, i) => call('grows', { id: [String(i + 1)] })));
    for (const r of await all()) expect(r.Code, r.Message).to.equal(200);
    await pg.exec("ALTER TABLE grows ADD COLUMN b TEXT NOT NULL DEFAULT 'new'");
    for (const [i, r] of (await all()).entries()) {
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.a).to.deep.equal([`a${i + 1}`]);
      expect(r.Data.b).to.deep.equal(['new']);
    }
  });

  it('a slow SELECT does not hold up the fast ones sent after it', async () => {
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'nap',
        ...pg.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'napping',
        SQL_WHERE: 'id = {{ id }}',
      },
    ]));
    // every connection has the statement prepared, and the pipeline is warm
    await Promise.all(Array.from({ length: 40 }, () => call('nap', { id: ['1'] })));
    const slow = call('nap', { id: ['2'] });
    await new Promise((r) => setTimeout(r, 100));
    const began = Date.now();
    const fast = await Promise.all(Array.from({ length: 20 }, () => call('nap', { id: ['1'] })));
    const took = Date.now() - began;
    for (const r of fast) expect(r.Code, r.Message).to.equal(200);
    expect(took, 'the fast SELECTs did not wait for the slow one').to.be.below(700);
    const r = await slow;
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data.name).to.deep.equal(['item 2']);
  });

  it('every connection held by a slow SELECT: the next waits for the pool and is 503 after SQL_ACQUIRETIMEOUT', async () => {
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'nap',
        ...pg.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'napping',
        SQL_WHERE: 'id = {{ id }}',
        SQL_POOLSIZE: 1,
        SQL_ACQUIRETIMEOUT: '300ms',
      },
    ]));
    expect((await call('nap', { id: ['1'] })).Code).to.equal(200);
    const [held, waited] = await Promise.all([
      call('nap', { id: ['2'] }),
      new Promise((r) => setTimeout(r, 100)).then(() => call('nap', { id: ['1'] })),
    ]);
    expect(held.Code, held.Message).to.equal(200);
    expect(waited.Code, waited.Message).to.equal(503);
    expect(waited.Message).to.match(/no database connection became free within 300 ms/);
    expect((await call('nap', { id: ['1'] })).Code).to.equal(200);
  });
});

describe('sql service: MariaDB SELECTs queued on held connections (adapter)', function () {
  this.timeout(90_000);
  let db: EngineHarness;
  let node: HiveNode | undefined;
  const call = (channel: string, data: Record<string, string[]> = {}): Promise<Result> =>
    node!.hive.call(channel, makeMessage({ Data: mapOf(data) }), 30_000);

  before(async function () {
    requireServer(this, engineAvailable('mariadb'), 'mariadb');
    db = await openEngine('mariadb');
    await db.exec(`CREATE TABLE items (${db.serial}, name VARCHAR(40) NOT NULL)`);
    await db.exec(
      `INSERT INTO items (name) VALUES ${Array.from({ length: 200 }, (_, i) => `('item ${i + 1}')`).join(', ')}`,
    );
    // row 2 takes a second to read
    await db.exec('CREATE VIEW napping AS SELECT id, name FROM items WHERE IF(id = 2, SLEEP(1), 0) = 0');
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });
  after(async () => {
    await db?.close();
  });

  it('hundreds of SELECTs at once on a pool of 3: each answer is its own row', async () => {
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'item',
        ...db.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'items',
        SQL_WHERE: 'id = {{ id }}',
        SQL_POOLSIZE: 3,
      },
    ]));
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => call('item', { id: [String(i + 1)] })));
    for (const [i, r] of answers.entries()) {
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.name, `answer ${i}`).to.deep.equal([`item ${i + 1}`]);
    }
  });

  it('a slow SELECT does not hold up the fast ones; every connection held by it: 503 after SQL_ACQUIRETIMEOUT', async () => {
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'nap',
        ...db.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'napping',
        SQL_WHERE: 'id = {{ id }}',
      },
      {
        service: 'sql',
        NAME: 'one',
        ...db.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'napping',
        SQL_WHERE: 'id = {{ id }}',
        SQL_POOLSIZE: 1,
        SQL_ACQUIRETIMEOUT: '300ms',
      },
    ]));
    await Promise.all(Array.from({ length: 20 }, () => call('nap', { id: ['1'] })));
    const slow = call('nap', { id: ['2'] });
    await new Promise((r) => setTimeout(r, 100));
    const began = Date.now();
    for (const r of await Promise.all(Array.from({ length: 20 }, () => call('nap', { id: ['1'] }))))
      expect(r.Code, r.Message).to.equal(200);
    expect(Date.now() - began, 'the fast SELECTs did not wait for the slow one').to.be.below(700);
    expect((await slow).Code).to.equal(200);
    expect((await call('one', { id: ['1'] })).Code).to.equal(200);
    const [held, waited] = await Promise.all([
      call('one', { id: ['2'] }),
      new Promise((r) => setTimeout(r, 100)).then(() => call('one', { id: ['1'] })),
    ]);
    expect(held.Code, held.Message).to.equal(200);
    expect(waited.Code, waited.Message).to.equal(503);
  });
});
