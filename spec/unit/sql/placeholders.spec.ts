import { expect } from 'chai';
import { lexOptions } from '../../../actors/sql/dialect.js';
import type { Dialect } from '../../../actors/sql/dialect.js';
import { splitStatements } from '../../../actors/sql/lexer.js';
import { StatementText, bindValues, displaySql, escapeDollars, parseClause } from '../../../actors/sql/placeholders.js';
import { BadInputError } from '../../../protocol/errors.js';
import { mapOf } from '../../../protocol/message.js';
import { formatBind } from './driver-format.js';

const PG = lexOptions('postgres');
const DIALECTS: Dialect[] = ['postgres', 'mysql', 'mssql', 'oracle', 'sqlite'];

describe('sql placeholders', () => {
  it('finds {{ name }} with or without spaces, several and repeated', () => {
    const c = parseClause('a = {{x}} AND b LIKE {{  y  }} OR c = {{ x }}', PG);
    expect(c.names).to.deep.equal(['x', 'y']);
    expect(c.parts).to.deep.equal([
      { text: 'a = ' },
      { name: 'x' },
      { text: ' AND b LIKE ' },
      { name: 'y' },
      { text: ' OR c = ' },
      { name: 'x' },
    ]);
  });

  it("reads a literal that is exactly '{{ name }}' as the placeholder", () => {
    expect(parseClause("name = '{{ who }}'", PG).parts).to.deep.equal([{ text: 'name = ' }, { name: 'who' }]);
  });

  it('refuses a placeholder inside a longer quoted literal, naming it', () => {
    expect(() => parseClause("name LIKE '%{{ who }}%'", PG)).to.throw(
      /placeholder '\{\{ who \}\}' is inside the quoted text/,
    );
    expect(() => parseClause('"{{ col }}" = 1', PG)).to.throw(/inside the quoted text/);
  });

  it('leaves placeholders in comments as text and keeps braces that are no placeholder in literals', () => {
    const c = parseClause("a = 1 -- not {{ this }}\n AND b = '{{ not a name! }}' /* {{ nor }} */", PG);
    expect(c.names).to.deep.equal([]);
  });

  it('MySQL/MariaDB: -- is a comment only before a blank or control character; 1--{{ x }} is arithmetic', () => {
    const my = lexOptions('mysql');
    expect(parseClause('a = 1--{{ x }}', my).names).to.deep.equal(['x']);
    expect(parseClause('a = 1-- {{ x }}\n AND b = {{ y }}', my).names).to.deep.equal(['y']);
    expect(parseClause('a = 1--\t{{ x }}\n AND b = {{ y }}', my).names).to.deep.equal(['y']);
    expect(splitStatements('SELECT 1--1;\nSELECT 2', my)).to.deep.equal(['SELECT 1--1', 'SELECT 2']);
    // elsewhere (PostgreSQL, SQLite, …) -- always starts a comment
    expect(parseClause('a = 1--{{ x }}\n AND b = {{ y }}', PG).names).to.deep.equal(['y']);
  });

  it('refuses invalid names and an unclosed {{', () => {
    expect(() => parseClause('a = {{ }}', PG)).to.throw(/is not a name/);
    expect(() => parseClause('a = {{ x y }}', PG)).to.throw(/is not a name/);
    expect(() => parseClause("a = {{ x'}}", PG)).to.throw();
    expect(() => parseClause('a = {{ x', PG)).to.throw(/without a matching/);
    expect(() => parseClause("a = 'open", PG)).to.throw(/not closed/);
  });

  it('knows each dialect’s literals: MySQL backslash escapes, SQL Server brackets, PostgreSQL dollar quotes', () => {
    expect(parseClause("a = 'it\\'s' AND b = {{ y }}", lexOptions('mysql')).names).to.deep.equal(['y']);
    expect(() => parseClause("a = 'it\\'s' AND b = {{ y }}", PG)).to.throw(/not closed/);
    expect(() => parseClause("a = 'it\\'s {{ x }}'", lexOptions('mysql'))).to.throw(/inside the quoted text/);
    expect(parseClause('[we{{ird]]x] = {{ y }}', lexOptions('mssql')).names).to.deep.equal(['y']);
    expect(parseClause("$fn$ it's; {{ y $fn$ = {{ y }}", PG).names).to.deep.equal(['y']);
    expect(() => parseClause('$fn$ {{ y }} $fn$', PG)).to.throw(/inside the quoted text/);
  });

  it('binds the first Data value; [] is NULL; a missing name is a 400 naming it', () => {
    const st = new StatementText().text('a = ').param('x', 'SQL_WHERE').text(' AND b = ').param('y', 'SQL_WHERE');
    expect(bindValues(st.params, mapOf({ x: ['1', '2'], y: [] }))).to.deep.equal({ p1: '1', p2: null });
    expect(() => bindValues(st.params, mapOf({ x: ['1'] })))
      .to.throw(BadInputError)
      .with.property('message', "Data 'y' is missing (it fills a placeholder of SQL_WHERE)");
  });

  it('binds LIMIT/OFFSET placeholders as non-negative integers only', () => {
    const st = new StatementText().param('n', 'SQL_LIMIT', 'count');
    expect(bindValues(st.params, mapOf({ n: ['25'] }))).to.deep.equal({ p1: 25 });
    for (const bad of ['-1', '1.5', '1; DROP TABLE t', '', '1e3', '9999999999999999']) {
      expect(() => bindValues(st.params, mapOf({ n: [bad] })), bad).to.throw(
        BadInputError,
        /non-negative whole number/,
      );
    }
  });

  it('a value is never part of the text: only a marker is', () => {
    const st = new StatementText().text('SELECT * FROM t WHERE a = ').param('x', 'SQL_WHERE');
    const sql = st.build();
    expect(sql).to.equal('SELECT * FROM t WHERE a = $p1');
    const [pgText, pgBind] = formatBind('postgres', sql, bindValues(st.params, mapOf({ x: ["' OR 1=1 --"] })));
    expect(pgText).to.equal('SELECT * FROM t WHERE a = $1');
    expect(pgBind).to.deep.equal(["' OR 1=1 --"]);
  });

  it('survives Sequelize’s $ rewriting: configured text reaches every dialect unchanged (property test)', () => {
    const alphabet = ['$', '$', '$', 'a', '1', '_', ' ', "'", '(', ')', 'x', '$$', '$1', '$a'];
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 400; i++) {
      let text = '';
      const len = 1 + rnd(12);
      for (let k = 0; k < len; k++) text += alphabet[rnd(alphabet.length)];
      for (const dialect of DIALECTS) {
        const [out] = formatBind(dialect, escapeDollars(text), {});
        expect(out, `${dialect}: ${JSON.stringify(text)}`).to.equal(text);
      }
      // with markers next to the text: the text stays, the markers become the dialect's parameters
      const st = new StatementText().text(text).param('v', 'SQL_RAWVALUE').text(text);
      const [pg] = formatBind('postgres', st.build(), { p1: 'x' });
      const esc = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      expect(pg, JSON.stringify(text)).to.match(new RegExp(`^${esc} ?\\$1 ?${esc}$`));
      expect(displaySql(st.build()), JSON.stringify(text)).to.match(new RegExp(`^${esc} ?\\$p1 ?${esc}$`));
    }
  });

  it('splits an init script at ; outside literals, comments and dollar quotes', () => {
    const script =
      "CREATE TABLE t (a text); -- c;\nINSERT INTO t VALUES ('x;y');\n/* ; */\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\n\n";
    expect(splitStatements(script, PG)).to.deep.equal([
      'CREATE TABLE t (a text)',
      "INSERT INTO t VALUES ('x;y')",
      'CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql',
    ]);
  });
});
