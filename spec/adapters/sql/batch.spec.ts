/**
 * Multi-row INSERT (SQL_BATCH) and UPSERT against real engines — PostgreSQL and MariaDB servers
 * started here on free ports, and a SQLite file — through a node on the embedded hive: 5,000 rows
 * in one message (over a table wide enough that they take several statements, so the transaction
 * is what keeps them together), a batch with one row the database refuses inserting nothing (400
 * with the engine's reason), two batches at once where one fails, and an UPSERT batch inserting and
 * updating at once.
 */
import { expect } from 'chai';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness, TestEngine } from './harness.js';
import { TEST_ENGINES, engineAvailable, openEngine } from './harness.js';
import { RowsStatement } from '../../../actors/sql/rows.js';
import { requireServer } from './servers.js';
import { ConfigError } from '../../../protocol/errors.js';

/** 16 columns: 5,000 rows are 80,000 bound values, more than one statement of any engine carries. */
const WIDE = ['id', ...Array.from({ length: 15 }, (_, i) => `c${i + 1}`)];

/** Data for the wide table: ids as given, each column's value derived from the id. */
function wideRows(ids: number[]): Record<string, string[]> {
  const data: Record<string, string[]> = { v_id: ids.map(String) };
  for (const c of WIDE.slice(1)) data[`v_${c}`] = ids.map((id) => `${c}-${id}`);
  return data;
}
const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

