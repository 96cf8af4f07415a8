import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { certPath } from '../../certs.js';
import { startTestNode } from '../../integration/helpers.js';
import { recorded } from '../../integration/queue/helpers.js';
import { status, tlsFiles } from '../../integration/syslog-tls-peers.js';
import { tempDir } from '../../temp.js';
import { freePort, waitForPort } from '../ports.js';
import { logger, needGtlsPeers, startRsyslog } from './peers.js';
import { sleep, until } from '../../support/wait.js';

/** The lines of rsyslog's output file, without the space an RFC 3164 message's text starts with. */
const lines = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.replace('| ', '|'))
    : [];

/** An omfwd action to 127.0.0.1:port over gtls, checking that the server's certificate names localhost, with its own queue (a refused action does not hold up the others). */
function forwardTls(port: number, extra: string): string {
  return `  action(type="omfwd" target="127.0.0.1" port="${port}" protocol="tcp" StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="x509/name" StreamDriverPermittedPeers="localhost" ${extra} queue.type="LinkedList" action.resumeInterval="1")`;
}

/** A private rsyslogd receiving over TLS (imtcp with gtls) on port, writing every message's text to out. */
function rsyslogTlsReceiver(dir: string, port: number, out: string, authMode: 'anon' | 'x509/certvalid'): ChildProcess {
  return startRsyslog(dir, [
    `global(DefaultNetstreamDriver="gtls" DefaultNetstreamDriverCAFile="${certPath('ca.pem')}" DefaultNetstreamDriverCertFile="${certPath('server.pem')}" DefaultNetstreamDriverKeyFile="${certPath('server.key')}")`,
    `module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="${authMode}")`,
    `input(type="imtcp" address="127.0.0.1" port="${port}" ruleset="in")`,
    'template(name="text" type="string" string="%programname%|%msg%\\n")',
    `ruleset(name="in") { action(type="omfile" file="${out}" template="text") }`,
  ]);
}

