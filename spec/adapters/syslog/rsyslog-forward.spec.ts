import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import { recorded } from '../../integration/queue/helpers.js';
import { tempDir } from '../../temp.js';
import { freePort, waitForPort } from '../ports.js';
import { logger, needPeers, startRsyslog } from './peers.js';
import { until } from '../../support/wait.js';

/**
 * logger → a private rsyslogd (imtcp) → omfwd in RSYSLOG_TraditionalForwardFormat over UDP and over
 * TCP → two hivenode receivers. rsyslogd writes the tag of an RFC 5424 message without PROCID (logger's
 * default) bare, without a colon: `<13>Nov 24 08:05:02 vm viarsys m08 via rsyslog`.
 */
describe('syslog receiver behind a real rsyslogd forwarding in its traditional format', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  let rsyslog: ChildProcess | undefined;
  before(function () {
    needPeers(this);
  });
  afterEach(async () => {
    rsyslog?.kill('SIGTERM');
    rsyslog = undefined;
    await node?.stop(2000);
    node = undefined;
  });

  it('reads the tag (with or without a colon) as appname and the message without it, over UDP and TCP', async () => {
    const dir = tempDir('hn-rsyslog-fwd-');
    const [inPort, udpPort, tcpPort] = [await freePort(), await freePort(), await freePort()];
    const viaUdp = join(dir, 'udp.jsonl');
    const viaTcp = join(dir, 'tcp.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'udp-logs', RecordFile: viaUdp },
      { service: 'echo', NAME: 'tcp-logs', RecordFile: viaTcp },
      { service: 'syslog', NAME: 'rx-udp', IP: '127.0.0.1', Port: udpPort, UDP: true, OUTPUTCHANNEL: 'udp-logs' },
      { service: 'syslog', NAME: 'rx-tcp', IP: '127.0.0.1', Port: tcpPort, TCP: true, OUTPUTCHANNEL: 'tcp-logs' },
    ]));
    // a ruleset of its own, so rsyslogd's internal messages are not forwarded
    rsyslog = startRsyslog(dir, [
      'module(load="imtcp")',
      `input(type="imtcp" address="127.0.0.1" port="${inPort}" ruleset="forward")`,
      'ruleset(name="forward") {',
      `  action(type="omfwd" target="127.0.0.1" port="${udpPort}" protocol="udp" template="RSYSLOG_TraditionalForwardFormat")`,
      `  action(type="omfwd" target="127.0.0.1" port="${tcpPort}" protocol="tcp" template="RSYSLOG_TraditionalForwardFormat")`,
      '}',
    ]);
    await waitForPort(inPort, 15_000, 'rsyslogd', rsyslog);
    logger(inPort, ['-T', '-t', 'viarsys', '-p', 'local4.err', 'm08 via rsyslog']); // RFC 5424, no PROCID: bare tag
    logger(inPort, ['-T', '--rfc3164', '-t', 'my-app', 'with a colon']); // `my-app:`
    logger(inPort, ['-T', '-i', '-t', 'postfix/smtpd', 'with a pid']); // `postfix/smtpd[pid]:`
    for (const [transport, file] of [
      ['UDP', viaUdp],
      ['TCP', viaTcp],
    ] as const) {
      await until(() => recorded(file).length === 3, 15_000);
      const byMessage = new Map(recorded(file).map((r) => [r.message.Data.message![0]!, r.message.Data]));
      expect([...byMessage.keys()].sort(), transport).to.deep.equal(['m08 via rsyslog', 'with a colon', 'with a pid']);
      expect(byMessage.get('m08 via rsyslog'), transport).to.deep.include({
        appname: ['viarsys'],
        procid: [''],
        facility: ['local4'],
        severity: ['error'],
        format: ['RFC3164'],
      });
      expect(byMessage.get('m08 via rsyslog')!.hostname![0], transport).to.not.equal('');
      expect(byMessage.get('with a colon'), transport).to.deep.include({ appname: ['my-app'], procid: [''] });
      expect(byMessage.get('with a pid')!.appname, transport).to.deep.equal(['postfix/smtpd']);
      expect(byMessage.get('with a pid')!.procid![0], transport).to.match(/^\d+$/);
    }
    for (const name of ['rx-udp', 'rx-tcp'])
      expect(node.services.find((s) => s.name === name)!.running.status(), name).to.deep.include({
        received: 3,
        invalid: 0,
      });
  });
});
