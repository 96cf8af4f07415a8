import { expect } from 'chai';
import { compileConfig } from '../../../config/resolve.js';
import { SQL_PARAMS } from '../../../config/sql.js';
import type { Dialect } from '../../../actors/sql/dialect.js';
import { lexOptions } from '../../../actors/sql/dialect.js';
import { Planner } from '../../../actors/sql/planner.js';
import { displaySql } from '../../../actors/sql/placeholders.js';
import type { SqlConfig } from '../../../actors/sql/planner.js';
import type { TransactionPlan } from '../../../actors/sql/raw-transaction.js';
import {
  TRANSACTION_STATEMENT_LIMIT,
  TooManyStatementsError,
  buildRawTransaction,
  returnsRows,
  transactionResult,
} from '../../../actors/sql/raw-transaction.js';
import { SettingError } from '../../../actors/sql/statement.js';
import { BadInputError, ConfigError, ForbiddenError, TooLargeError } from '../../../protocol/errors.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';

const build = (text: string, dialect: Dialect = 'postgres', action = 'exec'): TransactionPlan =>
  buildRawTransaction(dialect, { SQL_RAWACTION: action, SQL_RAWVALUE: text });
const texts = (plan: TransactionPlan): string[] => plan.statements.map((s) => s.sql);

function config(values: Record<string, string>): SqlConfig {
  return compileConfig('sql', SQL_PARAMS, [{ source: 'test', values: Object.entries(values) }]).values;
}

