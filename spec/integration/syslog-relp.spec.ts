import { expect } from 'chai';
import { createServer, connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { buildFlow } from '../../node/console/flow-graph.js';
import type { HiveNode } from '../../node/node.js';
import { ConfigError, ListenError } from '../../protocol/errors.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { frameOctetCounted } from '../../actors/syslog/format.js';
import { RelpDecoder, encodeRelpFrame } from '../../actors/syslog/relp-frame.js';
import { RelpSender } from '../../actors/syslog/relp-sender.js';
import type { Logger } from '../../actors/observe/logger.js';
import type { RelpFrame } from '../../actors/syslog/relp-frame.js';
import { freePort } from '../adapters/ports.js';
import { certPath } from '../certs.js';
import { tempDir } from '../temp.js';
import { startTestNode } from './helpers.js';
import { queueCall, recorded } from './queue/helpers.js';
import { status, tlsFiles, udpFrom } from './syslog-tls-peers.js';
import { sleep, until } from '../support/wait.js';

const OPEN = 'relp_version=0\nrelp_software=test\ncommands=syslog';

/** A raw RELP client: writes frames, collects the server's frames and whether it hung up. */
async function rawClient(port: number): Promise<{
  socket: Socket;
  got: RelpFrame[];
  ended: () => boolean;
  send: (txnr: number, cmd: string, data?: string) => void;
}> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const decoder = new RelpDecoder(1 << 20);
  const got: RelpFrame[] = [];
  let closed = false;
  socket.on('data', (c: Buffer) => got.push(...decoder.push(c)));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  return {
    socket,
    got,
    ended: () => closed,
    send: (txnr, cmd, data = '') => socket.write(encodeRelpFrame(txnr, cmd, data)),
  };
}

const text = (f: RelpFrame | undefined): string => f?.data.toString() ?? '';

