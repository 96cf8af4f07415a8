/**
 * Multi-row INSERT (SQL_BATCH) and UPSERT: the statement text of every engine as its driver receives
 * it (Sequelize's bind formatting, no connection; SQL Server's parameters also through tedious's own
 * validation — SQL Server and Oracle are NOT run against a live server), the rows per statement under
 * each engine's parameter limit, how a message's fields become rows (unequal lengths 400, over
 * SQL_MAXBATCH 413, a key twice 400), what each engine's answer is read as, and the settings refused
 * at start.
 */
import { expect } from 'chai';
import { Request, TYPES } from 'tedious';
import type { RowsChunk } from '../../../actors/sql/batch.js';
import { rowsChunks } from '../../../actors/sql/batch.js';
import type { Dialect } from '../../../actors/sql/dialect.js';
import { Planner } from '../../../actors/sql/planner.js';
import type { SqlConfig } from '../../../actors/sql/planner.js';
import { rowsWrittenResult } from '../../../actors/sql/results.js';
import { PARAM_LIMIT, RowsStatement, upsertCounts } from '../../../actors/sql/rows.js';
import { buildStatement } from '../../../actors/sql/statement.js';
import { compileConfig } from '../../../config/resolve.js';
import { SQL_PARAMS } from '../../../config/sql.js';
import { BadInputError, ConfigError, TooLargeError } from '../../../protocol/errors.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { formatBind } from './driver-format.js';

const DIALECTS: Dialect[] = ['postgres', 'mysql', 'sqlite', 'mssql', 'oracle'];
const insert = (d: Dialect, columns = ['name', 'email'], names = ['data_name', 'data_email']): RowsStatement =>
  new RowsStatement(d, 'insert', { table: 'users', columns, names });
const upsert = (d: Dialect, keys = 'name'): RowsStatement =>
  new RowsStatement(d, 'upsert', {
    table: 'app.users u',
    columns: ['name', 'email', 'age'],
    names: ['n', 'e', 'a'],
    keyColumns: keys,
  });
const data = mapOf({ data_name: ['ann', "o'hara"], data_email: ['a@x', ''] });
const batch = { on: true, max: 10_000 };
const asDriver = (d: Dialect, chunk: RowsChunk): [string, unknown] => formatBind(d, chunk.sql, chunk.bind);

function config(values: Record<string, string>): SqlConfig {
  return compileConfig('sql', SQL_PARAMS, [{ source: 'test', values: Object.entries(values) }]).values;
}