describe('sql raw transactions: splitting and planning', () => {
  it('splits at ; outside string literals, quoted identifiers, comments and dollar quotes', () => {
    const plan = build(`INSERT INTO t VALUES ('a;b', 'it''s;'); SELECT "x;y" FROM t -- one; comment
      ; /* block; comment */ UPDATE t SET a = $$c;d$$; CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; SELECT 2; $body$ LANGUAGE sql`);
    // as the engine receives them (the $ of the text survives Sequelize's bind rewriting)
    expect(texts(plan).map(displaySql)).to.deep.equal([
      "INSERT INTO t VALUES ('a;b', 'it''s;')",
      'SELECT "x;y" FROM t -- one; comment',
      'UPDATE t SET a = $$c;d$$',
      'CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; SELECT 2; $body$ LANGUAGE sql',
    ]);
  });

  it('reads each dialect’s own quotes: MySQL backticks and backslash escapes, SQL Server brackets', () => {
    expect(texts(build("SELECT `a;b`, 'x\\';y' FROM t; SELECT 2", 'mysql'))).to.deep.equal([
      "SELECT `a;b`, 'x\\';y' FROM t",
      'SELECT 2',
    ]);
    expect(texts(build('SELECT [a;b] FROM t; SELECT 2', 'mssql'))).to.deep.equal(['SELECT [a;b] FROM t', 'SELECT 2']);
    // MySQL's # comments run to the end of the line; elsewhere # is no comment
    expect(texts(build('# first; comment\nSELECT 1 # a; b\n; SELECT 2', 'mysql'))).to.deep.equal([
      'SELECT 1 # a; b',
      'SELECT 2',
    ]);
    expect(build('# first; comment\nSELECT 1', 'mysql').statements[0]!.kind).to.equal('query');
    expect(texts(build("SELECT '#'; SELECT 2", 'postgres'))).to.have.length(2);
    // outside PostgreSQL a $ is no quote: the ; splits
    expect(texts(build('SELECT $$a; SELECT b$$', 'sqlite'))).to.have.length(2);
  });

  it('ignores empty statements: ;;, a trailing ;, statements of only comments', () => {
    expect(texts(build(';; SELECT 1;;\n -- nothing here\n; /* nor here */ ; SELECT 2;\n'))).to.deep.equal([
      'SELECT 1',
      'SELECT 2',
    ]);
    expect(() => build(' ;; -- only a comment\n;')).to.throw(SettingError, 'raw mode needs the SQL text');
  });

  it('an unterminated literal or comment names SQL_RAWVALUE', () => {
    expect(() => build("SELECT 'open; SELECT 2"))
      .to.throw(SettingError, "a ' quote is not closed")
      .with.property('param', 'SQL_RAWVALUE');
    expect(() => build('SELECT 1; /* open')).to.throw(SettingError, 'a /* comment is not closed');
  });

  it('refuses statements that would begin, commit or roll back the transaction itself', () => {
    for (const t of [
      'BEGIN',
      'begin transaction',
      'START TRANSACTION',
      'COMMIT',
      'commit work',
      'END',
      'ROLLBACK',
      'rollback work',
      'ABORT',
    ]) {
      expect(() => build(`INSERT INTO t VALUES (1); ${t}; SELECT 1`), t)
        .to.throw(
          SettingError,
          /^statement 2 of 3: '\w+' would end or nest the transaction; the service begins it and commits or rolls it back$/,
        )
        .with.property('param', 'SQL_RAWVALUE');
    }
    expect(
      build('SAVEPOINT a; INSERT INTO t VALUES (1); ROLLBACK TO SAVEPOINT a; rollback work to a; RELEASE SAVEPOINT a')
        .statements,
    ).to.have.length(5);
    expect(build("SELECT 'commit'; SELECT 1 AS begin_at").statements).to.have.length(2);
    // SQL Server: a BEGIN … END block is no transaction
    expect(build('BEGIN SELECT 1 END', 'mssql').statements).to.have.length(1);
    expect(() => build('BEGIN TRAN; SELECT 1', 'mssql')).to.throw(SettingError, /would end or nest/);
  });

  it(`holds at most ${TRANSACTION_STATEMENT_LIMIT} statements`, () => {
    const script = (n: number): string => Array.from({ length: n }, (_, i) => `SELECT ${i}`).join(';\n');
    expect(build(script(TRANSACTION_STATEMENT_LIMIT)).statements).to.have.length(TRANSACTION_STATEMENT_LIMIT);
    expect(() => build(script(TRANSACTION_STATEMENT_LIMIT + 1)))
      .to.throw(
        TooManyStatementsError,
        `${TRANSACTION_STATEMENT_LIMIT + 1} statements; a raw transaction holds at most ${TRANSACTION_STATEMENT_LIMIT}`,
      )
      .with.property('param', 'SQL_RAWVALUE');
    // empty statements do not count
    expect(build(`${script(TRANSACTION_STATEMENT_LIMIT)};;;;`).statements).to.have.length(TRANSACTION_STATEMENT_LIMIT);
  });

  it('binds placeholders per statement: each statement has its own parameters, named in errors', () => {
    const plan = build(
      "INSERT INTO t VALUES ({{ a }}, {{ b }}); UPDATE t SET b = {{ b }} WHERE a = '{{ a }}'; SELECT 1",
    );
    expect(plan.statements.map((s) => [s.sql, s.params.map((p) => `${p.key}=${p.name}`)])).to.deep.equal([
      ['INSERT INTO t VALUES ($p1, $p2)', ['p1=a', 'p2=b']],
      ['UPDATE t SET b = $p1 WHERE a = $p2', ['p1=b', 'p2=a']],
      ['SELECT 1', []],
    ]);
    expect(plan.statements[1]!.params[0]!.use).to.equal('SQL_RAWVALUE statement 2 of 3');
    expect(plan.params.map((p) => p.name)).to.deep.equal(['a', 'b']);
    expect(() => build("SELECT 1; SELECT 'x{{ a }}'")).to.throw(
      SettingError,
      /^statement 2 of 2: placeholder '\{\{ a \}\}' is inside the quoted text/,
    );
  });

  it('reads which statements return rows; SQL_RAWACTION=query makes the last one a query', () => {
    const lex = lexOptions('postgres');
    for (const t of [
      'SELECT 1',
      'select 1',
      '(SELECT 1) UNION (SELECT 2)',
      'WITH x AS (SELECT 1) SELECT * FROM x',
      'VALUES (1)',
      'SHOW search_path',
      'EXPLAIN SELECT 1',
      'PRAGMA table_info(t)',
      'INSERT INTO t VALUES (1) RETURNING id',
      'DELETE FROM t\nRETURNING *',
    ]) {
      expect(returnsRows(t, lex), t).to.equal(true);
    }
    for (const t of [
      'INSERT INTO t VALUES (1)',
      "INSERT INTO t VALUES ('returning')",
      'UPDATE t SET a = 1 -- returning',
      'CALL p()',
      'CREATE TABLE selected (a int)',
      'DELETE FROM t',
    ]) {
      expect(returnsRows(t, lex), t).to.equal(false);
    }
    expect(returnsRows('INSERT INTO t OUTPUT inserted.id VALUES (1)', lexOptions('mssql'))).to.equal(true);
    expect(build('INSERT INTO t VALUES (1); SELECT 1; CALL p()').statements.map((s) => s.kind)).to.deep.equal([
      'exec',
      'query',
      'exec',
    ]);
    expect(
      build('INSERT INTO t VALUES (1); SELECT 1; CALL p()', 'postgres', 'query').statements.map((s) => s.kind),
    ).to.deep.equal(['exec', 'query', 'query']);
    expect(() => build('SELECT 1', 'postgres', 'fetch'))
      .to.throw(SettingError)
      .with.property('param', 'SQL_RAWACTION');
  });

  it('answers affected per statement and the rows of the last statement that returned rows', () => {
    const r = transactionResult([
      { affected: 1, insertId: 7 },
      { rows: [{ a: 1 }], columns: ['a'] },
      { affected: 3 },
      { rows: [{ b: 'x' }, { b: null }], columns: ['b'] },
    ]);
    expect(r.Code).to.equal(200);
    expect({ ...r.Data }).to.deep.equal({ affected: ['1', '1', '3', '2'], b: ['x', ''], rowcount: ['2'] });
    expect(r.List).to.deep.equal([{ b: 'x' }, { b: null }]);
    const writes = transactionResult([{ affected: 2 }, { affected: 0 }]);
    expect({ ...writes.Data }).to.deep.equal({ affected: ['2', '0'] });
    expect(writes.List).to.deep.equal([]);
  });
});

