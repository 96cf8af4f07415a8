/**
 * How database failures become Result codes. SQLite errors are real (an in-memory database); the
 * other engines' errors are shaped as their drivers report them under Sequelize (`parent` with the
 * engine's code), and the live adapter tests (spec/adapters/sql) produce them for real on PostgreSQL
 * and MariaDB.
 */
import { expect } from 'chai';
import { QueryTypes, Sequelize } from 'sequelize';
import { mapDbError } from '../../../actors/sql/db-errors.js';
import type { Dialect } from '../../../actors/sql/dialect.js';

const LIMITS = { acquireTimeoutMs: 1000, poolSize: 2, timeoutMs: 3000 };

/** An error as Sequelize wraps a driver's: the driver's fields on `parent`. */
function wrapped(name: string, parent: Record<string, unknown>): Error {
  return Object.assign(new Error(String(parent.message ?? 'x')), { name, parent, original: parent });
}

const codeOf = (dialect: Dialect, e: unknown): number => mapDbError(e, dialect, LIMITS).code;

describe('sql database errors: the caller’s values (400) apart from the database failing (502/503/504)', () => {
  let sqlite: Sequelize;
  before(async () => {
    sqlite = new Sequelize({ dialect: 'sqlite', storage: ':memory:', logging: false });
    await sqlite.query('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, n INTEGER CHECK (n < 10))', {
      type: QueryTypes.RAW,
    });
    await sqlite.query("INSERT INTO t (name) VALUES ('a')", { type: QueryTypes.RAW });
  });
  after(() => sqlite.close());

  const sqliteError = async (sql: string, bind: unknown[]): Promise<unknown> => {
    try {
      await sqlite.query(sql, { bind, type: QueryTypes.SELECT });
    } catch (e) {
      return e;
    }
    throw new Error(`${sql} did not fail`);
  };

  it('SQLite: a LIKE pattern too complex, a bad ESCAPE, constraint violations are 400 with the engine’s reason', async () => {
    const like = mapDbError(
      await sqliteError('SELECT * FROM t WHERE name LIKE $1', ['%'.repeat(100_000)]),
      'sqlite',
      LIMITS,
    );
    expect(like.code).to.equal(400);
    expect(like.message).to.equal('the database refused the values: SQLITE_ERROR: LIKE or GLOB pattern too complex');
    expect(codeOf('sqlite', await sqliteError("SELECT * FROM t WHERE name LIKE 'a' ESCAPE $1", ['xy']))).to.equal(400);
    const unique = mapDbError(await sqliteError('INSERT INTO t (name) VALUES ($1)', ['a']), 'sqlite', LIMITS);
    expect(unique.code).to.equal(400);
    // the driver's reason, not Sequelize's "Validation error"
    expect(unique.message).to.equal(
      'the database refused the values: SQLITE_CONSTRAINT: UNIQUE constraint failed: t.name',
    );
    expect(codeOf('sqlite', await sqliteError('INSERT INTO t (name) VALUES ($1)', [null]))).to.equal(400);
    expect(codeOf('sqlite', await sqliteError('INSERT INTO t (name, n) VALUES ($1, $2)', ['b', 11]))).to.equal(400);
  });

  it('SQLite: an error of the statement itself stays 502', async () => {
    const e = mapDbError(await sqliteError('SELECT nosuch FROM t', []), 'sqlite', LIMITS);
    expect(e.code).to.equal(502);
    expect(e.message).to.equal('database error: SQLITE_ERROR: no such column: nosuch');
  });

  it('PostgreSQL: SQLSTATE class 22 (data exception) and 23 (integrity constraint) are 400; others 502; 57014 is 504', () => {
    for (const code of ['22001', '22P02', '22003', '2201B', '23505', '23502', '23503', '23514'])
      expect(codeOf('postgres', wrapped('SequelizeDatabaseError', { code, message: 'm' })), code).to.equal(400);
    for (const code of ['42703', '42P01', '53300', 'XX000'])
      expect(codeOf('postgres', wrapped('SequelizeDatabaseError', { code, message: 'm' })), code).to.equal(502);
    expect(
      codeOf(
        'postgres',
        wrapped('SequelizeDatabaseError', { code: '57014', message: 'canceling statement due to statement timeout' }),
      ),
    ).to.equal(504);
  });

  it('MySQL/MariaDB: value error numbers are 400 (too long, wrong value, duplicate, NULL, out of range, foreign key)', () => {
    for (const errno of [1406, 1292, 1366, 1062, 1048, 1264, 1452, 1451, 1690, 4025])
      expect(
        codeOf('mysql', wrapped('SequelizeDatabaseError', { errno, code: 'ER_X', message: 'm' })),
        String(errno),
      ).to.equal(400);
    for (const errno of [1054, 1146, 1064, 2013])
      expect(
        codeOf('mysql', wrapped('SequelizeDatabaseError', { errno, code: 'ER_X', message: 'm' })),
        String(errno),
      ).to.equal(502);
  });

  it('SQL Server and Oracle: their value error numbers are 400', () => {
    expect(
      codeOf(
        'mssql',
        wrapped('SequelizeDatabaseError', { number: 2627, message: 'Violation of UNIQUE KEY constraint' }),
      ),
    ).to.equal(400);
    expect(
      codeOf('mssql', wrapped('SequelizeDatabaseError', { number: 208, message: 'Invalid object name' })),
    ).to.equal(502);
    expect(
      codeOf(
        'oracle',
        wrapped('SequelizeDatabaseError', { errorNum: 12899, message: 'ORA-12899: value too large for column' }),
      ),
    ).to.equal(400);
    expect(
      codeOf(
        'oracle',
        wrapped('SequelizeDatabaseError', { errorNum: 942, message: 'ORA-00942: table or view does not exist' }),
      ),
    ).to.equal(502);
  });

  it('connection failures stay 502, a saturated pool 503, whatever the engine reports with them', () => {
    const down = mapDbError(
      wrapped('SequelizeConnectionRefusedError', { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' }),
      'postgres',
      LIMITS,
    );
    expect(down.code).to.equal(502);
    expect(down.message).to.match(/^database unavailable: /);
    expect(
      codeOf('mysql', wrapped('SequelizeAccessDeniedError', { errno: 1045, message: "Access denied for user 'u'" })),
    ).to.equal(502);
    expect(
      codeOf('sqlite', Object.assign(new Error('no connection'), { name: 'SequelizeConnectionAcquireTimeoutError' })),
    ).to.equal(503);
  });

  it('a refused value quoted at length by the engine is cut to a readable reason', () => {
    const e = mapDbError(
      wrapped('SequelizeDatabaseError', {
        code: '22P02',
        message: `invalid input syntax for type integer: "${'x'.repeat(100_000)}"`,
      }),
      'postgres',
      LIMITS,
    );
    expect(e.code).to.equal(400);
    expect(e.message.length).to.be.below(600);
    expect(e.message).to.match(/… \(100\d\d\d characters\)$/);
  });
});
