import { expect } from 'chai';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HiveNode } from '../../node/node.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { freePort } from '../adapters/ports.js';
import { certPath, certText } from '../certs.js';
import { tempDir } from '../temp.js';
import { startTestNode } from './helpers.js';
import { recorded } from './queue/helpers.js';
import { status, tcpFrom, tlsFiles, tlsSend, tlsSyslogServer, udpFrom } from './syslog-tls-peers.js';
import type { TlsSyslogServer } from './syslog-tls-peers.js';
import { until } from '../support/wait.js';

/** The start error of a syslog service with these parameters. */
async function refusal(params: Record<string, string | number | boolean>): Promise<string> {
  try {
    const { node } = await startTestNode([{ service: 'syslog', NAME: 'logs', IP: '127.0.0.1', Port: 0, ...params }]);
    await node.stop(1000);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a start error');
}

describe('syslog over TLS (RFC 5425) and AllowFrom', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let logs: () => string = () => '';
  let peer: TlsSyslogServer | undefined;
  afterEach(async () => {
    await Promise.all([node?.stop(2000), peer?.close()]);
    [node, peer] = [undefined, undefined];
  });

  it('the receiver with TLS true takes octet-counted and LF-framed messages on Port, and says tlsPort', async () => {
    const record = join(tempDir('hn-syslog-tls-'), 'r.jsonl');
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'logs', RecordFile: record },
      { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', Port: 0, ...tlsFiles, OUTPUTCHANNEL: 'logs', Format: 'auto' },
    ]));
    const port = status(node, 'rx').tlsPort as number;
    const counted = '<14>1 2026-11-24T10:00:00Z host app - - - counted';
    const outcome = await tlsSend(
      port,
      `${Buffer.byteLength(counted)} ${counted}<13>Nov 24 10:00:01 host app: by line\n`,
    );
    expect(outcome).to.deep.equal({ connected: true });
    await until(() => recorded(record).length === 2);
    expect(
      recorded(record)
        .map((r) => r.message.Data.message![0])
        .sort(),
    ).to.deep.equal(['by line', 'counted']);
    expect(status(node, 'rx')).to.deep.include({ received: 2, invalid: 0, tlsRefused: 0 });
    expect(logs()).to.match(/syslog receiver on 127\.0\.0\.1 TLS \d+, forwarding to 'logs'/);
  });

  it('TLSClientAuth require: a client without a certificate or with one of another CA is refused and counted, once logged per reason; alice gets in', async () => {
    const record = join(tempDir('hn-syslog-tls-'), 'r.jsonl');
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'logs', RecordFile: record },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '127.0.0.1',
        Port: 0,
        ...tlsFiles,
        TLSCA: certPath('ca.pem'),
        TLSClientAuth: 'require',
        OUTPUTCHANNEL: 'logs',
      },
    ]));
    const port = status(node, 'rx').tlsPort as number;
    const line = '<13>Nov 24 10:00:01 host app: refused\n';
    for (let i = 0; i < 2; i++)
      expect((await tlsSend(port, line)).error, 'no certificate').to.match(/certificate required|alert/i);
    // TLS 1.3: the client's side of the handshake completes, then the server refuses (counted below)
    await tlsSend(port, line, { cert: 'other-client.pem', key: 'other-client.key' });
    expect(
      await tlsSend(port, '<13>Nov 24 10:00:01 host app: from alice\n', {
        cert: 'client-alice.pem',
        key: 'client-alice.key',
      }),
    ).to.deep.equal({ connected: true });
    await until(() => recorded(record).length === 1);
    expect(recorded(record)[0]!.message.Data.message).to.deep.equal(['from alice']);
    await until(() => status(node!, 'rx').tlsRefused === 3);
    expect(status(node, 'rx')).to.deep.include({ received: 1, connections: 0 });
    expect(
      logs().match(/syslog TLS handshake from 127\.0\.0\.1 refused: .*peer did not return a certificate/g) ?? [],
      'logged once for two',
    ).to.have.length(1);
  });

  it('plain text on the TLS port is refused and counted; the listener keeps serving', async () => {
    const record = join(tempDir('hn-syslog-tls-'), 'r.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'logs', RecordFile: record },
      { service: 'syslog', NAME: 'rx', IP: '127.0.0.1', Port: 0, ...tlsFiles, OUTPUTCHANNEL: 'logs' },
    ]));
    const port = status(node, 'rx').tlsPort as number;
    expect(await tcpFrom('127.0.0.1', port, '<13>Nov 24 10:00:01 host app: plain text\n')).to.equal('closed by peer');
    await until(() => status(node!, 'rx').tlsRefused === 1);
    expect(await tlsSend(port, '<13>Nov 24 10:00:01 host app: after\n')).to.deep.equal({ connected: true });
    await until(() => recorded(record).length === 1);
    expect(status(node, 'rx')).to.deep.include({ received: 1 });
  });

  it('AllowFrom drops UDP datagrams and refuses TCP connections from other sources, counted per source', async () => {
    const record = join(tempDir('hn-syslog-allow-'), 'r.jsonl');
    const port = await freePort();
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'logs', RecordFile: record },
      {
        service: 'syslog',
        NAME: 'rx',
        IP: '0.0.0.0',
        Port: port,
        UDP: true,
        TCP: true,
        AllowFrom: '127.0.0.1/32, 10.0.0.0/8, ::1',
        OUTPUTCHANNEL: 'logs',
      },
    ]));
    await udpFrom('127.0.0.2', port, '<13>Nov 24 10:00:01 host app: udp from .2');
    await udpFrom('127.0.0.3', port, '<13>Nov 24 10:00:01 host app: udp from .3');
    expect(await tcpFrom('127.0.0.2', port, '<13>Nov 24 10:00:01 host app: tcp from .2\n')).to.equal('closed by peer');
    await udpFrom('127.0.0.1', port, '<13>Nov 24 10:00:01 host app: udp from .1');
    expect(await tcpFrom('127.0.0.1', port, '<13>Nov 24 10:00:01 host app: tcp from .1\n')).to.equal('open');
    await until(() => recorded(record).length === 2);
    expect(
      recorded(record)
        .map((r) => r.message.Data.message![0])
        .sort(),
    ).to.deep.equal(['tcp from .1', 'udp from .1']);
    expect(status(node, 'rx')).to.deep.include({
      received: 2,
      notAllowed: 3,
      notAllowedFrom: { '127.0.0.2': 2, '127.0.0.3': 1 },
    });
    expect(logs()).to.contain('from 127.0.0.1/32, 10.0.0.0/8, ::1 only');
  });

  it('AllowFrom on a dual-stack TLS listener: an IPv4 client (::ffff:127.0.0.2) matches IPv4 entries and is refused before the handshake', async () => {
    const record = join(tempDir('hn-syslog-allow-'), 'r.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'logs', RecordFile: record },
      { service: 'syslog', NAME: 'rx', IP: '::', Port: 0, ...tlsFiles, AllowFrom: '127.0.0.1', OUTPUTCHANNEL: 'logs' },
    ]));
    const port = status(node, 'rx').tlsPort as number;
    const refused = await tlsSend(port, '<13>Nov 24 10:00:01 host app: from .2\n', { localAddress: '127.0.0.2' });
    expect(refused.connected).to.equal(false);
    expect(await tlsSend(port, '<13>Nov 24 10:00:01 host app: from .1\n')).to.deep.equal({ connected: true });
    await until(() => recorded(record).length === 1);
    // refused at accept: no handshake was tried, so none failed
    expect(status(node, 'rx')).to.deep.include({
      received: 1,
      notAllowed: 1,
      notAllowedFrom: { '127.0.0.2': 1 },
      tlsRefused: 0,
    });
  });

  it('the sender with SendTLS sends octet-counted frames with its client certificate, and checks the name of RemoteIP', async () => {
    peer = await tlsSyslogServer({ requireClientCert: true });
    ({ node } = await startTestNode([
      {
        service: 'syslog',
        NAME: 'out',
        RemoteIP: 'localhost',
        RemotePort: peer.port,
        SendTLS: true,
        RemoteCA: certPath('ca.pem'),
        SendCert: certPath('client-alice.pem'),
        SendKey: certPath('client-alice.key'),
        SendTag: 'tlstag',
      },
    ]));
    const r = await node.hive.call('out', makeMessage({ Data: mapOf({ info: ['over tls', 'two\nlines'] }) }), 5000);
    expect(r.Code).to.equal(200);
    await until(() => peer!.frames.length === 2);
    expect(peer.frames[0]).to.match(/^<14>.* tlstag\[\d+\]: over tls$/);
    expect(peer.frames[1]).to.match(/tlstag\[\d+\]: two\nlines$/);
    expect(peer.raw.join('')).to.match(/^\d+ <14>/);
    expect(status(node, 'out')).to.deep.include({ sent: 2, sendFailures: 0 });
  });

  it("a server certificate that does not name RemoteIP is refused (alice's certificate names no host)", async () => {
    peer = await tlsSyslogServer({ cert: 'client-alice.pem', key: 'client-alice.key' });
    ({ node } = await startTestNode([
      {
        service: 'syslog',
        NAME: 'out',
        RemoteIP: '127.0.0.1',
        RemotePort: peer.port,
        SendTLS: true,
        RemoteCA: certPath('ca.pem'),
      },
    ]));
    await node.hive.call('out', makeMessage({ Data: mapOf({ info: ['not to alice'] }) }), 5000);
    await until(() => (status(node!, 'out').sendFailures as number) >= 1);
    expect(status(node, 'out').sendError).to.match(
      /IP: 127\.0\.0\.1 is not in the cert's list.*check RemoteCA, and that the certificate names RemoteIP/,
    );
    expect(peer.frames).to.deep.equal([]);
  });

  it('a RemoteCA that does not trust the server: nothing sent, logged once, counted; a corrected RemoteCA file delivers the buffered messages', async () => {
    peer = await tlsSyslogServer();
    const ca = join(tempDir('hn-syslog-ca-'), 'ca.pem');
    copyFileSync(certPath('other-ca.pem'), ca);
    ({ node, logs } = await startTestNode([
      { service: 'syslog', NAME: 'out', RemoteIP: '127.0.0.1', RemotePort: peer.port, SendTLS: true, RemoteCA: ca },
    ]));
    await node.hive.call('out', makeMessage({ Data: mapOf({ info: ['kept 1', 'kept 2'] }) }), 5000);
    await until(() => (status(node!, 'out').sendFailures as number) >= 3, 10_000);
    expect(peer.frames).to.deep.equal([]);
    expect(status(node, 'out')).to.deep.include({ sent: 0, sendBuffered: 2 });
    expect(status(node, 'out').sendError).to.match(/certificate is refused: .*check RemoteCA/);
    expect(
      logs().match(/syslog sender cannot connect to 127\.0\.0\.1:\d+ over TLS: the server's certificate is refused/g) ??
        [],
    ).to.have.length(1);
    copyFileSync(certPath('ca.pem'), ca);
    await until(() => peer!.frames.length === 2, 15_000);
    expect(peer.frames.map((f) => f.replace(/^.*: /, ''))).to.deep.equal(['kept 1', 'kept 2']);
    expect(status(node, 'out')).to.deep.include({ sent: 2, sendBuffered: 0 });
    expect(status(node, 'out').sendError).to.equal(undefined);
  });

  it('a server that requires a client certificate the sender lacks (TLS 1.3 refuses after the handshake): nothing lost, logged once, counted', async () => {
    peer = await tlsSyslogServer({ requireClientCert: true });
    ({ node, logs } = await startTestNode([
      {
        service: 'syslog',
        NAME: 'out',
        RemoteIP: '127.0.0.1',
        RemotePort: peer.port,
        SendTLS: true,
        RemoteCA: certPath('ca.pem'),
      },
    ]));
    await node.hive.call('out', makeMessage({ Data: mapOf({ info: ['waits'] }) }), 5000);
    await until(() => (status(node!, 'out').sendFailures as number) >= 3, 10_000);
    expect(peer.frames).to.deep.equal([]);
    expect(status(node, 'out')).to.deep.include({ sent: 0, sendBuffered: 1 });
    expect(
      logs().match(
        /syslog sender cannot connect .*the server refused the TLS handshake: .*check SendCert and SendKey/g,
      ) ?? [],
    ).to.have.length(1);
  });

  it('refuses at start: TLS without TLSCert/TLSKey, TLS files without TLS, a bad AllowFrom entry, lf framing on TLS, sender TLS files without SendTLS', async () => {
    expect(await refusal({ TLS: true })).to.equal(
      "syslog 'logs': TLS true needs TLSCert and TLSKey (the receiver's certificate and key, PEM; 'make certs' makes test ones)",
    );
    expect(await refusal({ TCP: true, ...tlsFiles, TLS: false })).to.match(
      /TLSCert and TLSKey are given but TLS is false/,
    );
    expect(await refusal({ UDP: true, AllowFrom: '127.0.0.1, 10.0.0.0/33' })).to.equal(
      "AllowFrom entry '10.0.0.0/33' is not a CIDR or an address: the prefix length 33 is over 32",
    );
    expect(await refusal({ UDP: true, AllowFrom: 'localhost' })).to.match(
      /AllowFrom entry 'localhost' is not a CIDR or an address/,
    );
    expect(await refusal({ RemoteIP: '127.0.0.1', SendTLS: true, SendFraming: 'lf' })).to.match(
      /SendFraming 'lf' cannot be used with SendTLS/,
    );
    expect(await refusal({ RemoteIP: '127.0.0.1', SendTCP: true, RemoteCA: certPath('ca.pem') })).to.equal(
      'RemoteCA is given but SendTLS is false: set SendTLS true to send over TLS, or remove it',
    );
    expect(await refusal({ RemoteIP: '127.0.0.1', SendTLS: true, SendCert: certPath('client-alice.pem') })).to.match(
      /SendCert and SendKey go together/,
    );
    expect(
      await refusal({
        RemoteIP: '127.0.0.1',
        SendTLS: true,
        SendCert: certPath('client-alice.pem'),
        SendKey: certPath('client-bob.key'),
      }),
    ).to.match(/SendKey is not the key of SendCert/);
    expect(await refusal({ RemoteIP: '127.0.0.1', SendTLS: true, RemoteCA: '/nonexistent/ca.pem' })).to.match(
      /RemoteCA '\/nonexistent\/ca.pem' cannot be read \(ENOENT\)/,
    );
    expect(certText('ca.pem')).to.contain('BEGIN CERTIFICATE');
  });
});
