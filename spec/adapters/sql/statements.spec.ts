/**
 * Every statement of the SQL service against real engines — PostgreSQL and MariaDB servers started
 * here on free ports, and a SQLite file — through a node on the embedded hive: SELECT (LIKE with %,
 * several placeholders, NULLs), a join with GROUP BY/HAVING/ORDER BY/LIMIT, INSERT, UPDATE, DELETE,
 * raw query and exec (with `$` in the text), `_CTRL` overrides, and the 400/403 refusals.
 */
import { expect } from 'chai';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness, TestEngine } from './harness.js';
import { TEST_ENGINES, engineAvailable, openEngine } from './harness.js';
import { requireServer } from './servers.js';

const names = (r: Result): string[] => r.Data.name ?? [];

for (const engine of TEST_ENGINES) {
  describe(`sql service on ${engine} (adapter)`, function () {
    this.timeout(60_000);
    let db: EngineHarness;
    let node: HiveNode;
    let logs: () => string;
    const call = (
      channel: string,
      data: Record<string, string[]> = {},
      control: Record<string, string[]> = {},
    ): Promise<Result> => node.hive.call(channel, makeMessage({ Data: mapOf(data), Control: mapOf(control) }), 20_000);

    before(async function () {
      requireServer(this, engineAvailable(engine as TestEngine), engine);
      db = await openEngine(engine);
      await db.exec(
        `CREATE TABLE users (${db.serial}, name VARCHAR(100) NOT NULL, email VARCHAR(100) NULL, age INT NULL)`,
      );
      await db.exec(`CREATE TABLE orders (${db.serial}, user_id INT NOT NULL, total NUMERIC(10,2) NOT NULL)`);
      await db.exec(
        "INSERT INTO users (name, email, age) VALUES ('ann', 'ann@x.org', 30), ('bob', NULL, 25), ('o''hara', NULL, NULL), ('carol', 'carol@x.org', 40)",
      );
      await db.exec(
        'INSERT INTO orders (user_id, total) VALUES (1, 10.00), (1, 20.50), (2, 5.00), (4, 7.25), (4, 8.00), (4, 100.00)',
      );
      const p = db.params;
      ({ node, logs } = await startTestNode([
        {
          service: 'sql',
          NAME: 'sel',
          ...p,
          SQL_STATEMENT: 'SELECT',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'id, name, email, age',
          SQL_WHERE: 'name LIKE {{ pattern }} AND (age >= {{min_age}} OR age IS NULL)',
          SQL_ORDERBY: 'id',
        },
        {
          service: 'sql',
          NAME: 'all',
          ...p,
          SQL_STATEMENT: 'select',
          SQL_TABLE: 'users',
          SQL_ORDERBY: 'id',
          SQL_TABLE_CTRL: 'table',
          SQL_COLUMNS_CTRL: 'columns',
          SQL_ORDERBY_CTRL: 'order',
          SQL_LIMIT_CTRL: 'limit',
          SQL_WHERE_CTRL: 'where',
          SQL_ALLOWEDTABLES: 'orders',
        },
        {
          service: 'sql',
          NAME: 'join',
          ...p,
          SQL_STATEMENT: 'select',
          SQL_TABLE: 'users u',
          SQL_COLUMNS: 'u.name, COUNT(o.id) AS orders, SUM(o.total) AS spent',
          SQL_JOIN: 'JOIN orders o ON o.user_id = u.id',
          SQL_WHERE: 'o.total > {{ min_total }}',
          SQL_GROUPBY: 'u.name',
          SQL_HAVING: 'COUNT(o.id) >= {{ min_orders }}',
          SQL_ORDERBY: 'u.name',
          SQL_LIMIT: '{{ n }}',
          SQL_OFFSET: '0',
        },
        {
          service: 'sql',
          NAME: 'ins',
          ...p,
          SQL_STATEMENT: 'insert',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'name,email,age',
          SQL_VALUEPARAMS: 'data_name, data_email, data_age',
        },
        {
          service: 'sql',
          NAME: 'upd',
          ...p,
          SQL_STATEMENT: 'update',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'email',
          SQL_VALUEPARAMS: 'data_email',
          SQL_WHERE: 'name = {{ where_name }}',
        },
        {
          service: 'sql',
          NAME: 'del',
          ...p,
          SQL_STATEMENT: 'Delete',
          SQL_TABLE: 'users',
          SQL_WHERE: 'name = {{ where_name }}',
        },
        {
          service: 'sql',
          NAME: 'stmt',
          ...p,
          SQL_STATEMENT_CTRL: 'statement',
          SQL_TABLE: 'orders',
          SQL_WHERE: 'user_id = {{ uid }}',
          SQL_ORDERBY: 'id',
        },
        {
          service: 'sql',
          NAME: 'rawq',
          ...p,
          SQL_RAWMODE: true,
          SQL_RAWACTION: 'query',
          SQL_RAWVALUE: "SELECT name, '$1 costs $$5' AS note FROM users WHERE name = {{ n }} OR name = '{{ n2 }}'",
        },
        {
          service: 'sql',
          NAME: 'rawx',
          ...p,
          SQL_RAWMODE: true,
          SQL_RAWVALUE: 'UPDATE users SET age = age + {{ delta }} WHERE name LIKE {{ n }}',
          SQL_RAWACTION_CTRL: 'action',
          SQL_RAWVALUE_CTRL: 'sql',
        },
      ]));
    });
    after(async () => {
      await node?.stop(2000);
      await db?.close();
    });

    it('SELECT: several placeholders, LIKE with %, NULL as "" in Data and null in List', async () => {
      const r = await call('sel', { pattern: ['%a%'], min_age: ['26'] });
      expect(r.Code, r.Message).to.equal(200);
      expect(names(r)).to.deep.equal(['ann', "o'hara", 'carol']);
      expect(r.Data.email).to.deep.equal(['ann@x.org', '', 'carol@x.org']);
      expect(r.Data.age).to.deep.equal(['30', '', '40']);
      expect(r.Data.rowcount).to.deep.equal(['3']);
      expect(r.List).to.deep.equal([
        { id: 1, name: 'ann', email: 'ann@x.org', age: 30 },
        { id: 3, name: "o'hara", email: null, age: null },
        { id: 4, name: 'carol', email: 'carol@x.org', age: 40 },
      ]);
      // the % and _ are wildcards of the bound value; a quote is just a character
      expect(names(await call('sel', { pattern: ['_o%'], min_age: ['0'] }))).to.deep.equal(['bob']);
      expect(names(await call('sel', { pattern: ["o'%"], min_age: ['0'] }))).to.deep.equal(["o'hara"]);
      expect(names(await call('sel', { pattern: ["x' OR '1'='1"], min_age: ['0'] }))).to.deep.equal([]);
      const none = await call('sel', { pattern: ['nobody'], min_age: ['0'] });
      expect(none.Data.rowcount).to.deep.equal(['0']);
      expect(none.List).to.deep.equal([]);
    });

    it('a missing placeholder value is 400 naming it; unknown Data names are ignored', async () => {
      expect(await call('sel', { pattern: ['%'], other: ['x'] })).to.deep.include({
        Code: 400,
        Message: "Data 'min_age' is missing (it fills a placeholder of SQL_WHERE)",
      });
    });

    it('JOIN with GROUP BY, HAVING, ORDER BY, LIMIT (bound) and OFFSET', async () => {
      const r = await call('join', { min_total: ['6'], min_orders: ['2'], n: ['10'] });
      expect(r.Code, r.Message).to.equal(200);
      expect(names(r)).to.deep.equal(['ann', 'carol']);
      expect(r.Data.orders).to.deep.equal(['2', '3']);
      expect(r.Data.spent!.map(Number)).to.deep.equal([30.5, 115.25]);
      expect(names(await call('join', { min_total: ['6'], min_orders: ['2'], n: ['1'] }))).to.deep.equal(['ann']);
      expect(await call('join', { min_total: ['6'], min_orders: ['2'], n: ['1; DROP TABLE users'] })).to.deep.include({
        Code: 400,
      });
    });

    it('INSERT pairs columns with value parameters; [] inserts NULL; affected (and insertid where the engine has one)', async () => {
      const r = await call('ins', { data_name: ['dave'], data_email: [], data_age: ['51'] });
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.affected).to.deep.equal(['1']);
      if (engine !== 'postgres') expect(r.Data.insertid).to.deep.equal(['5']);
      const rows = await db.rows<{ name: string; email: null; age: number }>(
        "SELECT name, email, age FROM users WHERE name = 'dave'",
      );
      expect(rows).to.deep.equal([{ name: 'dave', email: null, age: 51 }]);
      expect(await call('ins', { data_name: ['x'], data_email: [] })).to.deep.include({
        Code: 400,
        Message: "Data 'data_age' is missing (it fills a placeholder of SQL_VALUEPARAMS)",
      });
    });

    it('a value the database refuses is 400 with its reason (not for SQLite, which stores anything)', async function () {
      if (engine === 'sqlite') this.skip();
      const r = await call('ins', { data_name: ['eve'], data_email: [], data_age: ['not a number'] });
      expect(r.Code, r.Message).to.equal(400);
      expect(r.Message).to.match(/^the database refused the values: /);
      expect(await call('ins', { data_name: [], data_email: [], data_age: ['1'] })).to.deep.include({ Code: 400 });
      if (engine === 'postgres')
        expect(await call('ins', { data_name: ['a\u0000b'], data_email: [], data_age: ['1'] })).to.deep.include({
          Code: 400,
          Message: 'a value contains a NUL character, which PostgreSQL cannot store in text',
        });
    });

    it('UPDATE and DELETE report the affected rows (matched rows, also on MariaDB)', async () => {
      expect((await call('upd', { data_email: ['d@x.org'], where_name: ['dave'] })).Data.affected).to.deep.equal(['1']);
      expect((await call('upd', { data_email: ['d@x.org'], where_name: ['dave'] })).Data.affected).to.deep.equal(['1']);
      expect((await call('upd', { data_email: ['z'], where_name: ['nobody'] })).Data.affected).to.deep.equal(['0']);
      expect((await call('del', { where_name: ['dave'] })).Data.affected).to.deep.equal(['1']);
      expect((await call('del', { where_name: ["' OR '1'='1"] })).Data.affected).to.deep.equal(['0']);
      expect((await db.rows('SELECT id FROM users')).length).to.equal(4);
    });

    it('raw query: rows, bound placeholders (also a quoted one), `$` text unchanged', async () => {
      const r = await call('rawq', { n: ['ann'], n2: ["o'hara"] });
      expect(r.Code, r.Message).to.equal(200);
      expect(names(r).sort()).to.deep.equal(['ann', "o'hara"]);
      expect(r.Data.note).to.deep.equal(['$1 costs $$5', '$1 costs $$5']);
    });

    it('raw exec: affected; SQL_RAWACTION_CTRL switches to query; SQL_RAWVALUE_CTRL is 403 without SQL_ALLOWCLAUSECTRL', async () => {
      const r = await call('rawx', { delta: ['1'], n: ['%o%'] });
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.affected).to.deep.equal(['3']);
      expect((await db.rows<{ age: number | null }>("SELECT age FROM users WHERE name = 'bob'"))[0]!.age).to.equal(26);
      expect(await call('rawx', { delta: ['1'], n: ['%'] }, { sql: ['DELETE FROM users'] })).to.deep.include({
        Code: 403,
      });
      expect((await db.rows('SELECT id FROM users')).length).to.equal(4);
    });

    it('_CTRL overrides: table, columns, order, limit; invalid identifiers 400; clause text 403', async () => {
      const r = await call(
        'all',
        {},
        { table: ['orders'], columns: ['id, total'], order: ['total DESC'], limit: ['2'] },
      );
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.id).to.deep.equal(['6', '2']);
      expect(Object.keys(r.Data).sort()).to.deep.equal(['id', 'rowcount', 'total']);
      expect(names(await call('all'))).to.deep.equal(['ann', 'bob', "o'hara", 'carol']);
      const bad = await call('all', {}, { table: ['users; DROP TABLE users'] });
      expect(bad.Code).to.equal(400);
      expect(bad.Message).to.match(/^control 'table' \(SQL_TABLE\): /);
      expect((await call('all', {}, { columns: ['(SELECT password FROM pg_shadow)'] })).Code).to.equal(400);
      expect((await call('all', {}, { order: ['id; DELETE FROM users'] })).Code).to.equal(400);
      expect((await call('all', {}, { where: ['1=1'] })).Code).to.equal(403);
    });

    it('SQL_STATEMENT_CTRL picks the statement per message (any case); 400 without it', async () => {
      const sel = await call('stmt', { uid: ['4'] }, { statement: ['select'] });
      expect(sel.Data.total!.map(Number)).to.deep.equal([7.25, 8, 100]);
      expect((await call('stmt', { uid: ['4'] }, { statement: ['DeLeTe'] })).Data.affected).to.deep.equal(['3']);
      expect((await call('stmt', { uid: ['4'] })).Code).to.equal(400);
      expect((await call('stmt', { uid: ['4'] }, { statement: ['drop'] })).Code).to.equal(400);
    });

    it('never writes the database password into the log', () => {
      expect(logs()).to.contain('SQL service on channel');
      if (db.password) expect(logs()).not.to.contain(db.password);
    });
  });
}