describe('sql multi-row statements: text per engine', () => {
  it('INSERT of two rows: multi-row VALUES, bound row by row (Oracle: SELECT … FROM DUAL UNION ALL)', () => {
    const views = Object.fromEntries(DIALECTS.map((d) => [d, asDriver(d, rowsChunks(insert(d), data, batch)[0]!)]));
    expect(views.postgres).to.deep.equal([
      'INSERT INTO "users" ("name", "email") VALUES ($1, $2), ($3, $4)',
      ['ann', 'a@x', "o'hara", ''],
    ]);
    expect(views.mysql).to.deep.equal([
      'INSERT INTO `users` (`name`, `email`) VALUES (?, ?), (?, ?)',
      ['ann', 'a@x', "o'hara", ''],
    ]);
    // Sequelize names SQLite's values even when given by position: large batches go to the driver directly (driver-direct.ts)
    expect(views.sqlite).to.deep.equal([
      'INSERT INTO "users" ("name", "email") VALUES ($1, $2), ($3, $4)',
      { $1: 'ann', $2: 'a@x', $3: "o'hara", $4: '' },
    ]);
    expect(views.mssql).to.deep.equal([
      'INSERT INTO [users] ([name], [email]) VALUES (@p1, @p2), (@p3, @p4)',
      { p1: 'ann', p2: 'a@x', p3: "o'hara", p4: '' },
    ]);
    expect(views.oracle).to.deep.equal([
      'INSERT INTO "users" ("name", "email") SELECT :p1 AS "name", :p2 AS "email" FROM DUAL UNION ALL SELECT :p3, :p4 FROM DUAL',
      { p1: 'ann', p2: 'a@x', p3: "o'hara", p4: '' },
    ]);
  });

  it('UPSERT: ON CONFLICT … DO UPDATE (PostgreSQL with counts, SQLite), ON DUPLICATE KEY UPDATE (MySQL), the alias dropped', () => {
    const two = mapOf({ n: ['ann', 'bob'], e: ['a@x', 'b@x'], a: ['30', '25'] });
    const view = (d: Dialect): [string, unknown] => asDriver(d, rowsChunks(upsert(d), two, batch)[0]!);
    expect(view('postgres')).to.deep.equal([
      'WITH hn_rows AS (INSERT INTO "app"."users" ("name", "email", "age") VALUES ($1, $2, $3), ($4, $5, $6) ON CONFLICT ("name") DO UPDATE SET "email" = EXCLUDED."email", "age" = EXCLUDED."age" RETURNING (xmax = 0) AS hn_inserted) SELECT COUNT(*) AS affected, COUNT(*) FILTER (WHERE hn_inserted) AS inserted FROM hn_rows',
      ['ann', 'a@x', '30', 'bob', 'b@x', '25'],
    ]);
    expect(view('sqlite')[0]).to.equal(
      'INSERT INTO "app"."users" ("name", "email", "age") VALUES ($1, $2, $3), ($4, $5, $6) ON CONFLICT ("name") DO UPDATE SET "email" = excluded."email", "age" = excluded."age"',
    );
    expect(view('mysql')).to.deep.equal([
      'INSERT `app`.`users` (`name`, `email`, `age`) VALUES (?, ?, ?), (?, ?, ?) ON DUPLICATE KEY UPDATE `email` = VALUES(`email`), `age` = VALUES(`age`)',
      ['ann', 'a@x', '30', 'bob', 'b@x', '25'],
    ]);
    // a key of two columns: both in the conflict target, neither updated
    expect(asDriver('postgres', rowsChunks(upsert('postgres', 'age, NAME'), two, batch)[0]!)[0]).to.contain(
      'ON CONFLICT ("age", "name") DO UPDATE SET "email" = EXCLUDED."email" RETURNING',
    );
  });

  it('SQL Server (generated only, not run): MERGE … WITH (HOLDLOCK) from a VALUES source, OUTPUT $action, parameters valid for tedious', () => {
    const [sql, bind] = asDriver(
      'mssql',
      rowsChunks(
        upsert('mssql', 'name, age'),
        mapOf({ n: ['ann', 'bob'], e: ['a@x', 'b@x'], a: ['30', '25'] }),
        batch,
      )[0]!,
    );
    expect(sql).to.equal(
      'MERGE INTO [app].[users] WITH (HOLDLOCK) AS t USING (VALUES (@p1, @p2, @p3), (@p4, @p5, @p6)) AS s ([name], [email], [age]) ON (t.[name] = s.[name] AND t.[age] = s.[age]) WHEN MATCHED THEN UPDATE SET t.[email] = s.[email] WHEN NOT MATCHED THEN INSERT ([name], [email], [age]) VALUES (s.[name], s.[email], s.[age]) OUTPUT $action AS hn_action;',
    );
    expect(bind).to.deep.equal({ p1: 'ann', p2: 'a@x', p3: '30', p4: 'bob', p5: 'b@x', p6: '25' });
    expect([...new Set(sql.match(/@\w+/g))].sort()).to.deep.equal(
      Object.keys(bind as object)
        .map((k) => `@${k}`)
        .sort(),
    );
    const request = new Request(sql, () => undefined);
    for (const [k, v] of Object.entries(bind as Record<string, unknown>)) request.addParameter(k, TYPES.NVarChar, v);
    expect(() =>
      (request as unknown as { validateParameters(c: unknown): void }).validateParameters(undefined),
    ).not.to.throw();
  });

  it('Oracle (generated only, not run): MERGE from SELECT … FROM DUAL UNION ALL, :parameters bound by name', () => {
    const [sql, bind] = asDriver(
      'oracle',
      rowsChunks(upsert('oracle'), mapOf({ n: ['ann', 'bob'], e: ['a@x', 'b@x'], a: ['30', '25'] }), batch)[0]!,
    );
    expect(sql).to.equal(
      'MERGE INTO "app"."users" t USING (SELECT :p1 AS "name", :p2 AS "email", :p3 AS "age" FROM DUAL UNION ALL SELECT :p4, :p5, :p6 FROM DUAL) s ON (t."name" = s."name") WHEN MATCHED THEN UPDATE SET t."email" = s."email", t."age" = s."age" WHEN NOT MATCHED THEN INSERT ("name", "email", "age") VALUES (s."name", s."email", s."age")',
    );
    expect(bind).to.deep.equal({ p1: 'ann', p2: 'a@x', p3: '30', p4: 'bob', p5: 'b@x', p6: '25' });
    expect([...new Set(sql.match(/:\w+/g))].sort()).to.deep.equal(
      Object.keys(bind as object)
        .map((k) => `:${k}`)
        .sort(),
    );
  });

  it('a configured UPSERT is planned with its one-row text, bound by SQL_VALUEPARAMS', () => {
    const plan = buildStatement('sqlite', {
      SQL_STATEMENT: 'Upsert',
      SQL_TABLE: 'kv',
      SQL_COLUMNS: 'k, v',
      SQL_VALUEPARAMS: 'key, value',
      SQL_KEYCOLUMNS: 'k',
      SQL_JOIN: '',
      SQL_WHERE: '',
      SQL_GROUPBY: '',
      SQL_HAVING: '',
      SQL_ORDERBY: '',
      SQL_LIMIT: '',
      SQL_OFFSET: '',
    });
    expect(plan.kind).to.equal('upsert');
    expect(plan.sql).to.equal(
      'INSERT INTO "kv" ("k", "v") VALUES ($1, $2) ON CONFLICT ("k") DO UPDATE SET "v" = excluded."v"',
    );
    expect(plan.params.map((p) => [p.key, p.name])).to.deep.equal([
      ['p1', 'key'],
      ['p2', 'value'],
    ]);
    expect(plan.names?.columns.map((c) => c.column.name)).to.deep.equal(['k', 'v']);
  });
});