describe('syslog over RELP (receiver and sender, hivenode on both ends)', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('the RELP sender → the RELP receiver → a recorder: the caller is answered once the receiver acknowledged', async () => {
    const dir = tempDir('hn-relp-loop-');
    const port = await freePort();
    const out = join(dir, 'out.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: out },
      { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', RELP: true, RELPPort: port, OUTPUTCHANNEL: 'sink' },
      { service: 'syslog', NAME: 'tx', RemoteIP: '127.0.0.1', RemotePort: port, SendRELP: true, SendFormat: 'RFC5424' },
    ]));
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        node!.hive.call(
          'tx',
          makeMessage({ Class: 'syslog', Operation: 'send', Data: mapOf({ warn: [`n-${i}`] }) }),
          10_000,
        ),
      ),
    );
    expect(answers.map((a) => a.Code)).to.deep.equal(answers.map(() => 200));
    // acknowledged means handed over (the echo acknowledges an execute on receipt, then records it)
    await until(() => recorded(out).length === 50, 5000);
    const got = recorded(out).map((r) => r.message.Data.message![0]!);
    expect(got.sort()).to.deep.equal(Array.from({ length: 50 }, (_, i) => `n-${i}`).sort());
    expect(recorded(out)[0]!.message.Data.severity).to.deep.equal(['warning']);
    const tx = node.services.find((s) => s.name === 'tx')!.running.status();
    expect(tx).to.deep.include({ sent: 50, sendBuffered: 0, sendResent: 0 });
    // the console draws both: the RELP source into rx, and tx's arrow to its server
    const flow = buildFlow(
      node.services.map((s) => ({
        kind: s.kind,
        name: s.name,
        channel: '',
        config: s.config,
        status: () => s.running.status(),
      })),
    );
    expect(flow.nodes.find((n) => n.id === 'src:syslog:rx')?.label).to.equal(`syslog RELP :${port}`);
    expect(flow.edges.some((e) => e.from === 'svc:tx' && e.to === 'ext:syslog:tx')).to.equal(true);
  });

  it('RELP over TLS: the receiver with TLS true serves RELPPort over TLS (mutual TLS here), and the sender with SendTLS reaches it', async () => {
    const dir = tempDir('hn-relp-tls-');
    const [port, relpPort] = [await freePort(), await freePort()];
    const out = join(dir, 'out.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: out },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        Port: port,
        ...tlsFiles,
        TLSCA: certPath('ca.pem'),
        TLSClientAuth: 'require',
        RELP: true,
        RELPPort: relpPort,
        OUTPUTCHANNEL: 'sink',
      },
      {
        service: 'syslog',
        NAME: 'tx',
        RemoteIP: '127.0.0.1',
        RemotePort: relpPort,
        SendRELP: true,
        SendTLS: true,
        RemoteCA: certPath('ca.pem'),
        SendCert: certPath('client-alice.pem'),
        SendKey: certPath('client-alice.key'),
      },
      {
        service: 'syslog',
        NAME: 'stranger',
        RemoteIP: '127.0.0.1',
        RemotePort: relpPort,
        SendRELP: true,
        SendTLS: true,
        RemoteCA: certPath('ca.pem'),
      },
    ]));
    const call = (channel: string, text: string): Promise<number> =>
      node!.hive
        .call(channel, makeMessage({ Class: 'syslog', Operation: 'send', Data: mapOf({ info: [text] }) }), 3_000)
        .then((r) => r.Code);
    expect(await call('tx', 'over RELP and TLS')).to.equal(200);
    await until(() => recorded(out).length === 1, 5000);
    expect(recorded(out).map((r) => r.message.Data.message![0])).to.deep.equal(['over RELP and TLS']);
    // without a client certificate the handshake is refused: the message is kept, the caller not answered 200
    expect(await call('stranger', 'refused')).to.equal(504);
    await until(() => (status(node!, 'stranger').sendFailures as number) > 0, 5000);
    expect(status(node, 'stranger')).to.deep.include({ sent: 0, sendBuffered: 1 });
    expect((status(node, 'rx').tlsRefused as number) > 0).to.equal(true);
    expect(recorded(out)).to.have.length(1);
  });

  it('speaks RELP as librelp does: open answered with offers, syslog with 200, close with an empty rsp; a refusal that will not pass is 500', async () => {
    const port = await freePort();
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink' },
      { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', RELP: true, RELPPort: port, OUTPUTCHANNEL: 'sink' },
    ]));
    const c = await rawClient(port);
    c.send(1, 'open', OPEN);
    c.send(2, 'syslog', '<14>Nov 24 08:05:02 host app: one');
    c.send(3, 'syslog', '');
    c.send(4, 'starttls');
    c.send(5, 'close');
    await until(() => c.ended(), 5000);
    // each frame is answered when its hand-over ends: not necessarily in order, as librelp allows
    expect(c.got.map((f) => `${f.txnr} ${f.command}`).sort()).to.deep.equal([
      '1 rsp',
      '2 rsp',
      '3 rsp',
      '4 rsp',
      '5 rsp',
    ]);
    expect(c.got.at(-1)!.txnr, 'close is answered last').to.equal(5);
    const byTxnr = new Map(c.got.map((f) => [f.txnr, text(f)]));
    expect(byTxnr.get(1)).to.match(/^200 OK\nrelp_version=0\nrelp_software=hivenode\ncommands=syslog$/);
    expect(byTxnr.get(2)).to.equal('200 OK');
    expect(byTxnr.get(3)).to.match(/^500 not a syslog message/);
    expect(byTxnr.get(4)).to.match(/^500 command 'starttls' is not supported/);
    expect(byTxnr.get(5)).to.equal('');
    expect(node.services.find((s) => s.name === 'rx')!.running.status()).to.deep.include({
      relpAcknowledged: 1,
      relpRefused: 1,
    });
  });

  it('closes a connection that is not RELP: a frame before open, a transaction number out of order, bytes that are not a frame', async () => {
    const port = await freePort();
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink' },
      { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', RELP: true, RELPPort: port, OUTPUTCHANNEL: 'sink' },
    ]));
    const before = await rawClient(port);
    before.send(1, 'syslog', 'x');
    const skipped = await rawClient(port);
    skipped.send(1, 'open', OPEN);
    skipped.send(3, 'syslog', 'x');
    const garbage = await rawClient(port);
    garbage.socket.write('<14>this is plain syslog\n');
    const oldVersion = await rawClient(port);
    oldVersion.send(1, 'open', 'relp_version=7\ncommands=syslog');
    await until(() => before.ended() && skipped.ended() && garbage.ended() && oldVersion.ended(), 5000);
    expect(skipped.got.map(text)).to.have.length(1); // the open's answer only
    expect(oldVersion.got.map(text)[0]).to.match(/^500 relp_version 7 is not supported/);
    expect(node.services.find((s) => s.name === 'rx')!.running.status()).to.deep.include({
      invalid: 4,
      relpAcknowledged: 0,
    });
  });

  it('the RELP sender keeps messages while the server is away and answers the caller once it acknowledged them', async () => {
    const dir = tempDir('hn-relp-late-');
    const port = await freePort();
    const out = join(dir, 'out.jsonl');
    ({ node } = await startTestNode([
      { service: 'syslog', NAME: 'tx', RemoteIP: '127.0.0.1', RemotePort: port, SendRELP: true, SendBuffer: 10 },
    ]));
    const call = (i: number): Promise<number> =>
      node!.hive
        .call('tx', makeMessage({ Class: 'syslog', Operation: 'send', Data: mapOf({ info: [`late-${i}`] }) }), 20_000)
        .then((r) => r.Code);
    const pending = Array.from({ length: 10 }, (_, i) => call(i));
    // SendBuffer holds 10: the eleventh is refused at once, and counted
    expect(await call(10)).to.equal(429);
    const receiver = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: out },
      { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', RELP: true, RELPPort: port, OUTPUTCHANNEL: 'sink' },
    ]);
    try {
      expect(await Promise.all(pending)).to.deep.equal(pending.map(() => 200));
      await until(() => recorded(out).length === 10, 5000);
      expect(node.services.find((s) => s.name === 'tx')!.running.status()).to.deep.include({
        sent: 10,
        sendDropped: 1,
        sendBuffered: 0,
      });
    } finally {
      await receiver.node.stop(2000);
    }
  });

  it('TCPAck: a full queue behind a TCP receiver stops it reading (RELPWindow messages wait), nothing is dropped, and the backlog drains when the queue runs', async () => {
    const dir = tempDir('hn-tcpack-');
    const [acked, plain] = [await freePort(), await freePort()];
    const out = join(dir, 'out.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: out },
      {
        service: 'queue',
        NAME: 'q',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'sink',
        StartPaused: true,
        Capacity: 10,
      },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        Port: acked,
        TCP: true,
        TCPAck: true,
        RELPWindow: 4,
        OUTPUTCHANNEL: 'q',
      },
      { service: 'syslog', NAME: 'rx-plain', IP: '127.0.0.1', Port: plain, TCP: true, OUTPUTCHANNEL: 'q' },
    ]));
    const write = async (port: number, prefix: string, n: number): Promise<void> => {
      const socket = connect({ host: '127.0.0.1', port });
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      await new Promise<void>((resolve) =>
        socket.end(
          Array.from({ length: n }, (_, i) => frameOctetCounted(`<14>Nov 24 08:05:02 host app: ${prefix}-${i}`)).join(
            '',
          ),
          resolve,
        ),
      );
    };
    await write(acked, 'a', 50);
    await until(() => status(node!, 'rx').tcpAckInFlight === 4, 5000);
    await sleep(500);
    // 10 stored, 4 in hand-over (refused 507, tried again), the other 36 waiting their turn
    expect(status(node, 'rx')).to.deep.include({ received: 14, tcpAckInFlight: 4, tcpAckRefused: 0 });
    // the same over plain TCP: the full queue refuses what the receiver emits, and it is gone
    await write(plain, 'p', 5);
    await until(() => status(node!, 'rx-plain').received === 5, 5000);
    expect((await queueCall(node, { command: ['unpause'] }, {}, 'q')).Code).to.equal(200);
    await until(() => recorded(out).length >= 50, 20_000);
    await sleep(300);
    const got = recorded(out).map((r) => r.message.Data.message![0]!);
    expect(got.filter((m) => m.startsWith('a-')).sort()).to.deep.equal(
      Array.from({ length: 50 }, (_, i) => `a-${i}`).sort(),
    );
    expect(got.filter((m) => m.startsWith('p-'))).to.deep.equal([]);
    expect(status(node, 'rx')).to.deep.include({ received: 50, tcpAckInFlight: 0, tcpAckRefused: 0 });
    expect(status(node, 'rx').tcpAckRetries as number).to.be.greaterThan(0);
  });

  it('SourceRate: over UDP a source over its limit is dropped and counted per source, another is not limited; over RELP the messages wait instead', async () => {
    const dir = tempDir('hn-rate-');
    const [udpPort, relpPort] = [await freePort(), await freePort()];
    const out = join(dir, 'out.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'sink', RecordFile: out },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        Port: udpPort,
        UDP: true,
        RELP: true,
        RELPPort: relpPort,
        SourceRate: '127.0.0.1/32=5/s',
        OUTPUTCHANNEL: 'sink',
      },
    ]));
    for (let i = 0; i < 20; i++) await udpFrom('127.0.0.1', udpPort, `<14>Nov 24 08:05:02 host app: one-${i}`);
    for (let i = 0; i < 20; i++) await udpFrom('127.0.0.2', udpPort, `<14>Nov 24 08:05:02 host app: two-${i}`);
    await until(
      () => (status(node!, 'rx').received as number) + (status(node!, 'rx').rateLimited as number) === 40,
      5000,
    );
    const s = status(node, 'rx');
    // a burst of 5 passes (plus what the second refilled while the datagrams went out)
    expect(s.received as number).to.be.within(25, 27);
    expect(s.rateLimited as number).to.equal(40 - (s.received as number));
    expect(s.rateLimitedFrom).to.deep.equal({ '127.0.0.1': s.rateLimited });
    // RELP promises no drops: 15 frames from the limited source go out at 5/s after a burst of 5
    const c = await rawClient(relpPort);
    const began = Date.now();
    c.send(1, 'open', OPEN);
    for (let i = 0; i < 15; i++) c.send(2 + i, 'syslog', `<14>Nov 24 08:05:02 host app: relp-${i}`);
    await until(() => c.got.length === 16, 10_000);
    expect(Date.now() - began).to.be.at.least(1500);
    expect(c.got.map(text).filter((t) => t === '200 OK')).to.have.length(15);
    expect(status(node, 'rx').rateDelayed as number).to.be.at.least(9);
    c.socket.destroy();
  });

  it('start errors name the parameter: RELPPort taken, RELPPort equal to Port, SendRELP without RemoteIP', async () => {
    const held = createServer();
    await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
    const port = (held.address() as { port: number }).port;
    const failure = (services: Parameters<typeof startTestNode>[0]): Promise<unknown> =>
      startTestNode(services).then(
        ({ node: n }) => n.stop(1000).then(() => undefined),
        (e: unknown) => e,
      );
    try {
      const taken = await failure([{ service: 'syslog', NAME: 'rx', IP: '127.0.0.1', RELP: true, RELPPort: port }]);
      expect(taken).to.be.instanceOf(ListenError);
      expect((taken as Error).message).to.equal(
        `syslog 'rx' cannot start: RELPPort ${port} is already in use (EADDRINUSE); choose a free RELPPort or stop the program that holds it`,
      );
    } finally {
      held.close();
    }
    const same = await failure([
      { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', TCP: true, Port: 2600, RELP: true, RELPPort: 2600 },
    ]);
    expect(same).to.be.instanceOf(ConfigError);
    expect((same as Error).message).to.match(/RELPPort 2600 is also Port, where the TCP receiver listens/);
    const ackUdp = await failure([{ service: 'syslog', NAME: 'rx', UDP: true, Port: 0, TCPAck: true }]);
    expect(ackUdp).to.be.instanceOf(ConfigError);
    expect((ackUdp as Error).message).to.match(
      /TCPAck acknowledges what the TCP or TLS receiver reads, but TCP and TLS are false/,
    );
    const badRate = await failure([
      { service: 'syslog', NAME: 'rx', UDP: true, Port: 0, SourceRate: '10.0.0.0/8=fast' },
    ]);
    expect(badRate).to.be.instanceOf(ConfigError);
    expect((badRate as Error).message).to.match(/SourceRate rule '10\.0\.0\.0\/8=fast' is not 'cidr=N\/s'/);
    const noRemote = await failure([{ service: 'syslog', NAME: 'tx', UDP: true, Port: 0, SendRELP: true }]);
    expect(noRemote).to.be.instanceOf(ConfigError);
    expect((noRemote as Error).message).to.match(/SendRELP is true but RemoteIP is not set/);
  });
});