describe('sql raw mode without SQL_RAWTRANSACTION: one statement', () => {
  const single = (values: Record<string, string>): Planner =>
    new Planner(config({ SQL_RAWMODE: 'true', ...values }), 'sqlite');
  const withControl = (control: Record<string, string[]>) => makeMessage({ Control: mapOf(control) });

  it('several statements stop the start (SQLite would run the first and drop the rest), naming SQL_RAWTRANSACTION; a trailing ; is one statement', () => {
    expect(() => single({ SQL_RAWVALUE: "INSERT INTO t VALUES ('one'); INSERT INTO t VALUES ('two')" })).to.throw(
      ConfigError,
      "SQL_RAWVALUE: holds 2 statements separated by ';': raw mode runs one; set SQL_RAWTRANSACTION to true",
    );
    expect(single({ SQL_RAWVALUE: "SELECT ';' AS x; -- done" }).configured?.kind).to.equal('exec');
  });

  it('an override with several statements is a 400 and runs nothing', () => {
    const p = single({ SQL_RAWVALUE: 'SELECT 1', SQL_RAWVALUE_CTRL: 'sql', SQL_ALLOWCLAUSECTRL: 'true' });
    expect(() => p.planFor(withControl({ sql: ['DELETE FROM t; SELECT 1'] }))).to.throw(
      BadInputError,
      "control 'sql' (SQL_RAWVALUE): holds 2 statements",
    );
  });
});

describe('sql raw transactions: the planner', () => {
  const planner = (values: Record<string, string>): Planner =>
    new Planner(config({ SQL_RAWMODE: 'true', SQL_RAWTRANSACTION: 'true', ...values }), 'postgres');
  const withControl = (control: Record<string, string[]>) => makeMessage({ Control: mapOf(control) });

  it('the configured text is one transaction plan; too many statements stop the start naming SQL_RAWVALUE', () => {
    const p = planner({ SQL_RAWVALUE: 'INSERT INTO t VALUES ({{ a }}); SELECT 1' });
    expect(p.configured?.kind).to.equal('transaction');
    expect(p.planFor(makeMessage())).to.equal(p.configured);
    const many = Array.from({ length: 101 }, () => 'SELECT 1').join(';');
    expect(() => planner({ SQL_RAWVALUE: many })).to.throw(
      ConfigError,
      'SQL_RAWVALUE: 101 statements; a raw transaction holds at most 100',
    );
    expect(() => planner({ SQL_RAWVALUE: "SELECT 1; SELECT 'x" })).to.throw(
      ConfigError,
      "SQL_RAWVALUE: a ' quote is not closed",
    );
  });

  it('the override path: 403 without SQL_ALLOWCLAUSECTRL; with it split into a transaction, 413 over the limit, 400 for bad text', () => {
    expect(() =>
      planner({ SQL_RAWVALUE: 'SELECT 1', SQL_RAWVALUE_CTRL: 'sql' }).planFor(
        withControl({ sql: ['DELETE FROM t; SELECT 1'] }),
      ),
    ).to.throw(ForbiddenError);
    const p = planner({ SQL_RAWVALUE: 'SELECT 1', SQL_RAWVALUE_CTRL: 'sql', SQL_ALLOWCLAUSECTRL: 'true' });
    const plan = p.planFor(withControl({ sql: ['DELETE FROM t WHERE a = {{ a }}; SELECT {{ a }} AS a;'] }));
    expect(plan.kind).to.equal('transaction');
    expect(texts(plan as TransactionPlan)).to.deep.equal(['DELETE FROM t WHERE a = $p1', 'SELECT $p1 AS a']);
    expect(() => p.planFor(withControl({ sql: [Array.from({ length: 101 }, () => 'SELECT 1').join(';')] })))
      .to.throw(TooLargeError)
      .with.property('message', "control 'sql' (SQL_RAWVALUE): 101 statements; a raw transaction holds at most 100");
    expect(() => p.planFor(withControl({ sql: ["SELECT 1; SELECT 'x"] }))).to.throw(
      BadInputError,
      "control 'sql' (SQL_RAWVALUE): a ' quote is not closed",
    );
    expect(() => p.planFor(withControl({ sql: [';;'] }))).to.throw(
      BadInputError,
      "control 'sql' (SQL_RAWVALUE): raw mode needs the SQL text",
    );
  });

  it('without SQL_RAWTRANSACTION raw mode plans one statement as before', () => {
    const p = new Planner(config({ SQL_RAWMODE: 'true', SQL_RAWVALUE: 'SELECT 1' }), 'postgres');
    expect(p.configured?.kind).to.equal('exec');
  });
});
