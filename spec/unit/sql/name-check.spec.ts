/**
 * Names of statements checked against the catalog: on a real SQLite file (the engine that would
 * answer an unknown double-quoted column with its name as a string), plus the catalog queries of the
 * engines without a server here (SQL Server, Oracle) through Sequelize's bind formatting.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { Catalog, columnsQuery } from '../../../actors/sql/catalog.js';
import { databaseOptions } from '../../../actors/sql/connection-options.js';
import { Database } from '../../../actors/sql/database.js';
import type { Dialect } from '../../../actors/sql/dialect.js';
import { NameChecker } from '../../../actors/sql/name-check.js';
import { joinTables, statementNames } from '../../../actors/sql/names.js';
import { Planner } from '../../../actors/sql/planner.js';
import type { SqlConfig } from '../../../actors/sql/planner.js';
import { SettingError } from '../../../actors/sql/statement.js';
import { compileConfig } from '../../../config/resolve.js';
import { SQL_PARAMS } from '../../../config/sql.js';
import { BadInputError, ConfigError } from '../../../protocol/errors.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { tempDir } from '../../temp.js';
import { formatBind } from './driver-format.js';

function config(values: Record<string, string>): SqlConfig {
  return compileConfig('sql', SQL_PARAMS, [{ source: 'test', values: Object.entries(values) }]).values;
}

const names = (
  over: Partial<Record<'SQL_TABLE' | 'SQL_COLUMNS' | 'SQL_JOIN' | 'SQL_GROUPBY' | 'SQL_ORDERBY', string>>,
) =>
  statementNames(
    'sqlite',
    { SQL_TABLE: '', SQL_COLUMNS: '', SQL_JOIN: '', SQL_GROUPBY: '', SQL_ORDERBY: '', ...over },
    'select',
  );

describe('sql names: what a statement names', () => {
  it('reads the tables of a join: after JOIN, after top-level commas, at the start; literals are no tables', () => {
    expect(
      joinTables('sqlite', "LEFT JOIN orders o ON o.uid = u.id AND o.note <> 'JOIN x' JOIN s.items AS i USING (id)")
        .tables,
    ).to.deep.equal([
      { name: 'orders', alias: 'o' },
      { schema: 's', name: 'items', alias: 'i' },
    ]);
    expect(joinTables('sqlite', 'orders ON orders.uid = users.id')).to.deep.equal({
      tables: [{ name: 'orders' }],
      complete: true,
    });
    expect(joinTables('sqlite', ', orders o, items').tables).to.deep.equal([
      { name: 'orders', alias: 'o' },
      { name: 'items' },
    ]);
    expect(joinTables('sqlite', 'JOIN (SELECT 1 AS id) x ON x.id = u.id').complete).to.equal(false);
    expect(joinTables('sqlite', 'JOIN "Orders" o ON o.id = u.id').complete).to.equal(false);
  });

  it('lists the columns of each parameter; select aliases in GROUP BY / ORDER BY are no columns', () => {
    const n = names({
      SQL_TABLE: 'users u',
      SQL_COLUMNS: 'u.name, COUNT(*) AS n, SUM(o.total) AS spent',
      SQL_GROUPBY: 'u.name',
      SQL_ORDERBY: 'spent DESC, u.id',
    });
    expect(n.table).to.deep.equal({ name: 'users', alias: 'u' });
    expect(n.columns).to.deep.equal([
      { param: 'SQL_COLUMNS', column: { qualifier: 'u', name: 'name' } },
      { param: 'SQL_COLUMNS', column: { qualifier: 'o', name: 'total' } },
      { param: 'SQL_GROUPBY', column: { qualifier: 'u', name: 'name' } },
      { param: 'SQL_ORDERBY', column: { qualifier: 'u', name: 'id' } },
    ]);
    expect(names({ SQL_TABLE: 't' }).stars).to.deep.equal(['SQL_COLUMNS']);
  });
});

describe('sql names checked against the catalog (SQLite)', () => {
  let db: Database;
  let checker: NameChecker;
  const fails = async (p: Promise<void> | undefined): Promise<Error> => {
    try {
      await p;
    } catch (e) {
      return e as Error;
    }
    throw new Error('the check passed');
  };

  before(async () => {
    const file = join(tempDir('hn-sqlnames-'), 'n.db');
    db = new Database(databaseOptions(config({ SQL_DATABASE: file })));
    await db.run('exec', 'CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, email TEXT)', {});
    await db.run('exec', 'CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER, total REAL)', {});
    await db.run('exec', 'CREATE TABLE plain (k TEXT PRIMARY KEY) WITHOUT ROWID', {});
    checker = new NameChecker('sqlite', new Catalog(db));
  });
  after(() => db.close());

  it('known names pass, once per statement (the second check is no promise)', async () => {
    const n = names({
      SQL_TABLE: 'USERS u',
      SQL_COLUMNS: 'u.id, Name, COUNT(o.total) AS c',
      SQL_JOIN: 'JOIN orders o ON o.user_id = u.id',
      SQL_ORDERBY: 'c',
    });
    await checker.check(n);
    expect(checker.check(n)).to.equal(undefined);
    await checker.check(names({ SQL_TABLE: 'main.users', SQL_COLUMNS: 'email' }));
    // SQLite's rowid is a column of every table but those WITHOUT ROWID
    await checker.check(names({ SQL_TABLE: 'users', SQL_ORDERBY: 'rowid' }));
    await checker.check(names({ SQL_TABLE: 'main.users', SQL_ORDERBY: '_rowid_' }));
    expect(await fails(checker.check(names({ SQL_TABLE: 'plain', SQL_ORDERBY: 'rowid' })))).to.deep.include({
      message: "'rowid' is not a column of table 'plain'",
    });
    expect(await fails(checker.check(names({ SQL_TABLE: 'other.users' })))).to.deep.include({
      message: "table 'other.users' does not exist in the database",
    });
  });

  it('an unknown table or column is a SettingError naming the parameter and the name', async () => {
    const table = await fails(checker.check(names({ SQL_TABLE: 'nosuch' })));
    expect(table)
      .to.be.instanceOf(SettingError)
      .and.deep.include({ param: 'SQL_TABLE', message: "table 'nosuch' does not exist in the database" });
    expect(await fails(checker.check(names({ SQL_TABLE: 'users', SQL_COLUMNS: 'id, nosuch' })))).to.deep.include({
      param: 'SQL_COLUMNS',
      message: "'nosuch' is not a column of table 'users'",
    });
    expect(await fails(checker.check(names({ SQL_TABLE: 'users', SQL_ORDERBY: 'nosuch DESC' })))).to.deep.include({
      param: 'SQL_ORDERBY',
    });
    expect(await fails(checker.check(names({ SQL_TABLE: 'users u', SQL_GROUPBY: 'u.nosuch' })))).to.deep.include({
      param: 'SQL_GROUPBY',
      message: "'u.nosuch' is not a column of table 'users'",
    });
    const joined = await fails(
      checker.check(
        names({ SQL_TABLE: 'users u', SQL_COLUMNS: 'nosuch', SQL_JOIN: 'JOIN orders o ON o.user_id = u.id' }),
      ),
    );
    expect(joined.message).to.equal("'nosuch' is not a column of tables 'users', 'orders'");
    expect(
      await fails(
        checker.check(
          names({ SQL_TABLE: 'users u', SQL_COLUMNS: 'o.nosuch', SQL_JOIN: 'JOIN orders o ON o.user_id = u.id' }),
        ),
      ),
    ).to.deep.include({ message: "'o.nosuch' is not a column of table 'orders'" });
  });

  it('a join it cannot read leaves unqualified columns it cannot place unchecked', async () => {
    await checker.check(
      names({ SQL_TABLE: 'users u', SQL_COLUMNS: 'u.id, x.n', SQL_JOIN: 'JOIN (SELECT 1 AS n) x ON 1 = 1' }),
    );
    await checker.check(names({ SQL_TABLE: 'users u', SQL_COLUMNS: 'n', SQL_JOIN: 'JOIN (SELECT 1 AS n) x ON 1 = 1' }));
  });

  it('tables and columns created after the first look are found (the cache is read again on a miss)', async () => {
    await fails(checker.check(names({ SQL_TABLE: 'later' })));
    await db.run('exec', 'CREATE TABLE later (id INTEGER)', {});
    await checker.check(names({ SQL_TABLE: 'later', SQL_COLUMNS: 'id' }));
    await fails(checker.check(names({ SQL_TABLE: 'later', SQL_COLUMNS: 'added' })));
    await db.run('exec', 'ALTER TABLE later ADD COLUMN added TEXT', {});
    await checker.check(names({ SQL_TABLE: 'later', SQL_COLUMNS: 'added' }));
  });

  it('the planner: an unknown override is 400 naming the control; an unknown configured name a ConfigError', async () => {
    const p = new Planner(
      config({
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'users',
        SQL_COLUMNS_CTRL: 'columns',
        SQL_TABLE_CTRL: 'table',
        SQL_ALLOWEDTABLES: 'orders, ghost',
      }),
      'sqlite',
      checker,
    );
    await p.checkConfigured();
    const plan = p.planFor(makeMessage({ Control: mapOf({ columns: ['ghost'] }) }));
    expect(await fails(p.verify(plan)))
      .to.be.instanceOf(BadInputError)
      .with.property('message', "control 'columns' (SQL_COLUMNS): 'ghost' is not a column of table 'users'");
    expect(await fails(p.verify(p.planFor(makeMessage({ Control: mapOf({ table: ['ghost'] }) })))))
      .to.be.instanceOf(BadInputError)
      .with.property('message', "control 'table' (SQL_TABLE): table 'ghost' does not exist in the database");
    const bad = new Planner(
      config({ SQL_STATEMENT: 'select', SQL_TABLE: 'users', SQL_COLUMNS: 'id, nmae' }),
      'sqlite',
      checker,
    );
    expect(await fails(bad.checkConfigured()))
      .to.be.instanceOf(ConfigError)
      .with.property('message', "SQL_COLUMNS: 'nmae' is not a column of table 'users'");
    // a statement left to a control: the set parameters are checked all the same
    const pieces = new Planner(
      config({ SQL_STATEMENT_CTRL: 'statement', SQL_TABLE: 'users', SQL_ORDERBY: 'nmae' }),
      'sqlite',
      checker,
    );
    expect(await fails(pieces.checkConfigured()))
      .to.be.instanceOf(ConfigError)
      .with.property('message', "SQL_ORDERBY: 'nmae' is not a column of table 'users'");
  });
});

describe('sql catalog queries of every engine (SQL Server and Oracle generated only, not run)', () => {
  const driverView = (dialect: Dialect, q: { sql: string; bind: Record<string, unknown> }): [string, unknown] =>
    formatBind(dialect, q.sql, q.bind);

  it('binds the table (and schema) as values, never as text', () => {
    expect(driverView('postgres', columnsQuery('postgres', { schema: 'public', name: 'users' }))).to.deep.equal([
      'SELECT attname AS name FROM pg_catalog.pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped',
      ['"public"."users"'],
    ]);
    expect(driverView('mysql', columnsQuery('mysql', { name: 'users' }))).to.deep.equal([
      'SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
      [null, 'users'],
    ]);
    expect(driverView('mssql', columnsQuery('mssql', { schema: 'dbo', name: 'users' }))).to.deep.equal([
      'SELECT COLUMN_NAME AS name FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = COALESCE(@p1, SCHEMA_NAME()) AND TABLE_NAME = @p2',
      { p1: 'dbo', p2: 'users' },
    ]);
    expect(driverView('oracle', columnsQuery('oracle', { name: 'USERS' }))).to.deep.equal([
      "SELECT COLUMN_NAME AS \"name\" FROM ALL_TAB_COLUMNS WHERE OWNER = COALESCE(:p1, SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA')) AND TABLE_NAME = :p2",
      { p1: null, p2: 'USERS' },
    ]);
  });
});
