import { expect } from 'chai';
import { inferYear, parseRfc3164 } from '../../../actors/syslog/rfc3164.js';
import { local } from './corpus.js';

const at = (y: number, mo: number, d: number, h = 12): Date => new Date(y, mo - 1, d, h, 0, 0);
const parse = (line: string, now = at(2024, 3, 15)) => parseRfc3164(line, now);

describe('RFC 3164 lenient parser', () => {
  it('reads PRI, BSD timestamp, hostname, tag[pid] and message', () => {
    expect(parse('<30>Mar 15 11:22:33 server1 systemd[1]: Started x.')).to.deep.include({
      priority: 30,
      timestamp: local(2024, 3, 15, 11, 22, 33),
      hostname: 'server1',
      appname: 'systemd',
      procid: '1',
      message: 'Started x.',
      format: 'RFC3164',
    });
  });

  it('defaults a missing PRI to 13 and makes a line with an invalid PRI all message', () => {
    expect(parse('Mar 15 11:22:33 h a: m')).to.deep.include({
      priority: 13,
      hostname: 'h',
      appname: 'a',
      message: 'm',
    });
    for (const bad of ['<192>Mar 15 11:22:33 h a: m', '<1a>x', '<>x', '<', '<1234>x'])
      expect(parse(bad), bad).to.deep.include({ priority: 13, message: bad, timestamp: '' });
  });

  describe('year inference (no year in a BSD timestamp)', () => {
    const year = (line: string, now: Date): number => new Date(parse(line, now).timestamp).getFullYear();

    it('a December message received in January is last year’s', () => {
      expect(year('<13>Dec 31 23:59:59 h a: m', at(2025, 1, 1, 0))).to.equal(2024);
    });
    it('a January message received at the end of December (sender clock ahead) is next year’s', () => {
      expect(year('<13>Jan  1 00:00:01 h a: m', new Date(2024, 11, 31, 23, 59, 58))).to.equal(2025);
    });
    it('a date up to a week ahead is this year (zones, skew); further ahead is last year', () => {
      expect(year('<13>Mar 20 00:00:00 h a: m', at(2024, 3, 15))).to.equal(2024);
      expect(year('<13>Apr 20 00:00:00 h a: m', at(2024, 3, 15))).to.equal(2023);
    });
    it('a Cisco clock never set (Mar 1) stays in the past', () => {
      expect(year('<189>1: *Mar  1 00:00:04.123: %SYS-5-CONFIG_I: x', at(2026, 11, 22))).to.equal(2026);
    });
    it('Feb 29 goes back to the last leap year', () => {
      expect(parse('<13>Feb 29 10:00:00 h a: m', at(2025, 3, 1)).timestamp).to.equal(local(2024, 2, 29, 10, 0, 0));
    });
    it('inferYear is exported for the edge cases', () => {
      expect(
        inferYear({ month: 11, day: 31, hour: 23, minute: 0, second: 0, ms: 0 }, 0, new Date(Date.UTC(2025, 0, 1))),
      ).to.equal(Date.UTC(2024, 11, 31, 23));
    });
  });

  it('accepts day padding by space, zero or nothing, and any case of month', () => {
    for (const l of [
      '<13>Mar  5 01:02:03 h a: m',
      '<13>Mar 05 01:02:03 h a: m',
      '<13>Mar 5 01:02:03 h a: m',
      '<13>MAR  5 01:02:03 h a: m',
    ])
      expect(parse(l).timestamp, l).to.equal(local(2024, 3, 5, 1, 2, 3));
  });

  it('leaves an impossible BSD date empty but still consumes it', () => {
    expect(parse('<13>Feb 30 10:00:00 h a: m')).to.deep.include({
      timestamp: '',
      hostname: 'h',
      appname: 'a',
      message: 'm',
    });
    expect(parse('<13>Mar 15 25:00:00 h a: m').timestamp).to.equal('');
  });

  it('reads ISO timestamps: Z, offsets with and without colon, no offset (local), comma fraction', () => {
    expect(parse('<13>2024-03-15T11:22:33Z h a: m').timestamp).to.equal('2024-03-15T11:22:33.000Z');
    expect(parse('<13>2024-03-15T11:22:33+0100 h a: m').timestamp).to.equal('2024-03-15T10:22:33.000Z');
    expect(parse('<13>2024-03-15T11:22:33-03:00 h a: m').timestamp).to.equal('2024-03-15T14:22:33.000Z');
    expect(parse('<13>2024-03-15T11:22:33 h a: m').timestamp).to.equal(local(2024, 3, 15, 11, 22, 33));
    expect(parse('<13>2024-03-15T11:22:33,250Z h a: m').timestamp).to.equal('2024-03-15T11:22:33.250Z');
  });

  it('reads zone names after BSD times, and keeps a hostname that only looks like one', () => {
    expect(parse('<13>Mar 15 11:22:33 UTC h a: m')).to.deep.include({
      timestamp: '2024-03-15T11:22:33.000Z',
      hostname: 'h',
    });
    expect(parse('<13>Mar 15 11:22:33 PST h a: m').timestamp).to.equal('2024-03-15T19:22:33.000Z');
    expect(parse('<13>Mar 15 11:22:33 +02:00 h a: m').timestamp).to.equal('2024-03-15T09:22:33.000Z');
    expect(parse('<13>Mar 15 11:22:33 WEB a: m')).to.deep.include({
      timestamp: local(2024, 3, 15, 11, 22, 33),
      hostname: 'WEB',
    });
    expect(parse('<13>Mar 15 11:22:33 alice: m')).to.deep.include({ hostname: '', appname: 'alice', message: 'm' });
  });

  it('tells tags from hostnames and messages', () => {
    expect(parse('<13>Mar 15 11:22:33 app[5]: no hostname')).to.deep.include({
      hostname: '',
      appname: 'app',
      procid: '5',
      message: 'no hostname',
    });
    expect(parse('<13>Mar 15 11:22:33 host app[5] pid without colon')).to.deep.include({
      hostname: 'host',
      appname: 'app',
      procid: '5',
      message: 'pid without colon',
    });
    expect(parse('<13>Mar 15 11:22:33 host app:no space')).to.deep.include({ appname: '', message: 'app:no space' });
    expect(parse('<13>Mar 15 11:22:33 host http://x.example/ is a url')).to.deep.include({
      appname: '',
      message: 'http://x.example/ is a url',
    });
    expect(parse('<13>Mar 15 11:22:33 host app:')).to.deep.include({ appname: 'app', message: '' });
    expect(parse('<13>Mar 15 11:22:33 lonely')).to.deep.include({ hostname: '', message: 'lonely' });
    expect(parse('<13>Mar 15 11:22:33 [::1] app: v6 host')).to.deep.include({ hostname: '[::1]', appname: 'app' });
    expect(parse(`<13>Mar 15 11:22:33 host ${'t'.repeat(49)}: long`)).to.deep.include({
      appname: '',
      message: `${'t'.repeat(49)}: long`,
    });
  });

  it('reads a tag without a colon after timestamp and hostname, as rsyslog does (its traditional forward format of an RFC 5424 message without PROCID)', () => {
    expect(parse('<163>Nov 24 08:05:02 vm viarsys m08 via rsyslog')).to.deep.include({
      hostname: 'vm',
      appname: 'viarsys',
      procid: '',
      message: 'm08 via rsyslog',
    });
    for (const name of ['my-app', 'my.app', 'my_app', 'postfix/smtpd', 'CRON', 'app5'])
      expect(parse(`<13>Mar 15 11:22:33 host ${name} text here`), name).to.deep.include({
        appname: name,
        message: 'text here',
      });
    // the tags with a colon and a pid keep their meaning
    expect(parse('<13>Mar 15 11:22:33 vm systemd-logind[1]: x')).to.deep.include({
      appname: 'systemd-logind',
      procid: '1',
      message: 'x',
    });
    expect(parse('<13>Mar 15 11:22:33 vm postfix/smtpd[12]: x')).to.deep.include({
      appname: 'postfix/smtpd',
      procid: '12',
      message: 'x',
    });
    expect(parse('<13>Mar 15 11:22:33 vm CRON[99]: x')).to.deep.include({
      appname: 'CRON',
      procid: '99',
      message: 'x',
    });
    expect(parse('<13>Mar 15 11:22:33 vm my.app: x')).to.deep.include({ appname: 'my.app', message: 'x' });
  });

  it('keeps a colon-less first word in the message when it cannot be a program name, has nothing after it, or no header precedes it', () => {
    for (const word of ['1,2024/03/15', 'date=2024-03-15', '(paren)', '10.0.0.1', '42', 'a#b', 'ünï'])
      expect(parse(`<13>Mar 15 11:22:33 host ${word} rest`), word).to.deep.include({
        hostname: 'host',
        appname: '',
        message: `${word} rest`,
      });
    expect(parse('<13>Mar 15 11:22:33 host MSWinEventLog\t1\tSecurity')).to.deep.include({
      appname: '',
      message: 'MSWinEventLog\t1\tSecurity',
    });
    expect(parse('<13>Mar 15 11:22:33 host lonely')).to.deep.include({
      hostname: 'host',
      appname: '',
      message: 'lonely',
    });
    expect(parse('<13>just a message')).to.deep.include({ hostname: '', appname: '', message: 'just a message' });
    expect(parse(`<13>Mar 15 11:22:33 host ${'t'.repeat(49)} long`)).to.deep.include({
      appname: '',
      message: `${'t'.repeat(49)} long`,
    });
  });

  it('reads Cisco forms: sequence, origin host, clock marks, mnemonic as msgid', () => {
    expect(parse('<189>000123: *Mar  1 00:00:04.123 UTC: %SYS-5-CONFIG_I: by vty0')).to.deep.include({
      timestamp: '2024-03-01T00:00:04.123Z',
      msgid: 'SYS-5-CONFIG_I',
      message: '%SYS-5-CONFIG_I: by vty0',
    });
    expect(parse('<189>7: sw-core-01.example: .Mar 15 11:22:33: %SYS-5-RESTART: up')).to.deep.include({
      hostname: 'sw-core-01.example',
      msgid: 'SYS-5-RESTART',
    });
    expect(
      parse(
        '<187>RP/0/RSP0/CPU0:Mar 15 11:22:33.123 : ifmgr[227]: %PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/0, changed state to Down',
      ).message,
    ).to.contain('%PKT_INFRA-LINK-3-UPDOWN');
    expect(parse('<13>42: not cisco at all')).to.deep.include({ message: '42: not cisco at all', msgid: '' });
  });
});
