import { expect } from 'chai';
import { writeOutcome } from '../../../actors/sql/outcome.js';
import { mapDbError } from '../../../actors/sql/db-errors.js';
import { backoffDelay } from '../../../actors/sql/poller.js';
import { rowsResult, writeResult } from '../../../actors/sql/results.js';

describe('sql results (docs/ARCHITECTURE.md, Result shapes)', () => {
  it('rows: Data one list of strings per column (NULL → "", ISO dates, base64), List native, rowcount', () => {
    const when = new Date('2024-01-02T03:04:05.000Z');
    const r = rowsResult([
      { id: 1, name: 'a', at: when, bin: Buffer.from('hi'), doc: { k: [1] }, big: 2n ** 60n, ok: true },
      { id: 2, name: null, at: null, bin: null, doc: null, big: 3n, ok: false },
    ]);
    expect(r.Code).to.equal(200);
    expect({ ...r.Data }).to.deep.equal({
      id: ['1', '2'],
      name: ['a', ''],
      at: ['2024-01-02T03:04:05.000Z', ''],
      bin: ['aGk=', ''],
      doc: ['{"k":[1]}', ''],
      big: ['1152921504606846976', '3'],
      ok: ['true', 'false'],
      rowcount: ['2'],
    });
    expect(r.List).to.deep.equal([
      {
        id: 1,
        name: 'a',
        at: '2024-01-02T03:04:05.000Z',
        bin: 'aGk=',
        doc: { k: [1] },
        big: '1152921504606846976',
        ok: true,
      },
      { id: 2, name: null, at: null, bin: null, doc: null, big: 3, ok: false },
    ]);
    expect(JSON.parse(JSON.stringify(r))).to.deep.equal(JSON.parse(JSON.stringify({ ...r, Data: { ...r.Data } })));
  });

  it('no rows: the columns the engine named, empty, and rowcount 0', () => {
    expect({ ...rowsResult([], ['id', 'name']).Data }).to.deep.equal({ id: [], name: [], rowcount: ['0'] });
  });

  it('writes: affected and insertid', () => {
    expect({ ...writeResult(3).Data }).to.deep.equal({ affected: ['3'] });
    expect({ ...writeResult(1, 42).Data }).to.deep.equal({ affected: ['1'], insertid: ['42'] });
  });

  it('reads affected rows from each dialect’s result shape', () => {
    expect(writeOutcome(2)).to.deep.equal({ affected: 2 }); // BULKUPDATE/BULKDELETE
    expect(writeOutcome([7, 1])).to.deep.equal({ affected: 1, insertId: 7 }); // MySQL and SQLite INSERT
    expect(writeOutcome([[], 1])).to.deep.equal({ affected: 1 }); // PostgreSQL INSERT, MS SQL RAW
    expect(writeOutcome([[], { command: 'UPDATE', rowCount: 2 }])).to.deep.equal({ affected: 2 }); // pg RAW
    expect(writeOutcome([[], [{ rowCount: 2 }, { rowCount: 3 }]])).to.deep.equal({ affected: 5 }); // pg RAW, two statements
    expect(
      writeOutcome([
        { affectedRows: 4, insertId: 0 },
        { affectedRows: 4, insertId: 0 },
      ]),
    ).to.deep.equal({ affected: 4 }); // mysql RAW
    expect(writeOutcome([{ rowsAffected: 6 }, { rowsAffected: 6 }])).to.deep.equal({ affected: 6 }); // oracle RAW
    expect(writeOutcome([[], {}])).to.deep.equal({ affected: 0 }); // SQLite DDL
  });

  it('maps database failures to codes', () => {
    const limits = { acquireTimeoutMs: 10, poolSize: 1, timeoutMs: 5 };
    const named = (name: string, parent: object = {}): Error => Object.assign(new Error('x'), { name, parent });
    expect(mapDbError(named('SequelizeConnectionAcquireTimeoutError'), 'postgres', limits).code).to.equal(503);
    expect(mapDbError(named('SequelizeConnectionRefusedError'), 'postgres', limits).code).to.equal(502);
    expect(mapDbError(named('SequelizeDatabaseError', { code: '57014' }), 'postgres', limits).code).to.equal(504);
    expect(mapDbError(named('SequelizeDatabaseError', { code: '22P02' }), 'postgres', limits).code).to.equal(400);
    expect(mapDbError(named('SequelizeUniqueConstraintError', { code: '23505' }), 'postgres', limits).code).to.equal(
      400,
    );
    expect(mapDbError(named('SequelizeDatabaseError', { code: '42P01' }), 'postgres', limits).code).to.equal(502);
    expect(mapDbError(named('SequelizeDatabaseError', { errno: 1969 }), 'mysql', limits).code).to.equal(504);
    expect(mapDbError(named('SequelizeDatabaseError', { code: 'ETIMEOUT' }), 'mssql', limits).code).to.equal(504);
    expect(mapDbError(named('SequelizeDatabaseError', { number: 2627 }), 'mssql', limits).code).to.equal(400);
    expect(
      mapDbError(
        Object.assign(new Error('NJS-123: call timeout of 5 ms exceeded'), { name: 'SequelizeDatabaseError' }),
        'oracle',
        limits,
      ).code,
    ).to.equal(504);
    expect(mapDbError(named('SequelizeDatabaseError', { code: 'SQLITE_CONSTRAINT' }), 'sqlite', limits).code).to.equal(
      400,
    );
  });

  it('poll back-off doubles up to max(interval, 30 s)', () => {
    expect([0, 1, 2, 3, 10].map((n) => backoffDelay(1000, n))).to.deep.equal([1000, 2000, 4000, 8000, 30000]);
    expect(backoffDelay(300_000, 4)).to.equal(300_000);
  });
});
