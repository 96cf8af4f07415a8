/**
 * Statement generation for every dialect family. MS SQL Server and Oracle have no server on this
 * machine: their statements are checked here only — the generated text and bind parameters after
 * Sequelize's own bind formatting for those dialects (Sequelize constructed without connecting), and
 * for SQL Server tedious's own parameter validation. They are NOT run against a live server.
 */
import { expect } from 'chai';
import { Request, TYPES } from 'tedious';
import type { Dialect } from '../../../actors/sql/dialect.js';
import { bindValues } from '../../../actors/sql/placeholders.js';
import type { Plan, StatementSettings } from '../../../actors/sql/statement.js';
import { buildRaw, buildStatement } from '../../../actors/sql/statement.js';
import { mapOf } from '../../../protocol/message.js';
import type { ValueMap } from '../../../protocol/message.js';
import { formatBind } from './driver-format.js';

const EMPTY: StatementSettings = {
  SQL_STATEMENT: '',
  SQL_TABLE: '',
  SQL_COLUMNS: '',
  SQL_JOIN: '',
  SQL_WHERE: '',
  SQL_VALUEPARAMS: '',
  SQL_GROUPBY: '',
  SQL_HAVING: '',
  SQL_ORDERBY: '',
  SQL_LIMIT: '',
  SQL_OFFSET: '',
};
const s = (over: Partial<StatementSettings>): StatementSettings => ({ ...EMPTY, ...over });

/** What the driver receives: Sequelize's formatBindParameters for the dialect, no connection made. */
function driverView(dialect: Dialect, plan: Plan, data: ValueMap): [string, unknown] {
  return formatBind(dialect, plan.sql, bindValues(plan.params, data));
}

const SELECT = s({
  SQL_STATEMENT: 'Select',
  SQL_TABLE: 'users u',
  SQL_COLUMNS: 'u.id, u.name, COUNT(o.id) AS orders',
  SQL_JOIN: 'LEFT JOIN orders o ON o.user_id = u.id',
  SQL_WHERE: 'u.name LIKE {{ name }} AND u.age > {{age}}',
  SQL_GROUPBY: 'u.id, u.name',
  SQL_HAVING: 'COUNT(o.id) >= {{ min }}',
  SQL_ORDERBY: 'u.name DESC',
  SQL_LIMIT: '{{ n }}',
  SQL_OFFSET: '5',
});
const DATA = mapOf({ name: ["%'; DROP TABLE users; --"], age: ['30'], min: ['2'], n: ['10'] });

