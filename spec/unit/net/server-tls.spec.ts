import { expect } from 'chai';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { connect, createServer } from 'node:tls';
import { ConfigError } from '../../../protocol/errors.js';
import { ServerTls, certificateUser } from '../../../actors/net/server-tls.js';
import type { Logger } from '../../../actors/observe/logger.js';
import { certPath, certText } from '../../certs.js';
import { tempDir } from '../../temp.js';
import { until } from '../../support/wait.js';

const off = { TLSCert: '', TLSKey: '', TLSCA: '', TLSClientAuth: 'none' };

function recordingLogger(lines: string[]): Logger {
  const l: Logger = {
    trace() {},
    debug() {},
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
    child: () => l,
  };
  return l;
}

function refusal(config: typeof off): string {
  try {
    ServerTls.fromConfig(config, 'gateway g1', recordingLogger([]));
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

/** The subject CN of the certificate a TLS server at `port` shows to a new connection. */
function servedCN(
  port: number,
  extra: { cert?: string; key?: string } = {},
): Promise<{ cn: string; socket: TLSSocket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        port,
        host: '127.0.0.1',
        ca: [certText('ca.pem'), certText('other-ca.pem')],
        servername: 'localhost',
        ...extra,
      },
      () => {
        resolve({ cn: String(socket.getPeerCertificate().issuer.CN), socket });
      },
    );
    socket.once('error', reject);
  });
}

