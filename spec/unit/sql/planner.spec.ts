import { expect } from 'chai';
import { compileConfig } from '../../../config/resolve.js';
import { SQL_PARAMS } from '../../../config/sql.js';
import { Planner } from '../../../actors/sql/planner.js';
import type { SqlConfig } from '../../../actors/sql/planner.js';
import { BadInputError, ConfigError, ForbiddenError } from '../../../protocol/errors.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';

function config(values: Record<string, string>): SqlConfig {
  return compileConfig('sql', SQL_PARAMS, [{ source: 'test', values: Object.entries(values) }]).values;
}
const planner = (values: Record<string, string>): Planner => new Planner(config(values), 'postgres');
const withControl = (control: Record<string, string[]>) => makeMessage({ Control: mapOf(control) });

describe('sql planner: _CTRL overrides', () => {
  const base = { SQL_STATEMENT: 'select', SQL_TABLE: 'users', SQL_WHERE: 'id = {{ id }}' };

  it('uses the configured statement when no control is given, the same plan every time', () => {
    const p = planner({ ...base, SQL_TABLE_CTRL: 'table' });
    const a = p.planFor(makeMessage());
    expect(a.sql).to.equal('SELECT * FROM "users" WHERE (id = $p1)');
    expect(p.planFor(makeMessage())).to.equal(a);
  });

  it('a control named by X_CTRL overrides X for that message (first value); identifiers are validated → 400', () => {
    const p = planner({
      ...base,
      SQL_TABLE_CTRL: 'table',
      SQL_COLUMNS_CTRL: 'columns',
      SQL_STATEMENT_CTRL: 'statement',
      SQL_ORDERBY_CTRL: 'order',
      SQL_LIMIT_CTRL: 'limit',
      SQL_ALLOWEDTABLES: 'orders',
    });
    expect(
      p.planFor(
        withControl({ table: ['orders', 'ignored'], columns: ['id, total'], order: ['total desc'], limit: ['5'] }),
      ).sql,
    ).to.equal('SELECT "id", "total" FROM "orders" WHERE (id = $p1) ORDER BY "total" DESC LIMIT 5');
    expect(p.planFor(withControl({ statement: ['DELETE'] })).sql).to.equal('DELETE FROM "users" WHERE id = $p1');
    expect(() => p.planFor(withControl({ table: ['users; DROP TABLE users'] })))
      .to.throw(BadInputError)
      .with.property('message')
      .that.matches(/^control 'table' \(SQL_TABLE\): table 'users; DROP TABLE users' is not/);
    expect(() => p.planFor(withControl({ limit: ['1 UNION SELECT 1'] }))).to.throw(
      BadInputError,
      /control 'limit' \(SQL_LIMIT\)/,
    );
    expect(() => p.planFor(withControl({ statement: ['TRUNCATE'] }))).to.throw(
      BadInputError,
      /control 'statement' \(SQL_STATEMENT\)/,
    );
  });

  it('controls not configured as _CTRL are ignored', () => {
    const p = planner(base);
    expect(p.planFor(withControl({ table: ['x'], SQL_TABLE: ['y'], where: ['1=1'] })).sql).to.equal(
      'SELECT * FROM "users" WHERE (id = $p1)',
    );
  });

  it('clause text from a control is 403 unless SQL_ALLOWCLAUSECTRL=true', () => {
    const refused = planner({ ...base, SQL_WHERE_CTRL: 'where', SQL_JOIN_CTRL: 'join' });
    expect(refused.refusedClauseControls()).to.deep.equal(["SQL_JOIN_CTRL='join'", "SQL_WHERE_CTRL='where'"]);
    expect(() => refused.planFor(withControl({ where: ['1=1'] })))
      .to.throw(ForbiddenError)
      .with.property(
        'message',
        "control 'where' would replace the SQL text of SQL_WHERE; set SQL_ALLOWCLAUSECTRL=true to allow clause text from messages",
      );
    const allowed = planner({ ...base, SQL_WHERE_CTRL: 'where', SQL_ALLOWCLAUSECTRL: 'true' });
    expect(allowed.planFor(withControl({ where: ['name = {{ n }}'] })).sql).to.equal(
      'SELECT * FROM "users" WHERE (name = $p1)',
    );
    // even allowed clause text is one statement with bound placeholders
    expect(() => allowed.planFor(withControl({ where: ['1=1; DROP TABLE users'] }))).to.throw(
      BadInputError,
      /';' outside quotes/,
    );
    const raw = planner({
      SQL_RAWMODE: 'true',
      SQL_RAWVALUE: 'SELECT 1',
      SQL_RAWVALUE_CTRL: 'sql',
      SQL_RAWACTION_CTRL: 'action',
    });
    expect(() => raw.planFor(withControl({ sql: ['DROP TABLE users'] }))).to.throw(ForbiddenError);
    expect(raw.planFor(withControl({ action: ['query'] })).kind).to.equal('query');
  });

  it('a statement left to a control: 400 without it; the set parameters are still checked at start', () => {
    const p = planner({ SQL_STATEMENT_CTRL: 'statement', SQL_TABLE: 'users' });
    expect(p.configured).to.equal(undefined);
    expect(() => p.planFor(makeMessage())).to.throw(
      BadInputError,
      "no statement: SQL_STATEMENT is empty and control 'statement' was not given",
    );
    expect(p.planFor(withControl({ statement: ['select'] })).sql).to.equal('SELECT * FROM "users"');
    expect(() => planner({ SQL_STATEMENT_CTRL: 'statement', SQL_TABLE: 'users;' })).to.throw(
      ConfigError,
      /^SQL_TABLE:/,
    );
  });

  it('an overridden table must be SQL_TABLE or in SQL_ALLOWEDTABLES, and never a catalog table → 403', () => {
    const p = planner({ ...base, SQL_TABLE_CTRL: 'table', SQL_ALLOWEDTABLES: 'orders, archive.orders' });
    expect(p.planFor(withControl({ table: ['users'] })).sql).to.equal('SELECT * FROM "users" WHERE (id = $p1)');
    expect(p.planFor(withControl({ table: ['archive.orders o'] })).sql).to.equal(
      'SELECT * FROM "archive"."orders" "o" WHERE (id = $p1)',
    );
    expect(() => p.planFor(withControl({ table: ['secrets'] })))
      .to.throw(ForbiddenError)
      .with.property(
        'message',
        "control 'table' (SQL_TABLE): table 'secrets' is neither SQL_TABLE nor listed in SQL_ALLOWEDTABLES",
      );
    for (const [dialect, table] of [
      ['sqlite', 'sqlite_master'],
      ['sqlite', 'main.sqlite_schema'],
      ['postgres', 'pg_catalog.pg_tables'],
      ['postgres', 'pg_tables'],
      ['postgres', 'information_schema.tables'],
      ['mysql', 'mysql.user'],
      ['mysql', 'information_schema.tables'],
      ['mssql', 'sys.tables'],
    ] as const) {
      const cp = new Planner(config({ ...base, SQL_TABLE_CTRL: 'table', SQL_ALLOWEDTABLES: 'orders' }), dialect);
      expect(() => cp.planFor(withControl({ table: [table] })), `${dialect} ${table}`)
        .to.throw(ForbiddenError)
        .with.property('message')
        .that.matches(/is a catalog table of the database, which overrides may never name$/);
      // listing one does not help: the start is refused
      expect(
        () => new Planner(config({ ...base, SQL_TABLE_CTRL: 'table', SQL_ALLOWEDTABLES: table }), dialect),
        `${dialect} ${table}`,
      ).to.throw(ConfigError, /^SQL_ALLOWEDTABLES: .* is a catalog table/);
    }
    // a table control with nothing it may name cannot work
    expect(() => planner({ SQL_STATEMENT_CTRL: 'statement', SQL_TABLE_CTRL: 'table' })).to.throw(
      ConfigError,
      /^SQL_TABLE_CTRL: .*SQL_ALLOWEDTABLES/,
    );
  });

  it('overridden columns must be configured or in SQL_ALLOWEDCOLUMNS (any when SQL_COLUMNS selects *) → 403', () => {
    const listed = planner({
      ...base,
      SQL_COLUMNS: 'id, name',
      SQL_ORDERBY: 'id',
      SQL_COLUMNS_CTRL: 'columns',
      SQL_ORDERBY_CTRL: 'order',
      SQL_ALLOWEDCOLUMNS: 'email',
    });
    expect(listed.planFor(withControl({ columns: ['name, COUNT(email) AS n'], order: ['n'] })).sql).to.equal(
      'SELECT "name", COUNT("email") AS "n" FROM "users" WHERE (id = $p1) ORDER BY "n"',
    );
    expect(() => listed.planFor(withControl({ columns: ['id, password'] })))
      .to.throw(ForbiddenError)
      .with.property(
        'message',
        "control 'columns' (SQL_COLUMNS): column 'password' is neither configured nor listed in SQL_ALLOWEDCOLUMNS",
      );
    expect(() => listed.planFor(withControl({ order: ['u.password DESC'] }))).to.throw(
      ForbiddenError,
      /control 'order' \(SQL_ORDERBY\): column 'password'/,
    );
    expect(() => listed.planFor(withControl({ columns: ['*'] }))).to.throw(
      ForbiddenError,
      /'\*' would select columns beyond SQL_ALLOWEDCOLUMNS/,
    );
    const star = planner({ ...base, SQL_COLUMNS_CTRL: 'columns' });
    expect(star.planFor(withControl({ columns: ['password'] })).sql).to.equal(
      'SELECT "password" FROM "users" WHERE (id = $p1)',
    );
    const all = planner({ ...base, SQL_COLUMNS: 'id', SQL_COLUMNS_CTRL: 'columns', SQL_ALLOWEDCOLUMNS: '*' });
    expect(all.planFor(withControl({ columns: ['*'] })).sql).to.equal('SELECT * FROM "users" WHERE (id = $p1)');
    expect(() => planner({ ...base, SQL_ALLOWEDCOLUMNS: 'a b' })).to.throw(ConfigError, /^SQL_ALLOWEDCOLUMNS: /);
  });

  it('configuration errors stop the start naming the parameter', () => {
    expect(() => planner({})).to.throw(ConfigError, /SQL_STATEMENT is required/);
    expect(() => planner({ SQL_STATEMENT: 'select', SQL_TABLE: 'a b c' })).to.throw(ConfigError, /^SQL_TABLE:/);
    expect(() =>
      planner({ SQL_STATEMENT: 'insert', SQL_TABLE: 't', SQL_COLUMNS: 'a', SQL_VALUEPARAMS: 'x,y' }),
    ).to.throw(ConfigError, /^SQL_VALUEPARAMS:/);
    expect(() => planner({ SQL_RAWMODE: 'true' })).to.throw(ConfigError, /raw mode needs SQL_RAWVALUE/);
    // a parameter the configured statement does not use stays unread, as before
    expect(
      planner({ SQL_STATEMENT: 'insert', SQL_TABLE: 't', SQL_COLUMNS: 'a', SQL_VALUEPARAMS: 'x', SQL_GROUPBY: 'a b' })
        .configured!.sql,
    ).to.equal('INSERT INTO "t" ("a") VALUES ($p1)');
  });
});