describe('sql statements', () => {
  it('PostgreSQL: SELECT with join, where, group, having, order, limit, offset', () => {
    const plan = buildStatement('postgres', SELECT);
    const [sql, bind] = driverView('postgres', plan, DATA);
    expect(sql).to.equal(
      'SELECT "u"."id", "u"."name", COUNT("o"."id") AS "orders" FROM "users" "u" LEFT JOIN orders o ON o.user_id = u.id WHERE (u.name LIKE $1 AND u.age > $2) GROUP BY "u"."id", "u"."name" HAVING COUNT(o.id) >= $3 ORDER BY "u"."name" DESC LIMIT $4 OFFSET 5',
    );
    expect(bind).to.deep.equal(["%'; DROP TABLE users; --", '30', '2', 10]);
  });

  it('MySQL/MariaDB, SQLite: the same SELECT with their quoting and markers', () => {
    const [my, myBind] = driverView('mysql', buildStatement('mysql', SELECT), DATA);
    expect(my).to.equal(
      'SELECT `u`.`id`, `u`.`name`, COUNT(`o`.`id`) AS `orders` FROM `users` `u` LEFT JOIN orders o ON o.user_id = u.id WHERE (u.name LIKE ? AND u.age > ?) GROUP BY `u`.`id`, `u`.`name` HAVING COUNT(o.id) >= ? ORDER BY `u`.`name` DESC LIMIT ? OFFSET 5',
    );
    expect(myBind).to.deep.equal(["%'; DROP TABLE users; --", '30', '2', 10]);
    const [lite, liteBind] = driverView('sqlite', buildStatement('sqlite', SELECT), DATA);
    expect(lite).to.contain('FROM "users" "u"').and.contain('LIKE $p1').and.contain('LIMIT $p4 OFFSET 5');
    expect(liteBind).to.deep.equal({ $p1: "%'; DROP TABLE users; --", $p2: '30', $p3: '2', $p4: 10 });
  });

  it('MS SQL Server (generated only, not run): [quoting], @parameters, OFFSET … FETCH, parameters valid for tedious', () => {
    const plan = buildStatement('mssql', SELECT);
    const [sql, bind] = driverView('mssql', plan, DATA);
    expect(sql).to.equal(
      'SELECT [u].[id], [u].[name], COUNT([o].[id]) AS [orders] FROM [users] [u] LEFT JOIN orders o ON o.user_id = u.id WHERE (u.name LIKE @p1 AND u.age > @p2) GROUP BY [u].[id], [u].[name] HAVING COUNT(o.id) >= @p3 ORDER BY [u].[name] DESC OFFSET 5 ROWS FETCH NEXT @p4 ROWS ONLY',
    );
    expect(bind).to.deep.equal({ p1: "%'; DROP TABLE users; --", p2: '30', p3: '2', p4: 10 });
    // every @name in the text has a parameter and vice versa; tedious accepts each value for the type
    // Sequelize's mssql query picks (NVarChar for strings, Int for integers)
    expect([...new Set(sql.match(/@\w+/g))].sort()).to.deep.equal(
      Object.keys(bind as object)
        .map((k) => `@${k}`)
        .sort(),
    );
    const request = new Request(sql, () => undefined);
    for (const [k, v] of Object.entries(bind as Record<string, unknown>))
      request.addParameter(k, typeof v === 'number' ? TYPES.Int : TYPES.NVarChar, v);
    expect(() =>
      (request as unknown as { validateParameters(c: unknown): void }).validateParameters(undefined),
    ).not.to.throw();
    // without ORDER BY, SQL Server still needs one before OFFSET
    expect(buildStatement('mssql', s({ SQL_STATEMENT: 'select', SQL_TABLE: 't', SQL_LIMIT: '3' })).sql).to.equal(
      'SELECT * FROM [t] ORDER BY (SELECT NULL) OFFSET 0 ROWS FETCH NEXT 3 ROWS ONLY',
    );
  });

  it('Oracle (generated only, not run): "quoting", :parameters bound by name, OFFSET … FETCH', () => {
    const plan = buildStatement('oracle', SELECT);
    const [sql, bind] = driverView('oracle', plan, DATA);
    expect(sql).to.equal(
      'SELECT "u"."id", "u"."name", COUNT("o"."id") AS "orders" FROM "users" "u" LEFT JOIN orders o ON o.user_id = u.id WHERE (u.name LIKE :p1 AND u.age > :p2) GROUP BY "u"."id", "u"."name" HAVING COUNT(o.id) >= :p3 ORDER BY "u"."name" DESC OFFSET 5 ROWS FETCH NEXT :p4 ROWS ONLY',
    );
    expect(bind).to.deep.equal({ p1: "%'; DROP TABLE users; --", p2: '30', p3: '2', p4: 10 });
    expect([...new Set(sql.match(/:\w+/g))].sort()).to.deep.equal(
      Object.keys(bind as object)
        .map((k) => `:${k}`)
        .sort(),
    );
  });

  for (const d of ['postgres', 'mysql', 'mssql', 'oracle', 'sqlite'] as const) {
    it(`${d}: INSERT pairs SQL_COLUMNS with SQL_VALUEPARAMS; UPDATE sets them; DELETE filters`, () => {
      const ins = buildStatement(
        d,
        s({
          SQL_STATEMENT: 'insert',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'name, email',
          SQL_VALUEPARAMS: 'data_name,data_email',
        }),
      );
      expect(ins.params.map((p) => p.name)).to.deep.equal(['data_name', 'data_email']);
      const [insSql, insBind] = driverView(d, ins, mapOf({ data_name: ['a'], data_email: [] }));
      const m = {
        postgres: ['$1', '$2'],
        mysql: ['?', '?'],
        mssql: ['@p1', '@p2'],
        oracle: [':p1', ':p2'],
        sqlite: ['$p1', '$p2'],
      }[d];
      const q = (x: string): string => ({ mysql: `\`${x}\``, mssql: `[${x}]` })[d as 'mysql'] ?? `"${x}"`;
      expect(insSql).to.equal(`INSERT INTO ${q('users')} (${q('name')}, ${q('email')}) VALUES (${m[0]}, ${m[1]})`);
      expect(Object.values(insBind as object)).to.deep.equal(['a', null]);
      // SQL_TABLE with an alias (as a SELECT of the same service may need it): an INSERT drops it
      const aliased = buildStatement(
        d,
        s({
          SQL_STATEMENT: 'insert',
          SQL_TABLE: 'users u',
          SQL_COLUMNS: 'name, email',
          SQL_VALUEPARAMS: 'data_name,data_email',
        }),
      );
      expect(driverView(d, aliased, mapOf({ data_name: ['a'], data_email: [] }))[0]).to.equal(insSql);
      const upd = buildStatement(
        d,
        s({
          SQL_STATEMENT: 'UPDATE',
          SQL_TABLE: 'users',
          SQL_COLUMNS: 'name',
          SQL_VALUEPARAMS: 'data_name',
          SQL_WHERE: 'WHERE id = {{ where_id }}',
        }),
      );
      expect(driverView(d, upd, mapOf({ data_name: ['b'], where_id: ['7'] }))[0]).to.equal(
        `UPDATE ${q('users')} SET ${q('name')} = ${m[0]} WHERE id = ${m[1]}`,
      );
      const del = buildStatement(
        d,
        s({ SQL_STATEMENT: 'delete', SQL_TABLE: 'users', SQL_WHERE: 'id = {{ where_id }}' }),
      );
      expect(driverView(d, del, mapOf({ where_id: ['7'] }))[0]).to.equal(
        `DELETE FROM ${q('users')} WHERE id = ${m[0]}`,
      );
    });
  }

  it('LIMIT/OFFSET per dialect, literal or bound', () => {
    const plan = (d: Dialect, limit: string, offset: string): string =>
      buildStatement(d, s({ SQL_STATEMENT: 'select', SQL_TABLE: 't', SQL_LIMIT: limit, SQL_OFFSET: offset })).sql;
    expect(plan('postgres', '', '4')).to.equal('SELECT * FROM "t" OFFSET 4');
    expect(plan('mysql', '', '4')).to.equal('SELECT * FROM `t` LIMIT 18446744073709551615 OFFSET 4');
    expect(plan('sqlite', '', '{{o}}')).to.equal('SELECT * FROM "t" LIMIT -1 OFFSET $p1');
    expect(plan('oracle', '2', '')).to.equal('SELECT * FROM "t" OFFSET 0 ROWS FETCH NEXT 2 ROWS ONLY');
    for (const bad of ['-1', '1.5', '10; DROP TABLE t', '{{ a }} {{ b }}', 'ALL', "'1'"])
      expect(() => plan('postgres', bad, ''), bad).to.throw(/neither a non-negative whole number/);
  });

  it('names the parameter at fault and refuses what cannot be right', () => {
    const err = (over: Partial<StatementSettings>): string => {
      try {
        buildStatement('postgres', s(over));
      } catch (e) {
        return `${(e as { param: string }).param}: ${(e as Error).message}`;
      }
      return 'no error';
    };
    expect(err({ SQL_STATEMENT: 'merge', SQL_TABLE: 't' })).to.match(/^SQL_STATEMENT: 'merge' is not one of/);
    expect(err({ SQL_STATEMENT: 'select', SQL_TABLE: 't; drop table t' })).to.match(/^SQL_TABLE:/);
    expect(err({ SQL_STATEMENT: 'insert', SQL_TABLE: 't', SQL_COLUMNS: 'a,b', SQL_VALUEPARAMS: 'x' })).to.match(
      /^SQL_VALUEPARAMS: 1 value parameters for 2 columns/,
    );
    expect(err({ SQL_STATEMENT: 'update', SQL_TABLE: 't', SQL_COLUMNS: '', SQL_VALUEPARAMS: 'x' })).to.match(
      /^SQL_COLUMNS: a column list is required/,
    );
    expect(err({ SQL_STATEMENT: 'select', SQL_TABLE: 't', SQL_WHERE: 'a = 1; DELETE FROM t' })).to.match(
      /^SQL_WHERE: a ';' outside quotes/,
    );
    expect(err({ SQL_STATEMENT: 'select', SQL_TABLE: 't', SQL_HAVING: 'COUNT(*) > 1' })).to.match(
      /^SQL_HAVING: HAVING needs SQL_GROUPBY/,
    );
    expect(err({ SQL_STATEMENT: 'select', SQL_TABLE: 't', SQL_WHERE: "a LIKE '%{{ x }}%'" })).to.match(
      /^SQL_WHERE: placeholder/,
    );
    expect(err({ SQL_STATEMENT: 'select', SQL_TABLE: 't', SQL_WHERE: "a = ';'" })).to.equal('no error');
  });

  it('a JOIN without its keyword reads as JOIN; WHERE and HAVING keywords may be written', () => {
    expect(
      buildStatement(
        'postgres',
        s({ SQL_STATEMENT: 'select', SQL_TABLE: 'a', SQL_JOIN: 'b ON b.id = a.id', SQL_WHERE: 'where a.x = 1' }),
      ).sql,
    ).to.equal('SELECT * FROM "a" JOIN b ON b.id = a.id WHERE (a.x = 1)');
    expect(buildStatement('postgres', s({ SQL_STATEMENT: 'select', SQL_TABLE: 'a', SQL_JOIN: ', b' })).sql).to.equal(
      'SELECT * FROM "a" , b',
    );
    expect(
      buildStatement('postgres', s({ SQL_STATEMENT: 'select', SQL_TABLE: 'a', SQL_JOIN: 'left join b using (id)' }))
        .sql,
    ).to.equal('SELECT * FROM "a" left join b using (id)');
  });

  it('raw: the text as configured with placeholders bound; $ text survives; action exec or query', () => {
    const plan = buildRaw('postgres', {
      SQL_RAWACTION: 'query',
      SQL_RAWVALUE: "SELECT $$a {b}$$ AS t, '$1' AS u, {{ x }}::int + {{x}} AS v",
    });
    expect(plan.kind).to.equal('query');
    const [sql, bind] = driverView('postgres', plan, mapOf({ x: ['2'] }));
    expect(sql).to.equal("SELECT $$a {b}$$ AS t, '$1' AS u, $1::int + $1 AS v");
    expect(bind).to.deep.equal(['2']);
    expect(() => buildRaw('postgres', { SQL_RAWACTION: 'drop', SQL_RAWVALUE: 'x' })).to.throw(
      /neither 'exec' nor 'query'/,
    );
  });
});
