import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { startTestNode } from '../../integration/helpers.js';
import { queueCall, recorded } from '../../integration/queue/helpers.js';
import { certPath } from '../../certs.js';
import { tempDir } from '../../temp.js';
import { freePort, waitForPort } from '../ports.js';
import { needRelpPeers, startRsyslog } from './peers.js';
import { feedRsyslog, imrelpConfig, numbersIn, omrelpConfig } from './relp-peers.js';
import { sleep, until } from '../../support/wait.js';

describe('RELP with a real rsyslogd (Debian rsyslog-relp)', function () {
  this.timeout(90_000);
  let node: HiveNode | undefined;
  let rsyslog: ChildProcess | undefined;
  before(function () {
    needRelpPeers(this);
  });
  afterEach(async () => {
    rsyslog?.kill('SIGTERM');
    rsyslog = undefined;
    await node?.stop(2000);
    node = undefined;
  });

  it('rsyslog omrelp → the RELP receiver → a durable queue: every message stored once, acknowledged', async () => {
    const dir = tempDir('hn-relp-in-');
    const [inPort, relpPort] = [await freePort(), await freePort()];
    const out = join(dir, 'out.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: out },
      { service: 'queue', NAME: 'relp-q', PersistPath: join(dir, 'store'), DefaultChannel: 'sink' },
      { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', RELP: true, RELPPort: relpPort, OUTPUTCHANNEL: 'relp-q' },
    ]));
    rsyslog = startRsyslog(dir, omrelpConfig(inPort, relpPort));
    await waitForPort(inPort, 15_000, 'rsyslogd', rsyslog);
    const n = 500;
    await feedRsyslog(
      inPort,
      Array.from({ length: n }, (_, i) => `<14>Nov 24 08:05:02 host app: m-${i}`),
    );
    await until(() => recorded(out).length >= n, 30_000);
    const got = recorded(out).map((r) => Number(/m-(\d+)/.exec(r.message.Data.message![0]!)![1]));
    expect(new Set(got).size).to.equal(n);
    expect(got.length).to.equal(n);
    const status = node.services.find((s) => s.name === 'rx')!.running.status();
    expect(status).to.deep.include({ relpAcknowledged: n, relpRefused: 0, relpInFlight: 0 });
  });

  it('rsyslog omrelp over TLS (its certificate checked, ours required) → the RELP receiver with TLS true', async () => {
    const dir = tempDir('hn-relp-tls-in-');
    const [inPort, tlsPort, relpPort] = [await freePort(), await freePort(), await freePort()];
    const out = join(dir, 'out.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: out },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        Port: tlsPort,
        TLS: true,
        TLSCert: certPath('server.pem'),
        TLSKey: certPath('server.key'),
        TLSCA: certPath('ca.pem'),
        TLSClientAuth: 'require',
        RELP: true,
        RELPPort: relpPort,
        OUTPUTCHANNEL: 'sink',
      },
    ]));
    const tls = `tls="on" tls.caCert="${certPath('ca.pem')}" tls.myCert="${certPath('client-alice.pem')}" tls.myPrivKey="${certPath('client-alice.key')}" tls.authMode="name" tls.permittedPeer="localhost"`;
    rsyslog = startRsyslog(dir, omrelpConfig(inPort, relpPort, tls));
    await waitForPort(inPort, 15_000, 'rsyslogd', rsyslog);
    await feedRsyslog(
      inPort,
      Array.from({ length: 20 }, (_, i) => `<14>Nov 24 08:05:02 host app: t-${i}`),
    );
    await until(() => recorded(out).length >= 20, 30_000);
    expect(new Set(recorded(out).map((r) => r.message.Data.message![0])).size).to.equal(20);
    expect(node.services.find((s) => s.name === 'rx')!.running.status()).to.deep.include({
      relpAcknowledged: 20,
      tlsRefused: 0,
    });
  });

  it('a full queue behind the receiver holds the sender back (its window fills), nothing is dropped, and the backlog drains when the queue runs again', async () => {
    const dir = tempDir('hn-relp-bp-');
    const [inPort, relpPort] = [await freePort(), await freePort()];
    const out = join(dir, 'out.jsonl');
    const window = 16;
    const capacity = 50;
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: out },
      {
        service: 'queue',
        NAME: 'relp-q',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'sink',
        StartPaused: true,
        Capacity: capacity,
      },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        RELP: true,
        RELPPort: relpPort,
        RELPWindow: window,
        OUTPUTCHANNEL: 'relp-q',
      },
    ]));
    rsyslog = startRsyslog(dir, omrelpConfig(inPort, relpPort, `windowSize="${window}"`));
    await waitForPort(inPort, 15_000, 'rsyslogd', rsyslog);
    const n = 400;
    await feedRsyslog(
      inPort,
      Array.from({ length: n }, (_, i) => `<14>Nov 24 08:05:02 host app: m-${i}`),
    );
    const rx = (): Record<string, unknown> => node!.services.find((s) => s.name === 'rx')!.running.status();
    // the paused queue takes `capacity` entries, then refuses (507): the receiver holds a window of frames, unanswered
    await until(() => rx().relpInFlight === window, 30_000);
    await sleep(1500);
    expect(rx()).to.deep.include({ relpAcknowledged: capacity, relpInFlight: window, relpRefused: 0 });
    expect(recorded(out)).to.have.length(0);
    expect((await queueCall(node, { command: ['unpause'] }, {}, 'relp-q')).Code).to.equal(200);
    await until(() => recorded(out).length >= n, 60_000);
    const got = recorded(out).map((r) => Number(/m-(\d+)/.exec(r.message.Data.message![0]!)![1]));
    expect(new Set(got).size, 'every message').to.equal(n);
    expect(got.length, 'none twice').to.equal(n);
    expect(rx()).to.deep.include({ relpAcknowledged: n, relpRefused: 0, relpInFlight: 0 });
    expect(rx().relpRetries as number).to.be.greaterThan(0);
  });

  it('the RELP sender → rsyslog imrelp: each caller answered once rsyslog acknowledged, and unacknowledged messages sent again after rsyslog restarts', async () => {
    const dir = tempDir('hn-relp-out-');
    const relpPort = await freePort();
    const file = join(dir, 'got.log');
    ({ node } = await startTestNode([
      {
        service: 'syslog',
        NAME: 'tx',
        RemoteIP: '127.0.0.1',
        RemotePort: relpPort,
        SendRELP: true,
        SendFormat: 'RFC5424',
      },
    ]));
    const send = (i: number): Promise<number> =>
      node!.hive
        .call('tx', makeMessage({ Class: 'syslog', Operation: 'send', Data: mapOf({ info: [`s-${i}`] }) }), 60_000)
        .then((r) => r.Code);
    // rsyslog is not there yet: the messages wait, the callers too
    const first = Array.from({ length: 100 }, (_, i) => send(i));
    await sleep(500);
    rsyslog = startRsyslog(dir, imrelpConfig(relpPort, file));
    expect(await Promise.all(first)).to.deep.equal(first.map(() => 200));
    expect(numbersIn(file, 's').sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 100 }, (_, i) => i));
    // rsyslog restarts while messages are on their way: none lost, the unacknowledged ones sent again
    const second = Array.from({ length: 300 }, (_, i) => send(100 + i));
    rsyslog.kill('SIGKILL');
    await new Promise((r) => rsyslog!.once('exit', r));
    rsyslog = startRsyslog(dir, imrelpConfig(relpPort, file));
    expect(await Promise.all(second)).to.deep.equal(second.map(() => 200));
    await until(() => new Set(numbersIn(file, 's')).size === 400, 15_000);
    const status = node.services.find((s) => s.name === 'tx')!.running.status();
    expect(status).to.deep.include({ sent: 400, sendDropped: 0, sendRefused: 0, sendBuffered: 0 });
    expect(status.sendResent as number, 'the restart broke the session with messages unacknowledged').to.be.greaterThan(
      0,
    );
  });
});