describe('sql multi-row statements: rows of a message', () => {
  it('rows per statement stay under each engine’s bound-parameter limit (SQL Server also under 1000 rows)', () => {
    expect(PARAM_LIMIT).to.deep.equal({ postgres: 65535, mysql: 65535, sqlite: 32766, mssql: 2098, oracle: 65535 });
    const three = (d: Dialect): number =>
      new RowsStatement(d, 'insert', { table: 't', columns: ['a', 'b', 'c'], names: ['x', 'y', 'z'] }).maxRows;
    expect(DIALECTS.map(three)).to.deep.equal([21845, 21845, 10922, 699, 21845]);
    expect(new RowsStatement('mssql', 'insert', { table: 't', columns: ['a'], names: ['x'] }).maxRows).to.equal(1000);
    expect(new RowsStatement('sqlite', 'insert', { table: 't', columns: ['a'], names: ['x'] }).maxRows).to.equal(32766);
  });

  it('a batch over the limit is cut into as few statements as it allows, the rows in order', () => {
    const s = insert('sqlite');
    const n = 40_000;
    const names = Array.from({ length: n }, (_, i) => `n${i}`);
    const chunks = rowsChunks(s, mapOf({ data_name: names, data_email: names.map((x) => `${x}@x`) }), {
      on: true,
      max: n,
    });
    expect(chunks.map((c) => c.rows)).to.deep.equal([16383, 16383, 7234]);
    expect(chunks[0]!.sql).to.equal(s.sql(16383));
    const binds = chunks.map((c) => c.bind as string[]);
    expect(binds[0]).to.have.length(32766);
    expect([binds[1]![0], binds[1]![1], binds[2]![14467]]).to.deep.equal(['n16383', 'n16383@x', 'n39999@x']);
  });

  it('fields of unequal length are a 400 naming them; a missing field 400; more than SQL_MAXBATCH rows 413', () => {
    expect(() => rowsChunks(insert('postgres'), mapOf({ data_name: ['a', 'b', 'c'], data_email: ['x', 'y'] }), batch))
      .to.throw(BadInputError)
      .with.property(
        'message',
        'SQL_BATCH: the value fields differ in length (data_name 3, data_email 2); row i takes value i of each field, so each must carry one value per row',
      );
    expect(() => rowsChunks(insert('postgres'), mapOf({ data_name: ['a'] }), batch)).to.throw(
      BadInputError,
      "Data 'data_email' is missing (it fills a placeholder of SQL_VALUEPARAMS)",
    );
    const rows = (n: number) =>
      mapOf({ data_name: Array<string>(n).fill('a'), data_email: Array<string>(n).fill('b') });
    expect(rowsChunks(insert('postgres'), rows(5), { on: true, max: 5 })).to.have.length(1);
    expect(() => rowsChunks(insert('postgres'), rows(6), { on: true, max: 5 }))
      .to.throw(TooLargeError)
      .with.property('message', 'SQL_BATCH: 6 rows in one message, more than SQL_MAXBATCH (5)');
    expect(new TooLargeError('x').code).to.equal(413);
    expect(rowsChunks(insert('postgres'), rows(0), batch)).to.deep.equal([]);
  });

  it('without SQL_BATCH (an UPSERT) a message is one row of first values, [] being NULL', () => {
    const [chunk, ...more] = rowsChunks(upsert('postgres'), mapOf({ n: ['ann', 'ignored'], e: [], a: ['3'] }), {
      on: false,
      max: 1,
    });
    expect(more).to.deep.equal([]);
    expect(chunk!.bind).to.deep.equal(['ann', null, '3']);
    expect(
      rowsChunks(upsert('oracle'), mapOf({ n: ['ann'], e: [], a: ['3'] }), { on: false, max: 1 })[0]!.bind,
    ).to.deep.equal({ p1: 'ann', p2: null, p3: '3' });
    expect(chunk!.rows).to.equal(1);
  });

  it('an UPSERT batch naming one key twice is a 400 naming the rows and the key', () => {
    const twice = mapOf({ n: ['ann', 'bob', 'ann'], e: ['1', '2', '3'], a: ['1', '2', '3'] });
    expect(() => rowsChunks(upsert('postgres'), twice, batch))
      .to.throw(BadInputError)
      .with.property(
        'message',
        'SQL_KEYCOLUMNS: rows 1 and 3 of the batch have the same key ("name" "ann"); a batch may write each key once',
      );
    // two key columns: the pair must repeat
    expect(rowsChunks(upsert('postgres', 'name, age'), twice, batch)).to.have.length(1);
    expect(() =>
      rowsChunks(upsert('mysql', 'name, age'), mapOf({ n: ['a', 'a'], e: ['1', '2'], a: ['1', '1'] }), batch),
    ).to.throw(BadInputError, /rows 1 and 2 .*\(`name` "a", `age` "1"\)/);
  });
});

