/**
 * Names and values the database refuses, on PostgreSQL, MariaDB and SQLite: a configured table or
 * column the database does not have stops the start (SQLite would otherwise answer the name as a
 * string); an override naming one is 400; an override naming a table outside the allow-list or a
 * catalog table is 403; values the engine refuses (a LIKE pattern too complex, a constraint, a value
 * too long) are 400 with the engine's reason, not 502.
 */
import { expect } from 'chai';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness, TestEngine } from './harness.js';
import { TEST_ENGINES, engineAvailable, openEngine } from './harness.js';
import { requireServer } from './servers.js';

/** Catalog tables each engine would answer from, were an override allowed to name them. */
const CATALOG_TABLES: Record<TestEngine, string[]> = {
  sqlite: ['sqlite_master', 'sqlite_schema', 'main.sqlite_master'],
  postgres: ['pg_catalog.pg_tables', 'pg_tables', 'pg_catalog.pg_authid', 'information_schema.tables'],
  mariadb: ['information_schema.tables', 'mysql.user', 'performance_schema.threads'],
};

for (const engine of TEST_ENGINES) {
  describe(`sql names and refused values on ${engine} (adapter)`, function () {
    this.timeout(60_000);
    let db: EngineHarness;
    let node: HiveNode | undefined;
    const call = (
      channel: string,
      data: Record<string, string[]> = {},
      control: Record<string, string[]> = {},
    ): Promise<Result> => node!.hive.call(channel, makeMessage({ Data: mapOf(data), Control: mapOf(control) }), 20_000);
    const startRefused = async (entry: Record<string, string>): Promise<string> => {
      let error: unknown;
      await startTestNode([{ service: 'sql', NAME: 'refused', ...db.params, ...entry }]).then(
        (started) => started.node.stop(2000),
        (e: unknown) => (error = e),
      );
      expect(error, 'the start was not refused').to.be.instanceOf(Error);
      return `${(error as Error).name}: ${(error as Error).message}`;
    };

    before(async function () {
      requireServer(this, engineAvailable(engine), engine);
      db = await openEngine(engine);
      await db.exec(`CREATE TABLE users (${db.serial}, name VARCHAR(5) NOT NULL UNIQUE, email VARCHAR(100) NULL)`);
      await db.exec(`CREATE TABLE orders (${db.serial}, user_id INT NOT NULL, total NUMERIC(10,2) NOT NULL)`);
      await db.exec("INSERT INTO users (name, email) VALUES ('ann', 'ann@x.org'), ('bob', NULL)");
      await db.exec('INSERT INTO orders (user_id, total) VALUES (1, 10.00)');
      const p = db.params;
      ({ node } = await startTestNode([
        {
          service: 'sql',
          NAME: 'pick',
          ...p,
          SQL_STATEMENT: 'select',
          SQL_TABLE: 'users',
          SQL_ORDERBY: 'id',
          SQL_TABLE_CTRL: 'table',
          SQL_COLUMNS_CTRL: 'columns',
          SQL_ORDERBY_CTRL: 'order',
          SQL_ALLOWEDTABLES: 'orders, later',
        },
        {
          service: 'sql',
          NAME: 'narrow',
          ...p,
          SQL_STATEMENT: 'select',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'id, name',
          SQL_COLUMNS_CTRL: 'columns',
          SQL_ALLOWEDCOLUMNS: 'nosuch',
        },
        {
          service: 'sql',
          NAME: 'like',
          ...p,
          SQL_STATEMENT: 'select',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'name',
          SQL_WHERE: 'name LIKE {{ pattern }}',
        },
        {
          service: 'sql',
          NAME: 'ins',
          ...p,
          SQL_STATEMENT: 'insert',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'name, email',
          SQL_VALUEPARAMS: 'name, email',
        },
      ]));
    });
    after(async () => {
      await node?.stop(2000);
      await db?.close();
    });

    it('a configured column or table the database does not have stops the start, naming the parameter and the name', async () => {
      expect(await startRefused({ SQL_STATEMENT: 'select', SQL_TABLE: 'users', SQL_COLUMNS: 'id, nosuch' })).to.equal(
        "ConfigError: SQL_COLUMNS: 'nosuch' is not a column of table 'users'",
      );
      expect(await startRefused({ SQL_STATEMENT: 'select', SQL_TABLE: 'users', SQL_ORDERBY: 'nosuch DESC' })).to.equal(
        "ConfigError: SQL_ORDERBY: 'nosuch' is not a column of table 'users'",
      );
      expect(await startRefused({ SQL_STATEMENT: 'select', SQL_TABLE: 'nosuch' })).to.equal(
        "ConfigError: SQL_TABLE: table 'nosuch' does not exist in the database",
      );
      expect(
        await startRefused({
          SQL_STATEMENT: 'insert',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'name, mail',
          SQL_VALUEPARAMS: 'a, b',
        }),
      ).to.equal("ConfigError: SQL_COLUMNS: 'mail' is not a column of table 'users'");
      expect(
        await startRefused({ SQL_POLLMODE: 'true', SQL_TABLE: 'users', SQL_TRACKCOLUMN: 'idx', SQL_COLUMNS: '*' }),
      ).to.equal("ConfigError: SQL_TRACKCOLUMN: 'idx' is not a column of table 'users'");
    });

    it('an override naming a column or table the database does not have is 400 naming it, never its name as data', async () => {
      const col = await call('pick', {}, { columns: ['nosuch'] });
      expect(col).to.deep.include({
        Code: 400,
        Message: "control 'columns' (SQL_COLUMNS): 'nosuch' is not a column of table 'users'",
      });
      expect(await call('pick', {}, { order: ['nosuch'] })).to.deep.include({
        Code: 400,
        Message: "control 'order' (SQL_ORDERBY): 'nosuch' is not a column of table 'users'",
      });
      expect(await call('narrow', {}, { columns: ['id, nosuch'] })).to.deep.include({ Code: 400 });
      expect(await call('pick', {}, { table: ['later'] })).to.deep.include({
        Code: 400,
        Message: "control 'table' (SQL_TABLE): table 'later' does not exist in the database",
      });
    });

    it('allowed overrides work, also for a table created after the start', async () => {
      const r = await call('pick', {}, { table: ['orders'], columns: ['user_id, total'] });
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.user_id).to.deep.equal(['1']);
      expect((await call('narrow', {}, { columns: ['name'] })).Data.name).to.deep.equal(['ann', 'bob']);
      await db.exec('CREATE TABLE later (id INT)');
      await db.exec('INSERT INTO later (id) VALUES (7)');
      const later = await call('pick', {}, { table: ['later'] });
      expect(later.Code, later.Message).to.equal(200);
      expect(later.Data.id).to.deep.equal(['7']);
    });

    it('an override naming a table outside SQL_ALLOWEDTABLES, or any catalog table, is 403 and reads nothing', async () => {
      for (const table of CATALOG_TABLES[engine]) {
        const r = await call('pick', {}, { table: [table] });
        expect(r.Code, `${table}: ${r.Message}`).to.equal(403);
        expect(r.Message).to.equal(
          `control 'table' (SQL_TABLE): table '${table}' is a catalog table of the database, which overrides may never name`,
        );
        expect(r.List ?? []).to.deep.equal([]);
      }
      expect(await call('pick', {}, { table: ['users2'] })).to.deep.include({
        Code: 403,
        Message: "control 'table' (SQL_TABLE): table 'users2' is neither SQL_TABLE nor listed in SQL_ALLOWEDTABLES",
      });
      expect((await call('narrow', {}, { columns: ['email'] })).Code).to.equal(403);
    });

    it('a LIKE pattern of 100 KB is 400 (SQLite: too complex) or runs; never 502', async () => {
      const r = await call('like', { pattern: ['%'.repeat(100_000)] });
      if (engine === 'sqlite')
        expect(r).to.deep.include({
          Code: 400,
          Message: 'the database refused the values: SQLITE_ERROR: LIKE or GLOB pattern too complex',
        });
      else expect(r.Code, r.Message).to.equal(200);
    });

    it('a unique or NOT NULL violation, a value too long for VARCHAR(5): 400 with the engine’s reason', async () => {
      const dup = await call('ins', { name: ['ann'], email: [] });
      expect(dup.Code, dup.Message).to.equal(400);
      expect(dup.Message).to.match(/^the database refused the values: .*(unique|duplicate)/i);
      const missing = await call('ins', { name: [], email: [] });
      expect(missing.Code, missing.Message).to.equal(400);
      expect(missing.Message).to.match(/null/i);
      // SQLite does not enforce VARCHAR lengths
      if (engine !== 'sqlite') {
        const long = await call('ins', { name: ['toolongname'], email: [] });
        expect(long.Code, long.Message).to.equal(400);
        expect(long.Message).to.match(/too long/i);
      }
      expect((await db.rows('SELECT id FROM users')).length).to.equal(2);
    });
  });
}
