/**
 * Cron expressions of queue schedules: what the parser accepts (fields, lists, ranges,
 * steps, names, macros), what it refuses (400 naming the field and the value), next firings in UTC
 * and in zones, the day-of-month / day-of-week rule, and daylight saving time: a fixed-time
 * expression fires a skipped local time once at the jump and a repeated one once; a wildcard one
 * follows real time.
 */
import { expect } from 'chai';
import { nextFiring, parseCron } from '../../../actors/queue/cron.js';
import { TimeZone } from '../../../actors/queue/time-zone.js';
import { BadInputError } from '../../../protocol/errors.js';

/** The next `count` firings after `after` (ISO), as ISO strings. */
function firings(expression: string, after: string, count: number, zone = 'UTC'): string[] {
  const cron = parseCron(expression);
  const tz = TimeZone.of(zone);
  const out: string[] = [];
  for (let t = Date.parse(after); out.length < count;) {
    const next = nextFiring(cron, tz, t);
    if (next === undefined) break;
    out.push(new Date(next).toISOString());
    t = next;
  }
  return out;
}

function refusal(expression: string): string {
  try {
    parseCron(expression);
  } catch (e) {
    expect(e).to.be.instanceOf(BadInputError);
    expect((e as BadInputError).code).to.equal(400);
    return (e as Error).message;
  }
  throw new Error(`'${expression}' was accepted`);
}

const values = (set: ReadonlySet<number>): number[] => [...set].sort((a, b) => a - b);