describe('sql multi-row statements: answers', () => {
  it('reads inserted and updated where the engine tells them apart', () => {
    expect(upsertCounts('postgres', [[{ affected: '5', inserted: '3' }], {}])).to.deep.equal({
      affected: 5,
      inserted: 3,
      updated: 2,
    });
    const header = (info: string, affectedRows: number) => [
      { info, affectedRows },
      { info, affectedRows },
    ];
    expect(upsertCounts('mysql', header('Records: 3  Duplicates: 1  Warnings: 0', 4))).to.deep.equal({
      affected: 3,
      inserted: 2,
      updated: 1,
    });
    // one row has no info line: 2 is an update, 1 an insert or (FOUND_ROWS) an unchanged row
    expect(upsertCounts('mysql', header('', 2))).to.deep.equal({ affected: 1, inserted: 0, updated: 1 });
    expect(upsertCounts('mysql', header('', 1))).to.deep.equal({ affected: 1 });
    expect(
      upsertCounts('mssql', [[{ hn_action: 'INSERT' }, { hn_action: 'UPDATE' }, { hn_action: 'INSERT' }], 3]),
    ).to.deep.equal({ affected: 3, inserted: 2, updated: 1 });
    expect(upsertCounts('sqlite', [0, 3])).to.equal(undefined);
    expect(upsertCounts('oracle', [[], 3])).to.equal(undefined);
  });

  it('answers affected summed over the statements; inserted/updated only when every statement gave them', () => {
    expect(rowsWrittenResult([{ affected: 3 }, { affected: 2 }]).Data).to.deep.equal({ affected: ['5'] });
    expect(
      rowsWrittenResult([
        { affected: 3, inserted: 1, updated: 2 },
        { affected: 2, inserted: 2, updated: 0 },
      ]).Data,
    ).to.deep.equal({ affected: ['5'], inserted: ['3'], updated: ['2'] });
    expect(rowsWrittenResult([{ affected: 3, inserted: 1, updated: 2 }, { affected: 1 }]).Data).to.deep.equal({
      affected: ['4'],
    });
    expect(rowsWrittenResult([]).Data).to.deep.equal({ affected: ['0'] });
  });
});