describe('syslog over TLS with a real rsyslogd (gtls driver) both ways', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  let rsyslog: ChildProcess | undefined;
  let dir: string;
  before(function () {
    needGtlsPeers(this);
  });
  beforeEach(() => {
    dir = tempDir('hn-rsyslog-tls-');
  });
  afterEach(async () => {
    rsyslog?.kill('SIGTERM');
    rsyslog = undefined;
    await node?.stop(2000);
    node = undefined;
  });

  it('rsyslog → receiver TLS: LF-framed (its default) and octet-counted; with a client certificate where required; refused and counted without one; rsyslog with another CA refuses us', async () => {
    const [inPort, openPort, mtlsPort] = [await freePort(), await freePort(), await freePort()];
    const open = join(dir, 'open.jsonl');
    const mtls = join(dir, 'mtls.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'open-logs', RecordFile: open },
      { service: 'echo', NAME: 'mtls-logs', RecordFile: mtls },
      { service: 'syslog', NAME: 'rx-open', IP: '127.0.0.1', Port: openPort, ...tlsFiles, OUTPUTCHANNEL: 'open-logs' },
      {
        service: 'syslog',
        NAME: 'rx-mtls',
        IP: '127.0.0.1',
        Port: mtlsPort,
        ...tlsFiles,
        TLSCA: certPath('ca.pem'),
        TLSClientAuth: 'require',
        OUTPUTCHANNEL: 'mtls-logs',
      },
    ]));
    const ca = `StreamDriver.CAFile="${certPath('ca.pem')}"`;
    const alice = `StreamDriver.CertFile="${certPath('client-alice.pem')}" StreamDriver.KeyFile="${certPath('client-alice.key')}"`;
    rsyslog = startRsyslog(dir, [
      'module(load="imtcp")',
      `input(type="imtcp" address="127.0.0.1" port="${inPort}" ruleset="forward")`,
      // each action names itself as the tag of what it forwards
      ...['lf', 'octet', 'wrongca', 'alice', 'nocert'].map(
        (via) => `template(name="${via}" type="string" string="<%PRI%>%TIMESTAMP% %HOSTNAME% ${via}: %msg%\\n")`,
      ),
      'ruleset(name="forward") {',
      forwardTls(openPort, `${ca} template="lf"`),
      forwardTls(openPort, `${ca} TCP_Framing="octet-counted" template="octet"`),
      forwardTls(openPort, `StreamDriver.CAFile="${certPath('other-ca.pem')}" template="wrongca"`),
      forwardTls(mtlsPort, `${ca} ${alice} template="alice"`),
      forwardTls(mtlsPort, `${ca} template="nocert"`),
      '}',
    ]);
    await waitForPort(inPort, 15_000, 'rsyslogd', rsyslog);
    logger(inPort, ['-T', '-t', 'app', 'through gtls']);
    await until(() => recorded(open).length >= 2 && recorded(mtls).length >= 1, 20_000);
    // a client that does not trust our certificate finishes the handshake, checks, and hangs up: only rsyslog can tell
    await until(
      () =>
        (status(node!, 'rx-mtls').tlsRefused as number) >= 1 &&
        /certificate invalid: signer not found/.test(readFileSync(join(dir, 'rsyslogd.log'), 'utf8')),
      20_000,
    );
    await sleep(500); // time for a wrongly delivered message to show
    const via = (file: string): string[] =>
      recorded(file)
        .map((r) => `${r.message.Data.appname![0]} ${r.message.Data.message![0]}`)
        .sort();
    expect(via(open)).to.deep.equal(['lf through gtls', 'octet through gtls']);
    expect(via(mtls)).to.deep.equal(['alice through gtls']);
    expect(status(node, 'rx-open')).to.deep.include({ received: 2, invalid: 0 });
    expect(status(node, 'rx-mtls')).to.deep.include({ received: 1, invalid: 0 });
  });

  it('sender SendTLS → rsyslog imtcp gtls (anon): delivered, octet-counted; a RemoteCA that does not trust rsyslog is refused, logged once, counted, nothing delivered', async () => {
    const port = await freePort();
    const out = join(dir, 'out.log');
    rsyslog = rsyslogTlsReceiver(dir, port, out, 'anon');
    await waitForPort(port, 15_000, 'rsyslogd', rsyslog);
    let logs: () => string;
    ({ node, logs } = await startTestNode([
      {
        service: 'syslog',
        NAME: 'good',
        RemoteIP: 'localhost',
        RemotePort: port,
        SendTLS: true,
        RemoteCA: certPath('ca.pem'),
        SendTag: 'goodca',
        SendFormat: 'RFC5424',
      },
      {
        service: 'syslog',
        NAME: 'bad',
        RemoteIP: '127.0.0.1',
        RemotePort: port,
        SendTLS: true,
        RemoteCA: certPath('other-ca.pem'),
        SendTag: 'wrongca',
      },
    ]));
    for (const name of ['good', 'bad'])
      await node.hive.call(name, makeMessage({ Data: mapOf({ info: [`from ${name}`, 'two\nlines'] }) }), 5000);
    await until(() => lines(out).length >= 2, 15_000);
    await until(() => (status(node!, 'bad').sendFailures as number) >= 2, 15_000);
    expect(lines(out).slice(0, 2)).to.deep.equal(['goodca|from good', 'goodca|two#012lines']);
    expect(lines(out).some((l) => l.startsWith('wrongca'))).to.equal(false);
    expect(status(node, 'good')).to.deep.include({ sent: 2, sendFailures: 0 });
    expect(status(node, 'bad')).to.deep.include({ sent: 0, sendBuffered: 2 });
    expect(
      logs().match(/syslog sender cannot connect to 127\.0\.0\.1:\d+ over TLS: the server's certificate is refused/g) ??
        [],
    ).to.have.length(1);
  });

  it('sender SendTLS → rsyslog imtcp gtls requiring a valid client certificate (x509/certvalid): with SendCert delivered; without, refused: nothing delivered, logged once, counted', async () => {
    const port = await freePort();
    const out = join(dir, 'out.log');
    rsyslog = rsyslogTlsReceiver(dir, port, out, 'x509/certvalid');
    await waitForPort(port, 15_000, 'rsyslogd', rsyslog);
    let logs: () => string;
    const to = { RemoteIP: '127.0.0.1', RemotePort: port, SendTLS: true, RemoteCA: certPath('ca.pem') };
    ({ node, logs } = await startTestNode([
      {
        service: 'syslog',
        NAME: 'alice',
        ...to,
        SendCert: certPath('client-alice.pem'),
        SendKey: certPath('client-alice.key'),
        SendTag: 'alice',
      },
      { service: 'syslog', NAME: 'anonymous', ...to, SendTag: 'anonymous' },
    ]));
    for (const name of ['alice', 'anonymous'])
      await node.hive.call(name, makeMessage({ Data: mapOf({ info: [`from ${name}`] }) }), 5000);
    await until(() => lines(out).length >= 1, 15_000);
    await until(() => (status(node!, 'anonymous').sendFailures as number) >= 2, 15_000);
    expect(lines(out)).to.deep.equal(['alice|from alice']);
    expect(status(node, 'anonymous')).to.deep.include({ sent: 0, sendBuffered: 1 });
    expect(status(node, 'anonymous').sendError).to.match(/check SendCert and SendKey/);
    expect(logs().match(/syslog sender cannot connect to .* over TLS: /g) ?? []).to.have.length(1);
  });
});
