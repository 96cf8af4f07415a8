/**
 * The gateway over HTTPS and mutual TLS with real clients (curl, openssl s_client, Node's https):
 * TLS 1.2 and 1.3 served and TLS 1.1 refused, plain HTTP on the HTTPS port closed cleanly and counted,
 * client certificates required (missing, expired and wrong-CA ones refused, a valid one's CN the
 * user when no Basic credentials come), and the certificate replaced on disk under load with no
 * failed request while new handshakes see the new certificate.
 */
import { expect } from 'chai';
import { copyFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { passwdLine } from '../../../actors/auth/authenticate.js';
import type { HiveNode } from '../../../node/node.js';
import { certPath } from '../../certs.js';
import type { Params, RunningGateway } from '../../integration/gateway-harness.js';
import { rawExchange, startGateway } from '../../integration/gateway-harness.js';
import { tempDir } from '../../temp.js';
import {
  clientCert,
  curl,
  httpsPost,
  postJson,
  renewedServerPair,
  replaceFile,
  sClient,
  servedSerial,
} from './tls-clients.js';
import { sleep, until } from '../../support/wait.js';

const BODY = '{"id":["42"]}';
const tlsOn: Params = { TLSCert: `file://${certPath('server.pem')}`, TLSKey: `file://${certPath('server.key')}` };
const mtls = (mode: 'request' | 'require'): Params => ({ ...tlsOn, TLSCA: certPath('ca.pem'), TLSClientAuth: mode });
const basic = (user: string, password: string): string =>
  `authorization: Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

type Figures = Record<string, number>;
const figures = (node: HiveNode): Figures => node.services.find((s) => s.kind === 'gateway')!.running.status() as never;

/** The Data of a 200 answer in curl's output, or the failure. */
function answered(r: { code: number; stdout: string; stderr: string }): unknown {
  expect(r.code, `curl failed: ${r.stderr}`).to.equal(0);
  return (JSON.parse(r.stdout) as { Data: unknown }).Data;
}

describe('gateway over HTTPS and mutual TLS (curl, openssl s_client)', function () {
  this.timeout(60_000);
  let gw: RunningGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('serves TLS 1.2 and TLS 1.3 with the configured certificate, the health check included, and refuses TLS 1.1', async () => {
    gw = await startGateway(tlsOn);
    const v12 = await curl(gw.port, '/t/op', ['--tlsv1.2', '--tls-max', '1.2', ...postJson(BODY)]);
    expect(answered(v12)).to.deep.equal({ id: ['42'] });
    expect(v12.stderr).to.match(/SSL connection using TLSv1\.2/);
    const v13 = await curl(gw.port, '/t/op', ['--tlsv1.3', ...postJson(BODY)]);
    expect(answered(v13)).to.deep.equal({ id: ['42'] });
    expect(v13.stderr).to.match(/SSL connection using TLSv1\.3/);
    const health = await curl(gw.port, '/healthcheck');
    expect(JSON.parse(health.stdout)).to.deep.include({ status: 'ok' });

    const verified = await sClient(gw.port, ['-CAfile', certPath('ca.pem'), '-verify_return_error']);
    expect(verified.stdout).to.match(/Verify return code: 0 \(ok\)/);
    expect(verified.stdout).to.match(/subject=CN ?= ?localhost/);
    const otherCa = await sClient(gw.port, ['-CAfile', certPath('other-ca.pem')]);
    expect(otherCa.stdout).to.match(
      /Verify return code: (20|21) \(unable to (get local issuer certificate|verify the first certificate)\)/,
    );
    const old = await sClient(gw.port, ['-tls1_1', '-CAfile', certPath('ca.pem')]);
    expect(old.code).to.not.equal(0);
    expect(`${old.stdout}${old.stderr}`).to.match(/alert protocol version|no protocols available|unsupported protocol/);
    expect(old.stdout).to.match(/no peer certificate available/);
    await until(() => figures(gw!.node).tlsOldProtocol === 1, 2000);
    expect(figures(gw.node)).to.include({ tls: true, tlsHandshakeFailures: 1, tlsOldProtocol: 1 });
  });

  it('closes plain HTTP, clear-text bytes and a stalled handshake on the HTTPS port cleanly, counts them, logs nothing at warn, and keeps serving', async () => {
    gw = await startGateway({ ...tlsOn, ClientTimeout: '1s' });
    const plain = await curl(gw.port, '/t/op', postJson(BODY), `http://127.0.0.1:${gw.port}/t/op`);
    // the gateway closes without an answer (curl 52: empty reply from server)
    expect(plain.code, plain.stderr).to.equal(52);
    for (let i = 0; i < 20; i++) {
      const raw = await rawExchange(
        gw.port,
        i % 2 === 0 ? 'GET /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n' : Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0a]),
        3000,
      );
      expect(raw.closed, 'closed by the gateway').to.equal(true);
      expect(raw.text, 'nothing sent back in clear text').to.equal('');
    }
    // a TLS record announced but never finished: closed after ClientTimeout, not Node's 120 s
    const stalled = await rawExchange(gw.port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]), 5000);
    expect(stalled.closed, 'stalled handshake closed').to.equal(true);
    await until(() => figures(gw!.node).tlsHandshakeFailures === 22, 3000);
    expect(figures(gw.node).tlsHandshakeTimeouts).to.equal(1);
    expect(figures(gw.node).tlsPlainText, 'plain HTTP requests recognised').to.be.at.least(11);
    expect(answered(await curl(gw.port, '/t/op', postJson(BODY)))).to.deep.equal({ id: ['42'] });
    expect(gw.logs()).to.not.match(/ WARN .*(TLS|handshake|ssl)/i);
    expect(gw.logs()).to.not.match(/ ERROR /);
  });

  it('with TLSClientAuth require: no certificate, an expired one and one of another CA are refused; a valid one passes', async () => {
    gw = await startGateway(mtls('require'));
    const none = await curl(gw.port, '/t/op', postJson(BODY));
    expect(none.code, none.stderr).to.not.equal(0);
    expect(none.stderr).to.match(/certificate required|alert|reset|handshake/i);
    const expired = await curl(gw.port, '/t/op', [...clientCert('client-expired'), ...postJson(BODY)]);
    expect(expired.code, expired.stderr).to.not.equal(0);
    expect(expired.stdout).to.equal('');
    const otherCa = await curl(gw.port, '/t/op', [...clientCert('other-client'), ...postJson(BODY)]);
    expect(otherCa.code, otherCa.stderr).to.not.equal(0);
    expect(otherCa.stdout).to.equal('');
    const sNone = await sClient(gw.port, ['-CAfile', certPath('ca.pem')]);
    expect(sNone.stdout).to.not.match(/HTTP\/1\.1/);
    expect(answered(await curl(gw.port, '/t/op', [...clientCert('client-alice'), ...postJson(BODY)]))).to.deep.equal({
      id: ['42'],
    });
    await until(() => figures(gw!.node).tlsHandshakeFailures === 4, 3000);
    expect(figures(gw.node)).to.include({ tlsNoCertificate: 2, tlsBadCertificate: 2 });
    expect(gw.logs()).to.not.match(/Users is not set/);
  });

  it("takes a verified client certificate's CN as the user when no Basic credentials come; Basic ones, when given, decide", async () => {
    const dir = tempDir('hn-mtls-users-');
    const users = join(dir, 'users');
    writeFileSync(users, `${await passwdLine('carol', 'carol-pw', 4)}\n`);
    gw = await startGateway({ ...mtls('request'), Users: users, LOGLEVEL: 'debug' });
    expect(answered(await curl(gw.port, '/t/op', [...clientCert('client-alice'), ...postJson(BODY)]))).to.deep.equal({
      id: ['42'],
    });
    expect(gw.logs()).to.match(/\/t\/op: user alice \(client certificate\)/);
    expect(answered(await curl(gw.port, '/t/op', [...clientCert('client-bob'), ...postJson(BODY)]))).to.deep.equal({
      id: ['42'],
    });
    expect(gw.logs()).to.match(/user bob \(client certificate\)/);

    const anonymous = await curl(gw.port, '/t/op', postJson(BODY));
    expect(JSON.parse(anonymous.stdout)).to.include({ Code: 401 });
    expect(anonymous.stdout).to.match(/Basic, or a client certificate/);
    // request mode: a certificate that does not verify connects but names nobody
    const expired = await curl(gw.port, '/t/op', [...clientCert('client-expired'), ...postJson(BODY)]);
    expect(JSON.parse(expired.stdout)).to.include({ Code: 401 });

    const wrongBasic = await curl(gw.port, '/t/op', [
      ...clientCert('client-alice'),
      '-H',
      basic('carol', 'wrong'),
      ...postJson(BODY),
    ]);
    expect(JSON.parse(wrongBasic.stdout)).to.include({ Code: 401 });
    expect(
      answered(
        await curl(gw.port, '/t/op', [
          ...clientCert('client-alice'),
          '-H',
          basic('carol', 'carol-pw'),
          ...postJson(BODY),
        ]),
      ),
    ).to.deep.equal({ id: ['42'] });
    expect(gw.logs()).to.match(/user carol \(Basic\)/);
  });

  it('with TLSClientAuth require and no Users, Access decides by the certificate user: its groups allow, others get 403', async () => {
    const dir = tempDir('hn-mtls-access-');
    const groups = join(dir, 'groups');
    writeFileSync(groups, 'admins: alice\nops: bob\n');
    gw = await startGateway({ ...mtls('require'), Groups: groups, Access: 't/admin=admins;t=ops,admins' });
    expect(answered(await curl(gw.port, '/t/admin', [...clientCert('client-alice'), ...postJson(BODY)]))).to.deep.equal(
      { id: ['42'] },
    );
    expect(answered(await curl(gw.port, '/t/op', [...clientCert('client-bob'), ...postJson(BODY)]))).to.deep.equal({
      id: ['42'],
    });
    const bobAdmin = await curl(gw.port, '/t/admin', [...clientCert('client-bob'), ...postJson(BODY)]);
    expect(JSON.parse(bobAdmin.stdout)).to.include({
      Code: 403,
      Message: "route 't/admin' is not allowed for user 'bob'",
    });
    const carol = await curl(gw.port, '/t/op', [...clientCert('client-carol'), ...postJson(BODY)]);
    expect(JSON.parse(carol.stdout)).to.include({ Code: 403 });
    expect(gw.logs()).to.match(/403: user 'bob' may not use route 't\/admin'/);
  });

  it('reloads a replaced certificate under keep-alive and new-connection load with no failed request; new handshakes see it', async () => {
    const dir = tempDir('hn-reload-');
    const [cert, key] = [join(dir, 'server.pem'), join(dir, 'server.key')];
    copyFileSync(certPath('server.pem'), cert);
    copyFileSync(certPath('server.key'), key);
    gw = await startGateway({ TLSCert: `file://${cert}`, TLSKey: key });
    const port = gw.port;
    const before = await servedSerial(port);
    const renewed = await renewedServerPair();
    expect(renewed.serial).to.not.equal(before);

    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const failures: string[] = [];
    let done = 0;
    let fresh = 0;
    let stop = false;
    const oneRequest = async (a: Agent | false): Promise<void> => {
      try {
        const r = await httpsPost(port, '/t/op', BODY, a);
        if (r.status !== 200) failures.push(`${r.status} ${r.text}`);
        done++;
      } catch (e) {
        failures.push((e as Error).message);
      }
    };
    const keepAlive = Array.from({ length: 4 }, async () => {
      while (!stop) await oneRequest(agent);
    });
    const handshakes = (async () => {
      while (!stop) {
        await oneRequest(false);
        fresh++;
      }
    })();
    await sleep(500);
    // a renewal: the key first, then the certificate (a half-way pair keeps the old one in use)
    replaceFile(renewed.key, key);
    await sleep(50);
    replaceFile(renewed.cert, cert);
    await until(() => /TLS certificate reloaded/.test(gw!.logs()), 10_000);
    const freshAtReload = fresh;
    await until(() => fresh >= freshAtReload + 20, 10_000);
    stop = true;
    await Promise.all([...keepAlive, handshakes]);
    agent.destroy();

    expect(failures, 'failed requests').to.deep.equal([]);
    expect(done).to.be.greaterThan(50);
    expect(await servedSerial(port)).to.equal(renewed.serial);
    const shown = await sClient(port, ['-CAfile', certPath('ca.pem'), '-verify_return_error']);
    expect(shown.stdout).to.match(/Verify return code: 0 \(ok\)/);
    expect(gw.logs()).to.not.match(/do not load/);
  });
});