describe('ServerTls (the TLS parameters of a listener)', () => {
  it('is off without TLSCert and TLSKey, and refuses TLSCA or TLSClientAuth without them', () => {
    expect(ServerTls.fromConfig(off, 'gateway g1', recordingLogger([]))).to.equal(undefined);
    expect(refusal({ ...off, TLSCA: certPath('ca.pem') })).to.match(/TLSCA and TLSClientAuth need TLSCert and TLSKey/);
  });

  it('names the parameter at fault: a missing half, a missing file, a key of another certificate, client auth without a CA', () => {
    expect(refusal({ ...off, TLSCert: certPath('server.pem') })).to.match(
      /^gateway g1: TLS needs both TLSCert and TLSKey/,
    );
    expect(refusal({ ...off, TLSCert: certPath('server.pem'), TLSKey: '/nonexistent/server.key' })).to.match(
      /TLSKey '\/nonexistent\/server.key': cannot be read \(ENOENT\)/,
    );
    expect(refusal({ ...off, TLSCert: certPath('server.pem'), TLSKey: certPath('client-alice.key') })).to.match(
      /TLSKey .*: TLSKey is not the key of TLSCert/,
    );
    expect(refusal({ ...off, TLSCert: certPath('server.key'), TLSKey: certPath('server.key') })).to.match(
      /^gateway g1: TLSCert '.*server.key': /,
    );
    expect(
      refusal({ ...off, TLSCert: certPath('server.pem'), TLSKey: certPath('server.key'), TLSClientAuth: 'require' }),
    ).to.match(/TLSClientAuth require needs TLSCA/);
  });

  it('takes file:// paths and inline PEM, with TLS 1.2 as the minimum', () => {
    const tls = ServerTls.fromConfig(
      { ...off, TLSCert: `file://${certPath('server.pem')}`, TLSKey: certText('server.key') },
      'gateway g1',
      recordingLogger([]),
    )!;
    const o = tls.serverOptions();
    expect(o.minVersion).to.equal('TLSv1.2');
    expect(o.requestCert).to.equal(false);
    expect(String(o.cert)).to.equal(certText('server.pem'));
  });

  it('warns at start about an expired certificate', () => {
    const lines: string[] = [];
    ServerTls.fromConfig(
      { ...off, TLSCert: certPath('server-expired.pem'), TLSKey: certPath('server-expired.key') },
      'gateway g1',
      recordingLogger(lines),
    );
    expect(lines.join('\n')).to.match(/warn gateway g1: the TLS certificate expired on 2020-02-01/);
  });

  it('serves a changed certificate to new connections without dropping the open ones, and keeps the old one while a pair does not load', async () => {
    const dir = tempDir();
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    copyFileSync(certPath('server.pem'), cert);
    copyFileSync(certPath('server.key'), key);
    const lines: string[] = [];
    const log = recordingLogger(lines);
    const tls = ServerTls.fromConfig({ ...off, TLSCert: cert, TLSKey: key }, 'gateway g1', log)!;
    const server = createServer(tls.serverOptions(), (s) => s.pipe(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    tls.watch(server, log);
    const port = (server.address() as AddressInfo).port;
    try {
      const first = await servedCN(port);
      expect(first.cn).to.equal('hivenode local CA');
      // half a rewrite: the other CA's certificate beside the old key does not load
      copyFileSync(certPath('other-server.pem'), cert);
      await until(() => lines.some((l) => /do not load/.test(l)), { ms: 8_000, every: 50 });
      const during = await servedCN(port);
      during.socket.destroy();
      expect(during.cn).to.equal('hivenode local CA');
      copyFileSync(certPath('other-server.key'), key);
      await until(() => lines.some((l) => /TLS certificate reloaded/.test(l)), { ms: 8_000, every: 50 });
      const second = await servedCN(port);
      expect(second.cn).to.equal('not trusted CA');
      // the first connection still works
      const echoed = await new Promise<string>((resolve) => {
        first.socket.once('data', (d: Buffer) => resolve(d.toString()));
        first.socket.write('still here');
      });
      expect(echoed).to.equal('still here');
      first.socket.destroy();
      second.socket.destroy();
    } finally {
      tls.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('gives a changed certificate to every server it watches (the syslog receiver has a TLS port and a RELP port)', async () => {
    const dir = tempDir();
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    copyFileSync(certPath('server.pem'), cert);
    copyFileSync(certPath('server.key'), key);
    const lines: string[] = [];
    const log = recordingLogger(lines);
    const tls = ServerTls.fromConfig({ ...off, TLSCert: cert, TLSKey: key }, 'syslog rx', log)!;
    const servers = [
      createServer(tls.serverOptions(), (s) => s.end()),
      createServer(tls.serverOptions(), (s) => s.end()),
    ];
    for (const server of servers) {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      tls.watch(server, log);
    }
    try {
      // both files at once, so no half-written pair is read
      copyFileSync(certPath('other-server.key'), key);
      copyFileSync(certPath('other-server.pem'), cert);
      await until(() => lines.some((l) => /TLS certificate reloaded/.test(l)), { ms: 8_000, every: 50 });
      for (const server of servers) {
        const served = await servedCN((server.address() as AddressInfo).port);
        served.socket.destroy();
        expect(served.cn).to.equal('not trusted CA');
      }
    } finally {
      tls.close();
      for (const server of servers) await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('names the user of a verified client certificate by its CN, and none for a certificate it could not verify', async () => {
    const tls = ServerTls.fromConfig(
      {
        TLSCert: certPath('server.pem'),
        TLSKey: certPath('server.key'),
        TLSCA: certPath('ca.pem'),
        TLSClientAuth: 'request',
      },
      'gateway g1',
      recordingLogger([]),
    )!;
    const users: (string | undefined)[] = [];
    const server = createServer(tls.serverOptions(), (s) => {
      users.push(certificateUser(s));
      s.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      for (const name of ['client-alice', 'other-client', 'client-expired']) {
        const { socket } = await servedCN(port, {
          cert: readFileSync(certPath(`${name}.pem`), 'utf8'),
          key: readFileSync(certPath(`${name}.key`), 'utf8'),
        });
        await new Promise((r) => socket.once('close', r));
      }
      const { socket } = await servedCN(port);
      await new Promise((r) => socket.once('close', r));
      expect(users).to.deep.equal(['alice', undefined, undefined, undefined]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
