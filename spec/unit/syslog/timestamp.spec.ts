import { expect } from 'chai';
import { isoOf, parseRfc3339, strictIso } from '../../../actors/syslog/timestamp.js';

/** What strictIso must answer: the strict parse, then its ISO text. */
const slow = (text: string): string | undefined => {
  const ms = parseRfc3339(text, true);
  return ms === undefined ? undefined : isoOf(ms);
};

describe('syslog strictIso: RFC 5424 TIMESTAMP to ISO 8601 UTC, the minute read once', () => {
  it('answers as the strict parse and isoOf do, for timestamps in the minute last read and around it', () => {
    const minutes = [
      '2024-03-15T11:22',
      '2024-03-15T11:23',
      '2024-02-29T23:59',
      '2023-02-28T00:00',
      '9999-12-31T23:59',
      '0000-01-01T00:00',
    ];
    const zones = ['Z', '+01:00', '-05:30', '+00:00', '+14:00', 'z', '+0100', '+01', ''];
    const tails = [
      ':00',
      ':07',
      ':59',
      ':60',
      ':61',
      ':5',
      ':075',
      ':33.1',
      ':33.12',
      ':33.123',
      ':33.1234',
      ':33.123456',
      ':33.1234567',
      ':33.',
      ':33.12a',
      ':3a',
      ':33,123',
      ' 33',
    ];
    let checked = 0;
    // each minute and zone first, then every tail against the minute just remembered (and the others)
    for (let round = 0; round < 2; round++) {
      for (const m of minutes) {
        for (const z of zones) {
          for (const t of tails) {
            const text = `${m}${t}${z}`;
            expect(strictIso(text), text).to.equal(slow(text));
            checked++;
          }
        }
      }
    }
    expect(checked).to.be.above(1000);
  });

  it('a leap second is :59 with its fraction; an offset moves the minute, not the seconds', () => {
    expect(strictIso('2024-03-15T11:22:33.123+01:00')).to.equal('2024-03-15T10:22:33.123Z');
    expect(strictIso('2024-03-15T11:22:44.5+01:00')).to.equal('2024-03-15T10:22:44.500Z');
    expect(strictIso('2024-03-15T11:22:60.25+01:00')).to.equal('2024-03-15T10:22:59.250Z');
    expect(strictIso('2024-03-15T11:22:61+01:00')).to.equal(undefined);
    expect(strictIso('2024-02-30T11:22:33Z')).to.equal(undefined);
    expect(strictIso('2024-03-15T11:22:33Z')).to.equal('2024-03-15T11:22:33.000Z');
    // the same minute text under another offset is not the remembered minute
    expect(strictIso('2024-03-15T11:22:33-02:00')).to.equal('2024-03-15T13:22:33.000Z');
  });
});
