/**
 * Queue schedules without a node: the schedule controls (defaults, refusals naming the
 * control, what the firing message keeps), the overlap rule, what a load does about a missed firing
 * (`catchup`), and both stores keeping schedules.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { passedControls } from '../../../actors/queue/command-parser.js';
import { parseScheduleRequest } from '../../../actors/queue/schedule-request.js';
import type { ScheduleDoc } from '../../../actors/queue/schedules.js';
import { ScheduleBook, putScheduleOp, roomFor } from '../../../actors/queue/schedules.js';
import { MemoryStore } from '../../../actors/queue/memory-store.js';
import { SqliteStore } from '../../../actors/queue/sqlite-store.js';
import { createLogger } from '../../../actors/observe/logger.js';
import { BadInputError, TooLargeError } from '../../../protocol/errors.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { tempDir } from '../../temp.js';

const log = createLogger({ level: 'error', stream: new PassThrough() });
const request = (control: Record<string, string[]>) =>
  parseScheduleRequest(
    makeMessage({
      Class: 'c',
      Operation: 'o',
      Control: mapOf({ command: ['schedule'], schedule_name: ['n'], cron: ['*/5 * * * *'], ...control }),
      Data: mapOf({ item: ['x'] }),
    }),
  );

describe('queue schedules', () => {
  it('defaults: tz UTC, overlap skip, catchup none; the firing message keeps every control but the schedule ones and command', () => {
    const r = request({ channel: ['target'], custom: ['kept'] });
    expect([r.name, r.zone.name, r.overlap, r.catchup, r.cron.source]).to.deep.equal([
      'n',
      'UTC',
      'skip',
      'none',
      '*/5 * * * *',
    ]);
    expect({ ...r.message.Control }).to.deep.equal({ channel: ['target'], custom: ['kept'] });
    expect(r.message).to.include({ Class: 'c', Operation: 'o' });
    expect({ ...r.message.Data }).to.deep.equal({ item: ['x'] });
    const full = request({ tz: ['Europe/Berlin'], overlap: ['BUFFER_ONE'], catchup: ['one'] });
    expect([full.zone.name, full.overlap, full.catchup]).to.deep.equal(['Europe/Berlin', 'buffer_one', 'one']);
  });

  it('the schedule controls are queue controls: an entry never passes them on', () => {
    expect({
      ...passedControls(
        mapOf({ schedule_name: ['a'], cron: ['b'], tz: ['c'], overlap: ['d'], catchup: ['e'], other: ['f'] }),
      ),
    }).to.deep.equal({ other: ['f'] });
  });

  it('refuses a missing, blank or unprintable name, several values, an unknown zone, overlap or catchup with 400 naming the control', () => {
    const cases: Array<[Record<string, string[]>, RegExp]> = [
      [{ schedule_name: [''] }, /control schedule_name is missing/],
      [{ schedule_name: ['a\u00e9'] }, /control schedule_name may hold printable ASCII characters only/],
      [{ schedule_name: ['x'.repeat(201)] }, /control schedule_name is 201 characters long; it may be at most 200/],
      [{ schedule_name: ['a', 'b'] }, /control schedule_name takes one value, got 2/],
      [{ cron: [''] }, /control cron is missing/],
      [{ tz: ['Nowhere/Town'] }, /control tz 'Nowhere\/Town' is not a known time zone/],
      [{ overlap: ['sometimes'] }, /control overlap 'sometimes' is not known; use one of skip, allow, buffer_one/],
      [{ catchup: ['all'] }, /control catchup 'all' is not known; use one of none, one/],
      [{ template_define: ['x'] }, /control template_define cannot be scheduled/],
    ];
    for (const [control, message] of cases)
      expect(() => request(control), JSON.stringify(control)).to.throw(BadInputError, message);
  });

  it('overlap: skip leaves room only with no entry in progress, buffer_one with at most one, allow always', () => {
    expect([roomFor('skip', 0), roomFor('skip', 1)]).to.deep.equal([true, false]);
    expect([roomFor('buffer_one', 0), roomFor('buffer_one', 1), roomFor('buffer_one', 2)]).to.deep.equal([
      true,
      true,
      false,
    ]);
    expect(roomFor('allow', 50)).to.equal(true);
  });

  it('a new name beyond the limit is refused with 413 naming the limit; replacing a name still works', () => {
    const book = new ScheduleBook(2);
    book.set(request({ schedule_name: ['a'] }), 1, 0);
    book.set(request({ schedule_name: ['b'] }), 1, 0);
    expect(() => book.set(request({ schedule_name: ['c'] }), 1, 0)).to.throw(
      TooLargeError,
      /holds 2 schedules, the most it takes/,
    );
    expect(book.set(request({ schedule_name: ['a'] }), 2, 0).replaced).to.equal(true);
    expect(book.size).to.equal(2);
  });

  describe('loading with a missed firing', () => {
    const NOW = Date.parse('2030-06-01T12:00:30Z');
    const stored = (catchup: 'none' | 'one', nextAt: number): { name: string; doc: string } => {
      const book = new ScheduleBook();
      const { schedule } = book.set(request({ catchup: [catchup] }), nextAt, NOW - 3_600_000);
      const op = putScheduleOp(schedule.doc) as { name: string; doc: string };
      return { name: op.name, doc: op.doc };
    };

    it('catchup none: the next firing is the next one from now, and it is written back', () => {
      const book = new ScheduleBook();
      const ops = book.load([stored('none', Date.parse('2030-06-01T11:00:00Z'))], NOW, log);
      expect(book.get('n')!.doc.nextAt).to.equal(Date.parse('2030-06-01T12:05:00Z'));
      expect(ops).to.have.length(1);
      expect((JSON.parse((ops[0] as { doc: string }).doc) as ScheduleDoc).nextAt).to.equal(
        Date.parse('2030-06-01T12:05:00Z'),
      );
    });

    it('catchup one: the missed firing stays due, so one firing comes at once; nothing is written', () => {
      const book = new ScheduleBook();
      const ops = book.load([stored('one', Date.parse('2030-06-01T11:00:00Z'))], NOW, log);
      expect(ops).to.deep.equal([]);
      expect(book.due(NOW).map((s) => s.doc.name)).to.deep.equal(['n']);
    });

    it('a firing still ahead is kept as stored; an unreadable document is skipped', () => {
      const book = new ScheduleBook();
      const ahead = Date.parse('2030-06-01T12:05:00Z');
      const ops = book.load([stored('none', ahead), { name: 'broken', doc: '{not json' }], NOW, log);
      expect(ops).to.deep.equal([]);
      expect(book.list().map((s) => [s.doc.name, s.doc.nextAt])).to.deep.equal([['n', ahead]]);
      expect(book.due(NOW)).to.deep.equal([]);
    });
  });

  it('both stores keep schedules: put replaces by name, remove deletes; SQLite across a reopen', async () => {
    const doc = (cron: string): string => JSON.stringify({ cron });
    const memory = new MemoryStore();
    await memory.write([
      { type: 'put-schedule', name: 'a', doc: doc('1') },
      { type: 'put-schedule', name: 'b', doc: doc('2') },
      { type: 'put-schedule', name: 'a', doc: doc('3') },
      { type: 'remove-schedule', name: 'b' },
    ]);
    expect(await memory.loadSchedules()).to.deep.equal([{ name: 'a', doc: doc('3') }]);

    const dir = tempDir('hn-schedules-');
    let sqlite = await SqliteStore.open(dir, log);
    await sqlite.write([
      { type: 'put-schedule', name: "it's", doc: doc('1') },
      { type: 'put-schedule', name: 'b', doc: doc('2') },
    ]);
    await sqlite.write([
      { type: 'put-schedule', name: "it's", doc: doc('3') },
      { type: 'remove-schedule', name: 'b' },
    ]);
    await sqlite.close();
    sqlite = await SqliteStore.open(dir, log);
    expect(await sqlite.loadSchedules()).to.deep.equal([{ name: "it's", doc: doc('3') }]);
    await sqlite.close();
  });
});