for (const engine of TEST_ENGINES) {
  describe(`sql SQL_BATCH and UPSERT on ${engine} (adapter)`, function () {
    this.timeout(120_000);
    let db: EngineHarness;
    let node: HiveNode;
    const call = (channel: string, data: Record<string, string[]>): Promise<Result> =>
      node.hive.call(channel, makeMessage({ Data: mapOf(data) }), 60_000);
    const count = async (table: string, where = ''): Promise<number> =>
      Number((await db.rows<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}${where}`))[0]!.n);

    before(async function () {
      requireServer(this, engineAvailable(engine as TestEngine), engine);
      db = await openEngine(engine);
      await db.exec(
        `CREATE TABLE wide (id INT PRIMARY KEY, ${WIDE.slice(1)
          .map((c) => `${c} VARCHAR(20) NOT NULL`)
          .join(', ')})`,
      );
      await db.exec('CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, qty INT NOT NULL)');
      await db.exec('CREATE TABLE stock (sku VARCHAR(20) PRIMARY KEY, name VARCHAR(50) NOT NULL, qty INT NOT NULL)');
      await db.exec('CREATE TABLE coded (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL)');
      await db.exec("INSERT INTO stock (sku, name, qty) VALUES ('a', 'apple', 1), ('b', 'bean', 2)");
      const p = db.params;
      ({ node } = await startTestNode([
        {
          service: 'sql',
          NAME: 'wide',
          ...p,
          SQL_STATEMENT: 'insert',
          SQL_TABLE: 'wide',
          SQL_COLUMNS: WIDE.join(','),
          SQL_VALUEPARAMS: WIDE.map((c) => `v_${c}`).join(','),
          SQL_BATCH: true,
        },
        {
          service: 'sql',
          NAME: 'items',
          ...p,
          SQL_STATEMENT: 'insert',
          SQL_TABLE: 'items',
          SQL_COLUMNS: 'id, name, qty',
          SQL_VALUEPARAMS: 'id, name, qty',
          SQL_BATCH: true,
          SQL_MAXBATCH: 100,
        },
        {
          service: 'sql',
          NAME: 'stock',
          ...p,
          SQL_STATEMENT: 'upsert',
          SQL_TABLE: 'stock',
          SQL_COLUMNS: 'sku, name, qty',
          SQL_KEYCOLUMNS: 'sku',
          SQL_VALUEPARAMS: 'sku, name, qty',
          SQL_BATCH: true,
        },
        {
          service: 'sql',
          NAME: 'coded',
          ...p,
          SQL_STATEMENT: 'insert',
          SQL_TABLE: 'coded',
          SQL_COLUMNS: 'id, name',
          SQL_VALUEPARAMS: 'id, name',
          SQL_BATCH: true,
          SQL_ROWCODES: true,
        },
        {
          service: 'sql',
          NAME: 'stock1',
          ...p,
          SQL_STATEMENT: 'upsert',
          SQL_TABLE: 'stock',
          SQL_COLUMNS: 'sku, name, qty',
          SQL_KEYCOLUMNS: 'sku',
          SQL_VALUEPARAMS: 'sku, name, qty',
        },
      ]));
    });
    after(async () => {
      await node?.stop(2000);
      await db?.close();
    });

    it('inserts 5,000 rows of one message, over several statements, and answers affected 5000', async () => {
      const statements = Math.ceil(
        5000 /
          new RowsStatement(engine === 'mariadb' ? 'mysql' : engine, 'insert', {
            table: 'wide',
            columns: WIDE,
            names: WIDE,
          }).maxRows,
      );
      expect(statements, 'the batch needs more than one statement').to.be.above(1);
      const r = await call('wide', wideRows(range(1, 5000)));
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data).to.deep.equal({ affected: ['5000'] });
      expect(await count('wide')).to.equal(5000);
      const rows = await db.rows<{ id: number; c1: string; c15: string }>(
        'SELECT id, c1, c15 FROM wide WHERE id IN (1, 2500, 5000) ORDER BY id',
      );
      expect(rows.map((x) => [Number(x.id), x.c1, x.c15])).to.deep.equal([
        [1, 'c1-1', 'c15-1'],
        [2500, 'c1-2500', 'c15-2500'],
        [5000, 'c1-5000', 'c15-5000'],
      ]);
    });

    it('a batch with one row violating a constraint (in its last statement) inserts nothing: 400 with the reason', async () => {
      const ids = range(5001, 5000);
      ids[4990] = 17; // already there: the primary key refuses it after earlier statements wrote their rows
      const r = await call('wide', wideRows(ids));
      expect(r.Code, r.Message).to.equal(400);
      // the statement that failed names its rows
      expect(r.Message).to.match(
        /^rows \d+-5000 of 5000: the database refused the values: .*(duplicate|unique|primary)/i,
      );
      expect(await count('wide')).to.equal(5000);
      expect(await count('wide', ' WHERE id > 5000')).to.equal(0);
      // one statement: the same, by the statement's own atomicity
      const small = await call('items', { id: ['1', '2', '1'], name: ['a', 'b', 'c'], qty: ['1', '2', '3'] });
      expect(small.Code, small.Message).to.equal(400);
      expect(await count('items')).to.equal(0);
    });

    it('two batches at once: the failing one rolls back alone', async () => {
      const bad = range(20001, 3000);
      bad[2999] = 20001;
      const [ok, failed] = await Promise.all([call('wide', wideRows(range(10001, 3000))), call('wide', wideRows(bad))]);
      expect(ok.Code, ok.Message).to.equal(200);
      expect(failed.Code, failed.Message).to.equal(400);
      expect(await count('wide', ' WHERE id > 10000 AND id <= 13000')).to.equal(3000);
      expect(await count('wide', ' WHERE id > 20000')).to.equal(0);
    });

    it('SQL_ROWCODES: a batch without a bad row is one pass with codes all 200; a refused row fails alone (207), the others are written', async () => {
      const ids = range(1, 50).map(String);
      const ok = await call('coded', { id: ids, name: ids });
      expect(ok.Code, ok.Message).to.equal(200);
      expect(ok.Data.codes).to.deep.equal(ids.map(() => '200'));
      const status = (): Record<string, unknown> => node.services.find((s) => s.name === 'coded')!.running.status();
      expect(status().rowRedos, 'the fast path').to.equal(0);
      const next = range(51, 50).map(String);
      next[10] = '5'; // already in the table
      next[20] = '52'; // twice in this batch: the second is refused
      const partly = await call('coded', { id: next, name: next });
      expect(partly.Code, partly.Message).to.equal(207);
      expect(partly.Data.codes!.flatMap((c, i) => (c === '200' ? [] : [[i, c]]))).to.deep.equal([
        [10, '400'],
        [20, '400'],
      ]);
      expect(partly.Data.messages![10]).to.match(/duplicate|unique|primary/i);
      expect(partly.Data.affected).to.deep.equal(['48']);
      expect(status().rowRedos).to.equal(1);
      expect(await count('coded')).to.equal(98);
    });

    it('fields of unequal length are 400 naming them; more rows than SQL_MAXBATCH 413; nothing written', async () => {
      const unequal = await call('items', { id: ['1', '2'], name: ['a'], qty: ['1', '2'] });
      expect(unequal).to.deep.include({
        Code: 400,
        Message:
          'SQL_BATCH: the value fields differ in length (id 2, name 1, qty 2); row i takes value i of each field, so each must carry one value per row',
      });
      const many = range(1, 101).map(String);
      expect(await call('items', { id: many, name: many, qty: many })).to.deep.include({
        Code: 413,
        Message: 'SQL_BATCH: 101 rows in one message, more than SQL_MAXBATCH (100)',
      });
      expect(await count('items')).to.equal(0);
      expect((await call('items', { id: many.slice(1), name: many.slice(1), qty: many.slice(1) })).Data).to.deep.equal({
        affected: ['100'],
      });
    });

    it('UPSERT batch: inserts new keys and updates existing ones in one message', async () => {
      const r = await call('stock', {
        sku: ['a', 'c', 'b', 'd'],
        name: ['apple', 'cherry', 'broad bean', 'date'],
        qty: ['10', '30', '20', '40'],
      });
      expect(r.Code, r.Message).to.equal(200);
      // SQLite reports only the rows written
      expect(r.Data).to.deep.equal(
        engine === 'sqlite' ? { affected: ['4'] } : { affected: ['4'], inserted: ['2'], updated: ['2'] },
      );
      const rows = await db.rows<{ sku: string; name: string; qty: number }>(
        'SELECT sku, name, qty FROM stock ORDER BY sku',
      );
      expect(rows.map((x) => [x.sku, x.name, Number(x.qty)])).to.deep.equal([
        ['a', 'apple', 10],
        ['b', 'broad bean', 20],
        ['c', 'cherry', 30],
        ['d', 'date', 40],
      ]);
      expect(
        await call('stock', { sku: ['e', 'a', 'e'], name: ['x', 'y', 'z'], qty: ['1', '2', '3'] }),
      ).to.deep.include({ Code: 400 });
      expect(await count('stock')).to.equal(4);
    });

    it('UPSERT whose SQL_KEYCOLUMNS are no unique key of the table: refused at start in one line naming them and the keys there are', async () => {
      await db.exec(
        'CREATE TABLE tags (id INT PRIMARY KEY, owner VARCHAR(20) NOT NULL, tag VARCHAR(20) NOT NULL, note VARCHAR(20), UNIQUE (owner, tag))',
      );
      const service = (keys: string) => ({
        service: 'sql' as const,
        NAME: `tags-${keys.replace(/\W/g, '')}`,
        ...db.params,
        SQL_STATEMENT: 'upsert',
        SQL_TABLE: 'tags',
        SQL_COLUMNS: 'id, owner, tag, note',
        SQL_KEYCOLUMNS: keys,
        SQL_VALUEPARAMS: 'id, owner, tag, note',
      });
      let refused: unknown;
      await startTestNode([service('owner')]).then(
        async (s) => s.node.stop(1000),
        (e: unknown) => (refused = e),
      );
      expect(refused).to.be.instanceOf(ConfigError);
      expect((refused as Error).message).to.match(
        /SQL_KEYCOLUMNS: \(owner\) is not the PRIMARY KEY or a UNIQUE constraint of table 'tags' \(its unique keys are .*\(owner, tag\)|\(tag, owner\)/,
      );
      // the key in another order, and the primary key, are fine
      for (const keys of ['tag, owner', 'id']) {
        const ok = await startTestNode([service(keys)]);
        const r = await ok.node.hive.call(
          `tags-${keys.replace(/\W/g, '')}`,
          makeMessage({ Data: mapOf({ id: ['1'], owner: ['ann'], tag: ['x'], note: [keys] }) }),
          30_000,
        );
        expect(r.Code, r.Message).to.equal(200);
        await ok.node.stop(1000);
      }
    });

    it('UPSERT without SQL_BATCH: one row of first values, inserted, then updated', async () => {
      const first = await call('stock1', { sku: ['e'], name: ['elder'], qty: ['5'] });
      expect(first.Code, first.Message).to.equal(200);
      const second = await call('stock1', { sku: ['e'], name: ['elderberry'], qty: ['6'] });
      expect(second.Code, second.Message).to.equal(200);
      // MariaDB cannot tell one inserted row from one found unchanged (FOUND_ROWS): it says only affected then
      const expected = {
        postgres: [
          { affected: ['1'], inserted: ['1'], updated: ['0'] },
          { affected: ['1'], inserted: ['0'], updated: ['1'] },
        ],
        mariadb: [{ affected: ['1'] }, { affected: ['1'], inserted: ['0'], updated: ['1'] }],
        sqlite: [{ affected: ['1'] }, { affected: ['1'] }],
      }[engine];
      expect([first.Data, second.Data]).to.deep.equal(expected);
      expect(await db.rows("SELECT name, qty FROM stock WHERE sku = 'e'")).to.deep.equal([
        { name: 'elderberry', qty: 6 },
      ]);
    });
  });
}
