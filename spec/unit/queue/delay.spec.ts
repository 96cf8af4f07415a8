/**
 * The `delay` and `not_before` controls: what they accept, what they refuse (400 naming
 * the control and what is accepted), the 366-day limit, both at once, and that the queue keeps them
 * to itself.
 */
import { expect } from 'chai';
import { passedControls } from '../../../actors/queue/command-parser.js';
import { MAX_SCHEDULE_MS, notBeforeOf, parseRfc3339 } from '../../../actors/queue/delay.js';
import { BadInputError } from '../../../protocol/errors.js';
import { mapOf } from '../../../protocol/message.js';

const NOW = Date.parse('2030-06-01T12:00:00Z');
const at = (control: Record<string, string[]>): number | undefined => notBeforeOf(mapOf(control), NOW);
const refusal = (control: Record<string, string[]>): BadInputError => {
  try {
    at(control);
  } catch (e) {
    expect(e).to.be.instanceOf(BadInputError);
    expect((e as BadInputError).code).to.equal(400);
    return e as BadInputError;
  }
  throw new Error(`${JSON.stringify(control)} was accepted`);
};

describe('queue delay and not_before controls', () => {
  it('neither control: no time (delivered as soon as durable)', () => {
    expect(at({})).to.equal(undefined);
    expect(at({ requeue_timer: ['5'] })).to.equal(undefined);
  });

  it('delay takes the durations the configuration takes; a plain number is seconds; 0 is now', () => {
    expect(at({ delay: ['250ms'] })).to.equal(NOW + 250);
    expect(at({ delay: ['20s'] })).to.equal(NOW + 20_000);
    expect(at({ delay: ['5m'] })).to.equal(NOW + 300_000);
    expect(at({ delay: ['1h'] })).to.equal(NOW + 3_600_000);
    expect(at({ delay: ['1m30s'] })).to.equal(NOW + 90_000);
    expect(at({ delay: ['2'] })).to.equal(NOW + 2000);
    expect(at({ delay: [' 1.5 '] })).to.equal(NOW + 1500);
    expect(at({ delay: ['0'] })).to.equal(NOW);
    expect(at({ delay: ['8784h'] })).to.equal(NOW + MAX_SCHEDULE_MS);
    expect(at({ delay: ['2d'] })).to.equal(NOW + 2 * 86_400_000);
  });

  it('a bad delay is a 400 naming the control and the accepted forms', () => {
    for (const bad of ['', 'soon', '-5s', '5 minutes', '1w', '1e3', '5s5']) {
      const e = refusal({ delay: [bad] });
      expect(e.message)
        .to.contain(`control delay '${bad}' is not a duration`)
        .and.to.contain('250ms, 20s, 5m, 1h, 30d or 1m30s')
        .and.to.contain('366 days');
    }
    expect(refusal({ delay: ['8785h'] }).message).to.contain(
      "control delay '8785h' is too long; it may be at most 366 days ahead",
    );
    expect(refusal({ delay: ['99999999999999999999999'] }).message).to.contain('too long');
  });

  it('not_before takes an RFC 3339 time with its zone; a time in the past is now', () => {
    expect(at({ not_before: ['2030-06-01T12:00:10Z'] })).to.equal(NOW + 10_000);
    expect(at({ not_before: ['2030-06-01T14:00:10+02:00'] })).to.equal(NOW + 10_000);
    expect(at({ not_before: ['2030-06-01T07:30:10.250-04:30'] })).to.equal(NOW + 10_250);
    expect(at({ not_before: ['2030-06-01t12:00:10z'] })).to.equal(NOW + 10_000);
    expect(at({ not_before: ['2030-06-01 12:00:10Z'] })).to.equal(NOW + 10_000);
    expect(at({ not_before: ['2000-01-01T00:00:00Z'] })).to.equal(Date.parse('2000-01-01T00:00:00Z'));
  });

  it('a bad not_before is a 400 naming the control and the accepted form; beyond 366 days too', () => {
    for (const bad of [
      '',
      'tomorrow',
      '2030-06-01',
      '2030-06-01T12:00:10',
      '2030-06-01T12:00Z',
      '2030-02-30T00:00:00Z',
      '2030-13-01T00:00:00Z',
      '2030-06-01T24:00:00Z',
      '2030-06-01T12:00:10+25:00',
      '1717243210',
    ]) {
      const e = refusal({ not_before: [bad] });
      expect(e.message)
        .to.contain(`control not_before '${bad}' is not a time`)
        .and.to.contain('RFC 3339 time with its zone');
    }
    expect(refusal({ not_before: ['2031-06-03T12:00:00Z'] }).message).to.contain(
      'too far ahead; it may be at most 366 days ahead',
    );
  });

  it('both controls at once are a 400 naming both', () => {
    expect(refusal({ delay: ['5s'], not_before: ['2030-06-01T12:00:10Z'] }).message).to.contain(
      'delay and not_before exclude each other',
    );
  });

  it('parseRfc3339 checks the calendar (leap years) rather than letting Date roll over', () => {
    expect(parseRfc3339('2028-02-29T00:00:00Z')).to.equal(Date.UTC(2028, 1, 29));
    expect(Number.isNaN(parseRfc3339('2030-02-29T00:00:00Z'))).to.equal(true);
    expect(Number.isNaN(parseRfc3339('2030-04-31T00:00:00Z'))).to.equal(true);
  });

  it('the queue keeps delay and not_before to itself: they are not passed on with the entry', () => {
    expect(passedControls(mapOf({ delay: ['5s'], not_before: ['2030-06-01T12:00:10Z'], custom: ['x'] }))).to.deep.equal(
      { custom: ['x'] },
    );
  });
});