describe('sql multi-row statements: settings refused at start', () => {
  const planner = (values: Record<string, string>, dialect: Dialect = 'postgres'): Planner =>
    new Planner(config(values), dialect);
  const base = { SQL_TABLE: 'users', SQL_COLUMNS: 'id, name', SQL_VALUEPARAMS: 'data_id, data_name' };

  it('UPSERT without SQL_KEYCOLUMNS, with key columns not among SQL_COLUMNS, or with nothing left to update', () => {
    expect(() => planner({ ...base, SQL_STATEMENT: 'upsert' }))
      .to.throw(ConfigError)
      .with.property(
        'message',
        'SQL_KEYCOLUMNS: UPSERT needs the key columns that identify a row (a primary key or unique constraint)',
      );
    expect(() => planner({ ...base, SQL_STATEMENT: 'upsert', SQL_KEYCOLUMNS: 'id, email, uid' }))
      .to.throw(ConfigError)
      .with.property(
        'message',
        "SQL_KEYCOLUMNS: 'email', 'uid' are not among the columns of SQL_COLUMNS (id, name); the key is written like the other columns",
      );
    expect(() => planner({ ...base, SQL_STATEMENT: 'upsert', SQL_KEYCOLUMNS: 'name,id' })).to.throw(
      ConfigError,
      /^SQL_KEYCOLUMNS: every column of SQL_COLUMNS is a key column/,
    );
    expect(() => planner({ ...base, SQL_STATEMENT: 'upsert', SQL_KEYCOLUMNS: 'id; DROP' })).to.throw(
      ConfigError,
      /^SQL_KEYCOLUMNS: /,
    );
    expect(planner({ ...base, SQL_STATEMENT: 'UPSERT', SQL_KEYCOLUMNS: 'ID' }).configured?.kind).to.equal('upsert');
    expect(() => planner({ ...base, SQL_STATEMENT: 'insert', SQL_KEYCOLUMNS: 'id' })).to.throw(
      ConfigError,
      'SQL_KEYCOLUMNS: key columns are for SQL_STATEMENT UPSERT, and the statement is INSERT',
    );
  });

  it('SQL_BATCH with a statement other than INSERT or UPSERT, or in raw mode', () => {
    for (const statement of ['select', 'Update', 'DELETE']) {
      expect(() => planner({ ...base, SQL_STATEMENT: statement, SQL_WHERE: 'id = 1', SQL_BATCH: 'true' }), statement)
        .to.throw(ConfigError)
        .with.property(
          'message',
          `SQL_STATEMENT: SQL_BATCH=true writes rows with INSERT or UPSERT, not ${statement.toUpperCase()}`,
        );
    }
    expect(() => planner({ SQL_RAWMODE: 'true', SQL_RAWVALUE: 'SELECT 1', SQL_BATCH: 'true' })).to.throw(
      ConfigError,
      'SQL_BATCH writes rows with INSERT or UPSERT; it cannot be combined with SQL_RAWMODE',
    );
    expect(planner({ ...base, SQL_STATEMENT: 'insert', SQL_BATCH: 'true' }).configured?.rows?.kind).to.equal('insert');
  });

  it('a statement a control picks under SQL_BATCH must write rows: else 400 naming the control', () => {
    const p = planner({ ...base, SQL_STATEMENT_CTRL: 'statement', SQL_KEYCOLUMNS: 'id', SQL_BATCH: 'true' });
    const picking = (statement: string) => makeMessage({ Control: mapOf({ statement: [statement] }) });
    expect(p.planFor(picking('upsert')).rows?.kind).to.equal('upsert');
    expect(p.planFor(picking('insert')).rows?.kind).to.equal('insert');
    expect(() => p.planFor(picking('delete')))
      .to.throw(BadInputError)
      .with.property(
        'message',
        "control 'statement' (SQL_STATEMENT): SQL_BATCH=true writes rows with INSERT or UPSERT, not DELETE",
      );
  });
});