describe('queue cron expressions', () => {
  describe('parsing', () => {
    it('five fields: minute hour day-of-month month day-of-week, second 0', () => {
      const c = parseCron('5 4 3 2 1');
      expect(c.hasSeconds).to.equal(false);
      expect([
        values(c.second),
        values(c.minute),
        values(c.hour),
        values(c.dayOfMonth),
        values(c.month),
        values(c.dayOfWeek),
      ]).to.deep.equal([[0], [5], [4], [3], [2], [1]]);
    });

    it('six fields put the second first', () => {
      const c = parseCron('*/20 5 4 3 2 1');
      expect(c.hasSeconds).to.equal(true);
      expect(values(c.second)).to.deep.equal([0, 20, 40]);
      expect(values(c.minute)).to.deep.equal([5]);
    });

    it('lists, ranges, steps on stars, ranges and single values', () => {
      const c = parseCron('1,3,5-7 */6 1-10/3 */5 5/1');
      expect(values(c.minute)).to.deep.equal([1, 3, 5, 6, 7]);
      expect(values(c.hour)).to.deep.equal([0, 6, 12, 18]);
      expect(values(c.dayOfMonth)).to.deep.equal([1, 4, 7, 10]);
      expect(values(c.month)).to.deep.equal([1, 6, 11]);
      expect(values(c.dayOfWeek), '5/1 runs to the end, 7 being Sunday').to.deep.equal([0, 5, 6]);
    });

    it('month and weekday names in any case; 7 and 0 are Sunday; ? is * in the day fields', () => {
      const c = parseCron('0 0 ? jan,Mar-MAY mon-FRI');
      expect(values(c.month)).to.deep.equal([1, 3, 4, 5]);
      expect(values(c.dayOfWeek)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(values(parseCron('0 0 * * 7').dayOfWeek)).to.deep.equal([0]);
      expect(values(parseCron('0 0 * * SUN,sat').dayOfWeek)).to.deep.equal([0, 6]);
    });

    it('macros', () => {
      expect(firings('@hourly', '2030-01-01T10:20:00Z', 1)).to.deep.equal(['2030-01-01T11:00:00.000Z']);
      expect(firings('@daily', '2030-01-01T10:20:00Z', 1)).to.deep.equal(['2030-01-02T00:00:00.000Z']);
      expect(firings('@midnight', '2030-01-01T10:20:00Z', 1)).to.deep.equal(['2030-01-02T00:00:00.000Z']);
      expect(firings('@weekly', '2030-01-01T10:20:00Z', 1)).to.deep.equal(['2030-01-06T00:00:00.000Z']);
      expect(firings('@monthly', '2030-01-01T10:20:00Z', 1)).to.deep.equal(['2030-02-01T00:00:00.000Z']);
      expect(firings('@YEARLY', '2030-01-01T10:20:00Z', 1)).to.deep.equal(['2031-01-01T00:00:00.000Z']);
      expect(firings('@annually', '2030-01-01T10:20:00Z', 1)).to.deep.equal(['2031-01-01T00:00:00.000Z']);
    });

    it('refuses with 400 naming the field and the value', () => {
      expect(refusal('* * * *')).to.equal(
        "control cron '* * * *' has 4 field(s); give 5 (minute hour day-of-month month day-of-week) or 6 (second first)",
      );
      expect(refusal('* * * * * * *')).to.match(/has 7 field\(s\)/);
      expect(refusal('')).to.match(/has 0 field\(s\)/);
      expect(refusal('60 * * * *')).to.equal("control cron '60 * * * *': minute field '60' is out of range 0-59");
      expect(refusal('* 24 * * *')).to.match(/hour field '24' is out of range 0-23/);
      expect(refusal('* * 0 * *')).to.match(/day-of-month field '0' is out of range 1-31/);
      expect(refusal('* * * 13 *')).to.match(/month field '13' is out of range 1-12/);
      expect(refusal('* * * * 8')).to.match(/day-of-week field '8' is out of range 0-7/);
      expect(refusal('61 * * * * *')).to.match(/second field '61' is out of range 0-59/);
      expect(refusal('* * * JANUARY *')).to.equal(
        "control cron '* * * JANUARY *': month field 'JANUARY' is not a number or a name (accepted: 1-12, JAN-DEC)",
      );
      expect(refusal('x * * * *')).to.equal(
        "control cron 'x * * * *': minute field 'x' is not a number (accepted: 0-59)",
      );
      expect(refusal('*/0 * * * *')).to.match(
        /minute field '\*\/0' has a step that is not a whole number of at least 1/,
      );
      expect(refusal('*/x * * * *')).to.match(/minute field '\*\/x' has a step/);
      expect(refusal('*/61 * * * *')).to.match(/minute field '\*\/61' has a step beyond the field's span 0-59/);
      expect(refusal('10-5 * * * *')).to.match(/minute field '10-5' is a range that runs backwards \(10 to 5\)/);
      expect(refusal('* * * * FRI-MON')).to.match(/day-of-week field 'FRI-MON' is a range that runs backwards/);
      expect(refusal('1,,2 * * * *')).to.match(/minute field '1,,2' has an empty item/);
      expect(refusal('-5 * * * *')).to.match(/minute field '-5' is not a number/);
      expect(refusal('? * * * *')).to.match(/minute field '\?' uses '\?', which only the day fields take/);
      expect(refusal('@reboot')).to.match(/control cron '@reboot' is not a known macro; use one of @yearly/);
    });
  });

  describe('next firing in UTC', () => {
    it('every 5 minutes, strictly after the given time', () => {
      expect(firings('*/5 * * * *', '2030-01-01T10:05:00Z', 3)).to.deep.equal([
        '2030-01-01T10:10:00.000Z',
        '2030-01-01T10:15:00.000Z',
        '2030-01-01T10:20:00.000Z',
      ]);
      expect(firings('*/5 * * * *', '2030-01-01T10:04:59.999Z', 1)).to.deep.equal(['2030-01-01T10:05:00.000Z']);
    });

    it('every second with six fields; seconds lists', () => {
      expect(firings('* * * * * *', '2030-01-01T10:00:00.500Z', 2)).to.deep.equal([
        '2030-01-01T10:00:01.000Z',
        '2030-01-01T10:00:02.000Z',
      ]);
      expect(firings('15,45 * * * * *', '2030-01-01T10:00:20Z', 3)).to.deep.equal([
        '2030-01-01T10:00:45.000Z',
        '2030-01-01T10:01:15.000Z',
        '2030-01-01T10:01:45.000Z',
      ]);
    });

    it('rolls over hours, days, months and years', () => {
      expect(firings('30 23 31 12 *', '2030-06-01T00:00:00Z', 2)).to.deep.equal([
        '2030-12-31T23:30:00.000Z',
        '2031-12-31T23:30:00.000Z',
      ]);
      expect(firings('0 0 31 * *', '2030-01-31T00:00:00Z', 3), 'months without a 31st are passed over').to.deep.equal([
        '2030-03-31T00:00:00.000Z',
        '2030-05-31T00:00:00.000Z',
        '2030-07-31T00:00:00.000Z',
      ]);
    });

    it('29 February waits for a leap year, eight years over 2100', () => {
      expect(firings('0 12 29 2 *', '2030-01-01T00:00:00Z', 1)).to.deep.equal(['2032-02-29T12:00:00.000Z']);
      expect(firings('0 0 29 2 *', '2096-03-01T00:00:00Z', 1)).to.deep.equal(['2104-02-29T00:00:00.000Z']);
    });

    it('a day that never comes has no firing', () => {
      expect(nextFiring(parseCron('0 0 30 2 *'), TimeZone.of('UTC'), Date.parse('2030-01-01T00:00:00Z'))).to.equal(
        undefined,
      );
      expect(
        nextFiring(parseCron('0 0 31 4,6,9,11 *'), TimeZone.of('UTC'), Date.parse('2030-01-01T00:00:00Z')),
      ).to.equal(undefined);
    });

    it('day-of-month and day-of-week both restricted: either matches (Vixie); one starred: both must', () => {
      // 2030-01-01 is a Tuesday
      expect(firings('0 9 15 * MON', '2030-01-01T00:00:00Z', 4)).to.deep.equal([
        '2030-01-07T09:00:00.000Z',
        '2030-01-14T09:00:00.000Z',
        '2030-01-15T09:00:00.000Z',
        '2030-01-21T09:00:00.000Z',
      ]);
      expect(firings('0 9 * * MON', '2030-01-01T00:00:00Z', 2)).to.deep.equal([
        '2030-01-07T09:00:00.000Z',
        '2030-01-14T09:00:00.000Z',
      ]);
      // */10 starts with *: a Monday that is also the 1st, 11th, 21st or 31st
      const both = firings('0 9 */10 * MON', '2030-01-01T00:00:00Z', 3).map((t) => new Date(t));
      expect(both).to.have.length(3);
      for (const d of both) {
        expect(d.getUTCDay()).to.equal(1);
        expect([1, 11, 21, 31]).to.include(d.getUTCDate());
      }
    });
  });

  describe('next firing in a zone', () => {
    it('fires at local wall time: Europe/Berlin winter and summer, Asia/Kolkata half hours', () => {
      expect(firings('0 9 * * *', '2030-01-10T00:00:00Z', 1, 'Europe/Berlin')).to.deep.equal([
        '2030-01-10T08:00:00.000Z',
      ]);
      expect(firings('0 9 * * *', '2030-07-10T00:00:00Z', 1, 'Europe/Berlin')).to.deep.equal([
        '2030-07-10T07:00:00.000Z',
      ]);
      expect(firings('0 9 * * *', '2030-07-10T00:00:00Z', 1, 'Asia/Kolkata')).to.deep.equal([
        '2030-07-10T03:30:00.000Z',
      ]);
      expect(firings('0 0 1 * *', '2030-01-01T00:00:00Z', 1, 'America/Los_Angeles')).to.deep.equal([
        '2030-01-01T08:00:00.000Z',
      ]);
    });

    it('day and weekday are the local ones', () => {
      // 2030-01-06 23:30 in New York is Monday 04:30 UTC
      expect(firings('30 23 * * SUN', '2030-01-01T00:00:00Z', 1, 'America/New_York')).to.deep.equal([
        '2030-01-07T04:30:00.000Z',
      ]);
    });

    it('an unknown zone is 400 naming the control tz', () => {
      expect(() => TimeZone.of('Mars/Olympus')).to.throw(
        BadInputError,
        "control tz 'Mars/Olympus' is not a known time zone; use an IANA name such as UTC, Europe/Berlin or America/New_York",
      );
    });
  });

  describe('daylight saving time (America/New_York: 2030-03-10 02:00 → 03:00, 2030-11-03 02:00 → 01:00)', () => {
    it('a skipped local time of a fixed-time expression fires once, at the jump', () => {
      expect(firings('30 2 * * *', '2030-03-09T12:00:00Z', 3, 'America/New_York')).to.deep.equal([
        '2030-03-10T07:00:00.000Z',
        '2030-03-11T06:30:00.000Z',
        '2030-03-12T06:30:00.000Z',
      ]);
      expect(
        firings('0,15,30,45 2 * * *', '2030-03-10T05:00:00Z', 2, 'America/New_York'),
        'four skipped times: one firing',
      ).to.deep.equal(['2030-03-10T07:00:00.000Z', '2030-03-11T06:00:00.000Z']);
    });

    it('a wildcard expression follows real time across the jump (the skipped times do not happen)', () => {
      expect(firings('*/30 * * * *', '2030-03-10T06:00:00Z', 3, 'America/New_York')).to.deep.equal([
        '2030-03-10T06:30:00.000Z',
        '2030-03-10T07:00:00.000Z',
        '2030-03-10T07:30:00.000Z',
      ]);
      expect(firings('5 * * * *', '2030-03-10T06:30:00Z', 2, 'America/New_York')).to.deep.equal([
        '2030-03-10T07:05:00.000Z',
        '2030-03-10T08:05:00.000Z',
      ]);
    });

    it('a repeated local time of a fixed-time expression fires once, at its first occurrence', () => {
      expect(firings('30 1 * * *', '2030-11-03T04:00:00Z', 2, 'America/New_York')).to.deep.equal([
        '2030-11-03T05:30:00.000Z',
        '2030-11-04T06:30:00.000Z',
      ]);
    });

    it('a wildcard expression fires through both passes of the repeated hour, in real time', () => {
      expect(firings('*/20 * * * *', '2030-11-03T05:10:00Z', 7, 'America/New_York')).to.deep.equal([
        '2030-11-03T05:20:00.000Z',
        '2030-11-03T05:40:00.000Z',
        '2030-11-03T06:00:00.000Z',
        '2030-11-03T06:20:00.000Z',
        '2030-11-03T06:40:00.000Z',
        '2030-11-03T07:00:00.000Z',
        '2030-11-03T07:20:00.000Z',
      ]);
      expect(
        firings('*/20 * * * *', '2030-11-03T06:10:00Z', 1, 'America/New_York'),
        'from inside the second pass',
      ).to.deep.equal(['2030-11-03T06:20:00.000Z']);
    });

    it('half-hour changes (Australia/Lord_Howe) keep the local time', () => {
      // 2030-04-07 02:00 (+11) → 01:30 (+10:30)
      expect(firings('0 0 * * SUN', '2030-04-01T00:00:00Z', 2, 'Australia/Lord_Howe')).to.deep.equal([
        '2030-04-06T13:00:00.000Z',
        '2030-04-13T13:30:00.000Z',
      ]);
    });
  });

  describe('time zone instants', () => {
    const ny = TimeZone.of('America/New_York');
    it('one, two in the repeated hour, the jump in the skipped one', () => {
      expect(ny.instantsOf(Date.parse('2030-07-01T12:00:00Z'))).to.deep.equal({
        kind: 'one',
        at: Date.parse('2030-07-01T16:00:00Z'),
      });
      expect(ny.instantsOf(Date.parse('2030-11-03T01:30:00Z'))).to.deep.equal({
        kind: 'two',
        first: Date.parse('2030-11-03T05:30:00Z'),
        second: Date.parse('2030-11-03T06:30:00Z'),
      });
      expect(ny.instantsOf(Date.parse('2030-03-10T02:30:00Z'))).to.deep.equal({
        kind: 'gap',
        transition: Date.parse('2030-03-10T07:00:00Z'),
      });
    });
  });
});