describe('RELP sender against a server that stops answering', function () {
  this.timeout(10_000);

  it('gives up a session that answers nothing while messages wait, and sends them again on a new one', async () => {
    let sessions = 0;
    const server = createServer((socket) => {
      const session = ++sessions;
      const decoder = new RelpDecoder(1 << 20);
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        for (const f of decoder.push(chunk)) {
          // the first session opens, then hangs; the second answers everything
          if (f.command === 'open') socket.write(encodeRelpFrame(f.txnr, 'rsp', `200 OK\n${OPEN}`));
          else if (session > 1) socket.write(encodeRelpFrame(f.txnr, 'rsp', '200 OK'));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const logged: string[] = [];
    const log = {
      warn: (m: string) => logged.push(m),
      info: () => undefined,
      debug: () => undefined,
    } as unknown as Logger;
    const sender = new RelpSender(
      { host: '127.0.0.1', port, window: 8, buffer: 100, maxDataBytes: 1 << 20, answerTimeoutMs: 300 },
      log,
    );
    try {
      expect(await sender.send(['one', 'two'])).to.equal(2);
      expect(sessions).to.equal(2);
      expect(sender.counters).to.deep.include({ sent: 2, resent: 2, buffered: 0 });
      expect(logged.join('\n')).to.match(
        /answered nothing for 0\.3 s with 2 message\(s\) unanswered; opening a new session/,
      );
    } finally {
      await sender.close();
      server.close();
    }
  });
});
