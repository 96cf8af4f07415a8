import { expect } from 'chai';
import { Sequelize } from 'sequelize';
import type { Dialect } from '../../../actors/sql/dialect.js';
import { quoteName, quotePart } from '../../../actors/sql/dialect.js';
import {
  quoteGroupBy,
  quoteOrderBy,
  quotePlainColumns,
  quoteSelectColumns,
  quoteTable,
} from '../../../actors/sql/identifiers.js';

const DIALECTS: Dialect[] = ['postgres', 'mysql', 'mssql', 'oracle', 'sqlite'];
const Q: Record<Dialect, (s: string) => string> = {
  postgres: (s) => `"${s}"`,
  oracle: (s) => `"${s}"`,
  sqlite: (s) => `"${s}"`,
  mysql: (s) => `\`${s}\``,
  mssql: (s) => `[${s}]`,
};

/** Identifier texts that must never reach SQL: quotes of every dialect, comments, separators, expressions. */
const HOSTILE = [
  'users; DROP TABLE users',
  'users--',
  'users/*x*/',
  'a"b',
  'a`b',
  'a]b',
  'a[b',
  "a'b",
  'a b c',
  '1abc',
  'a.b.c.d',
  'a..b',
  '(SELECT 1)',
  'pg_sleep(5)',
  'a\u0000b',
  'ä',
  'a\nb',
  'a = 1',
  '*/',
  '',
];

describe('sql identifiers: validated and quoted for all five dialect families', () => {
  for (const d of DIALECTS) {
    describe(d, () => {
      const q = Q[d];
      it('quotes names, qualified names and aliases', () => {
        expect(quotePart(d, 'users')).to.equal(q('users'));
        expect(quoteName(d, 'app.users')).to.equal(`${q('app')}.${q('users')}`);
        expect(quoteTable(d, 'users')).to.equal(q('users'));
        expect(quoteTable(d, 'app.users u')).to.equal(`${q('app')}.${q('users')} ${q('u')}`);
        expect(quoteTable(d, 'users AS u')).to.equal(`${q('users')} ${q('u')}`);
      });

      it('quotes select lists: *, table.*, table.column, aggregates, aliases', () => {
        expect(quoteSelectColumns(d, '')).to.deep.equal({ sql: '*', keys: ['*'] });
        const cols = quoteSelectColumns(d, 'id, u.name AS who, o.*, COUNT(*) AS n, max(o.total)');
        expect(cols.sql).to.equal(
          `${q('id')}, ${q('u')}.${q('name')} AS ${q('who')}, ${q('o')}.*, COUNT(*) AS ${q('n')}, MAX(${q('o')}.${q('total')})`,
        );
        expect(cols.keys).to.deep.equal(['id', 'who', '*', 'n', 'MAX(o.total)']);
      });

      it('quotes GROUP BY and ORDER BY with ASC/DESC', () => {
        expect(quoteGroupBy(d, 'a, t.b')).to.equal(`${q('a')}, ${q('t')}.${q('b')}`);
        expect(quoteOrderBy(d, 'a desc, t.b ASC, c')).to.equal(`${q('a')} DESC, ${q('t')}.${q('b')} ASC, ${q('c')}`);
        expect(quotePlainColumns(d, 'a, b').quoted).to.deep.equal([q('a'), q('b')]);
      });

      it('refuses every hostile identifier in every position', () => {
        for (const bad of HOSTILE) {
          expect(() => quoteTable(d, bad), `table ${JSON.stringify(bad)}`).to.throw();
          if (bad !== '') expect(() => quoteSelectColumns(d, bad), `column ${JSON.stringify(bad)}`).to.throw();
          expect(() => quotePlainColumns(d, bad), `plain ${JSON.stringify(bad)}`).to.throw();
          expect(() => quoteGroupBy(d, bad), `group ${JSON.stringify(bad)}`).to.throw();
          expect(() => quoteOrderBy(d, bad), `order ${JSON.stringify(bad)}`).to.throw();
        }
        expect(() => quoteOrderBy(d, 'a DESC; DROP TABLE t')).to.throw();
        expect(() => quoteOrderBy(d, 'a, ')).to.throw(/empty item/);
        expect(() => quoteSelectColumns(d, 'version()')).to.throw();
        expect(() => quoteSelectColumns(d, 'SUM(*)')).to.throw(/only COUNT/);
        expect(() => quoteSelectColumns(d, 'upper(name)')).to.throw(/not allowed/);
        expect(() => quoteSelectColumns(d, '* AS x')).to.throw();
        expect(() => quoteTable(d, 'users AS')).to.throw();
        expect(() => quotePlainColumns(d, 't.a')).to.throw();
        expect(() => quotePart(d, 'x'.repeat(129))).to.throw();
      });
    });
  }

  it('agrees with Sequelize\'s own quoting (postgres, mysql, mssql, oracle; SQLite accepts both " and `)', () => {
    for (const d of ['postgres', 'mysql', 'mssql', 'oracle'] as const) {
      const generator = (
        new Sequelize({ dialect: d, logging: false }).getQueryInterface() as unknown as {
          queryGenerator: { quoteIdentifier(s: string, force?: boolean): string };
        }
      ).queryGenerator;
      for (const name of ['users', 'Users', 'order', 'select', 'a_1', '_x'])
        expect(quotePart(d, name), `${d} ${name}`).to.equal(generator.quoteIdentifier(name, true));
    }
  });
});
