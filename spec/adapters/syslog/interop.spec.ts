import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort, waitForPort } from '../ports.js';
import { join } from 'node:path';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import { recorded } from '../../integration/queue/helpers.js';
import { tempDir } from '../../temp.js';
import { logger, needPeers, startRsyslog } from './peers.js';
import { until } from '../../support/wait.js';

describe('syslog interop with real peers (logger, rsyslog)', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  let dir: string;
  before(function () {
    needPeers(this);
  });
  beforeEach(() => {
    dir = tempDir('hn-syslog-');
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('the receiver takes logger messages over UDP (RFC 3164, RFC 5424) and TCP with octet counting, with their fields', async () => {
    const port = await freePort();
    const record = join(dir, 'received.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'logs', RecordFile: record },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        Port: port,
        UDP: true,
        TCP: true,
        OUTPUTCHANNEL: 'logs',
        Format: 'RFC5424',
      },
    ]));
    logger(port, ['-d', '--rfc3164', '-t', 'bsdtag', '-p', 'local3.warning', 'hello bsd']);
    logger(port, ['-d', '--rfc5424', '-t', 'ietftag', '-p', 'user.err', '--msgid', 'M42', 'hello ietf']);
    logger(port, ['-T', '--octet-count', '--rfc5424', '-t', 'tcptag', '-p', 'daemon.info', 'hello tcp']);
    await until(() => recorded(record).length === 3, 10_000);
    const byTag = new Map(recorded(record).map((r) => [r.message.Data.appname![0]!, r.message]));
    const bsd = byTag.get('bsdtag')!;
    expect(bsd.Class).to.equal('syslog');
    expect(bsd.Operation).to.equal('message');
    expect(bsd.Data).to.deep.include({
      facility: ['local3'],
      severity: ['warning'],
      message: ['hello bsd'],
      format: ['RFC3164'],
      remoteaddress: ['127.0.0.1'],
    });
    expect(byTag.get('ietftag')!.Data).to.deep.include({
      facility: ['user'],
      severity: ['error'],
      msgid: ['M42'],
      message: ['hello ietf'],
      format: ['RFC5424'],
    });
    expect(byTag.get('tcptag')!.Data).to.deep.include({
      facility: ['daemon'],
      severity: ['informational'],
      message: ['hello tcp'],
    });
    const status = node.services.find((s) => s.kind === 'syslog')!.running.status();
    expect(status.received).to.equal(3);
    expect(status.invalid).to.equal(1); // the RFC 3164 line, with Format RFC5424: counted, still forwarded
  });

  it("Format 'auto' takes logger's default (RFC 5424) and --rfc3164 over UDP and TCP, framed by LF or octet count, none invalid", async () => {
    const port = await freePort();
    const record = join(dir, 'received.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'logs', RecordFile: record },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        Port: port,
        UDP: true,
        TCP: true,
        OUTPUTCHANNEL: 'logs',
        Format: 'auto',
      },
    ]));
    const sends = [
      ['udp5424', '-d'],
      ['udp3164', '-d', '--rfc3164'],
      ['tcp5424', '-T'],
      ['tcp3164', '-T', '--rfc3164'],
      ['oct5424', '-T', '--octet-count'],
      ['oct3164', '-T', '--octet-count', '--rfc3164'],
    ];
    for (const [tag, ...args] of sends) logger(port, [...args, '-t', tag!, `hello ${tag!}`]);
    await until(() => recorded(record).length === sends.length, 10_000);
    const byTag = new Map(recorded(record).map((r) => [r.message.Data.appname![0]!, r.message.Data]));
    for (const [tag] of sends)
      expect(byTag.get(tag!), tag).to.deep.include({
        message: [`hello ${tag!}`],
        format: [tag!.endsWith('5424') ? 'RFC5424' : 'RFC3164'],
      });
    const status = node.services.find((s) => s.kind === 'syslog')!.running.status();
    expect(status).to.deep.include({ received: sends.length, invalid: 0 });
  });

  it('garbage on a TCP connection closes only that connection; the receiver keeps serving', async () => {
    const port = await freePort();
    const record = join(dir, 'received.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'logs', RecordFile: record },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        Port: port,
        TCP: true,
        OUTPUTCHANNEL: 'logs',
        MaxMessageBytes: 1024,
      },
    ]));
    const bad = connect(port, '127.0.0.1');
    await new Promise((r) => bad.once('connect', r));
    bad.write('999999999 ');
    await new Promise((r) => bad.once('close', r));
    const good = connect(port, '127.0.0.1');
    await new Promise((r) => good.once('connect', r));
    good.write('<13>Mar 15 11:22:33 host app: still here\n');
    await until(() => recorded(record).length === 1, 5000);
    good.destroy();
  });

  it('rsyslog receives what the sender sends over TCP (octet counting) and UDP, field by field', async () => {
    const port = await freePort();
    const out = join(dir, 'out.log');
    const rsyslog: ChildProcess = startRsyslog(dir, [
      'module(load="imudp")',
      'module(load="imtcp")',
      `input(type="imudp" address="127.0.0.1" port="${port}")`,
      `input(type="imtcp" address="127.0.0.1" port="${port}")`,
      'template(name="fields" type="string" string="%syslogseverity-text%|%syslogfacility-text%|%programname%|%procid%|%hostname%|%timereported:::date-rfc3339%|%msg%\\n")',
      `*.* action(type="omfile" file="${out}" template="fields")`,
    ]);
    try {
      // imudp and imtcp bind together: once TCP accepts, UDP is up too
      await waitForPort(port, 15_000, 'rsyslogd', rsyslog);
      ({ node } = await startTestNode([
        {
          service: 'syslog',
          NAME: 'tcp-out',
          RemoteIP: '127.0.0.1',
          RemotePort: port,
          SendTCP: true,
          SendTag: 'hivetcp',
        },
        {
          service: 'syslog',
          NAME: 'udp-out',
          RemoteIP: '127.0.0.1',
          RemotePort: port,
          SendUDP: true,
          SendTag: 'hiveudp',
          SendFormat: 'RFC5424',
        },
        {
          service: 'syslog',
          NAME: 'json-out',
          RemoteIP: '127.0.0.1',
          RemotePort: port,
          SendTCP: true,
          SendTag: 'hivejson',
          SendJSON: true,
        },
      ]));
      // SendJSON: the whole Data as one message, as severe as its most severe key; empty Data sends nothing
      await node.hive.call('json-out', makeMessage({ Data: mapOf({ info: ['fine'], error: ['json broke'] }) }), 5000);
      await node.hive.call('json-out', makeMessage({ Data: mapOf({}) }), 5000);
      const tcp = await node.hive.call(
        'tcp-out',
        makeMessage({
          Data: mapOf({
            error: ['disk failing'],
            warn: ['two lines\nin one message'],
            info: ['note'],
            other: ['debugging'],
          }),
        }),
        5000,
      );
      expect(tcp).to.deep.equal({ Code: 200, Message: 'Success', Data: {}, List: null });
      await node.hive.call('udp-out', makeMessage({ Data: mapOf({ critical: ['über critical'] }) }), 5000);
      await until(() => existsSync(out) && readFileSync(out, 'utf8').trim().split('\n').length >= 6, 15_000);
      const lines = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split('|'));
      const find = (text: string) => lines.find((l) => l.slice(6).join('|').includes(text))!;
      expect(find('disk failing').slice(0, 3)).to.deep.equal(['err', 'user', 'hivetcp']);
      expect(find('disk failing')[3]).to.equal(String(process.pid));
      expect(find('two lines').slice(0, 1)).to.deep.equal(['warning']);
      expect(find('note')[0]).to.equal('info');
      expect(find('debugging')[0]).to.equal('debug');
      const crit = find('über critical');
      expect(crit.slice(0, 3)).to.deep.equal(['crit', 'user', 'hiveudp']);
      const reported = new Date(crit[5]!);
      expect(Math.abs(reported.getTime() - Date.now())).to.be.below(60_000);
      const json = lines.filter((l) => l[2] === 'hivejson');
      expect(json, 'one message for the Data, none for empty Data').to.have.length(1);
      expect(json[0]![0]).to.equal('err');
      expect(JSON.parse(json[0]!.slice(6).join('|'))).to.deep.equal({ info: ['fine'], error: ['json broke'] });
    } finally {
      rsyslog.kill('SIGTERM');
    }
  });
});
