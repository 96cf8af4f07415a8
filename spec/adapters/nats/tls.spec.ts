import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { plansOf } from '../../../bin/plans.js';
import { parseNodeFile } from '../../../config/node-file.js';
import { join } from 'node:path';
import { HiveNode } from '../../../node/node.js';
import { ConfigError } from '../../../protocol/errors.js';
import { makeMessage } from '../../../protocol/message.js';
import { certPath, certsDir } from '../../certs.js';
import { startTestNode } from '../../integration/helpers.js';
import { tempDir } from '../../temp.js';
import { makeOperator } from './jwt.js';
import type { NatsServer, NatsServerOptions } from './server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from './server.js';
import { nkeys } from '@nats-io/transport-node';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';
import { requireInstalled } from '../../support/installed.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
type Params = Record<string, string>;

/** The TLS block of a server with the test CA's server certificate; `verify` asks for client certificates. */
const serverTls = (
  extra: Partial<NonNullable<NatsServerOptions['tls']>> = {},
): NonNullable<NatsServerOptions['tls']> => ({
  cert: certPath('server.pem'),
  key: certPath('server.key'),
  ca: certPath('ca.pem'),
  ...extra,
});
const clientCert = (who: string): Params => ({
  SERVERCA: certPath('ca.pem'),
  SERVERCERT: certPath(`client-${who}.pem`),
  SERVERKEY: certPath(`client-${who}.key`),
});

/** Runs the CLI; resolves with its exit status and output. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...HIVENODE_ARGS, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('the NATS hive over TLS and with user credentials (real nats-server)', function () {
  this.timeout(60_000);
  const servers: NatsServer[] = [];
  const nodes: HiveNode[] = [];
  before(function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
    certsDir();
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop(2000)));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });
  const server = async (opts: NatsServerOptions): Promise<NatsServer> => {
    const s = await natsServer(opts);
    servers.push(s);
    return s;
  };
  /** An echo service on `s` and a call through the hive from a second node: the access works end to end. */
  const callsThrough = async (s: NatsServer, params: Params): Promise<void> => {
    for (const name of ['echo', 'caller'])
      nodes.push((await startTestNode([{ service: 'echo', NAME: name, SERVERHOST: s.url, ...params }])).node);
    const r = await nodes[1]!.hive.call('echo', makeMessage({ Data: { a: ['1'] } }), 5000);
    expect(r).to.deep.include({ Code: 200, Data: { a: ['1'] } });
  };
  /** The start's refusal: a ConfigError of one line, and how long it took. */
  const refusal = async (s: NatsServer, params: Params): Promise<{ message: string; ms: number }> => {
    const began = Date.now();
    const e = await startTestNode([{ service: 'echo', NAME: 'refused', SERVERHOST: s.url, ...params }]).then(
      ({ node }) => {
        nodes.push(node);
        return undefined;
      },
      (err: unknown) => err,
    );
    expect(e, 'the start was not refused').to.be.instanceOf(ConfigError);
    const message = (e as Error).message;
    expect(message).not.to.contain('\n');
    return { message, ms: Date.now() - began };
  };

  describe('a server that verifies client certificates and has users with passwords', () => {
    let s: NatsServer;
    beforeEach(async () => {
      s = await server({
        tls: serverTls({ verify: true }),
        auth: { kind: 'users', users: [{ user: 'hive', password: 'p:a:ss' }] },
      });
    });

    it('connects with SERVERCA, SERVERCERT, SERVERKEY and user:password (a password may hold ":")', async () => {
      expect(s.url).to.match(/^tls:\/\//);
      await callsThrough(s, { ...clientCert('alice'), SERVERAUTH: 'hive:p:a:ss' });
    });

    it('takes the key as a file:// secret and the certificates as PEM text', async () => {
      await callsThrough(s, {
        SERVERCA: readFileSync(certPath('ca.pem'), 'utf8'),
        SERVERCERT: readFileSync(certPath('client-bob.pem'), 'utf8'),
        SERVERKEY: `file://${certPath('client-bob.key')}`,
        SERVERAUTH: 'hive:p:a:ss',
      });
    });

    it('refuses a server certificate of a CA it does not trust, naming SERVERCA', async () => {
      const r = await refusal(s, {
        ...clientCert('alice'),
        SERVERCA: certPath('other-ca.pem'),
        SERVERAUTH: 'hive:p:a:ss',
      });
      expect(r.message).to.match(
        /presented a certificate not signed by a trusted CA \(unable to verify the first certificate\); check SERVERCA$/,
      );
      // no CA at all: the system's CAs do not know the test CA either
      const none = await refusal(s, { SERVERAUTH: 'hive:p:a:ss' });
      expect(none.message).to.match(/not signed by a trusted CA.*check SERVERCA$/);
    });

    it('a missing, expired or foreign client certificate is refused at once, naming SERVERCERT and SERVERKEY', async () => {
      const cases: Params[] = [
        { SERVERCA: certPath('ca.pem') },
        {
          ...clientCert('alice'),
          SERVERCERT: certPath('client-expired.pem'),
          SERVERKEY: certPath('client-expired.key'),
        },
        {
          SERVERCA: certPath('ca.pem'),
          SERVERCERT: certPath('other-client.pem'),
          SERVERKEY: certPath('other-client.key'),
        },
      ];
      for (const c of cases) {
        const r = await refusal(s, { ...c, SERVERAUTH: 'hive:p:a:ss' });
        expect(r.message).to.match(
          /refused the client certificate \(TLS alert: bad certificate\); check SERVERCERT and SERVERKEY/,
        );
        // at once: the NATS client alone would only time out after 20 s
        expect(r.ms).to.be.below(5000);
      }
    });

    it('a wrong password or user is refused naming SERVERAUTH', async () => {
      for (const auth of ['hive:wrong', 'nobody:p:a:ss', 'some-token']) {
        const r = await refusal(s, { ...clientCert('alice'), SERVERAUTH: auth });
        expect(r.message).to.equal(
          `the NATS hive at ${s.url} refused the connection: Authorization Violation (check SERVERAUTH)`,
        );
      }
    });
  });

  it('refuses a server certificate that does not name the host, or has expired', async () => {
    const misnamed = await server({
      tls: { cert: certPath('client-alice.pem'), key: certPath('client-alice.key') },
      auth: { kind: 'none' },
    });
    expect((await refusal(misnamed, { SERVERCA: certPath('ca.pem') })).message).to.match(
      /does not name that host .*; use a SERVERHOST name the certificate names$/,
    );
    const expired = await server({
      tls: { cert: certPath('server-expired.pem'), key: certPath('server-expired.key') },
      auth: { kind: 'none' },
    });
    expect((await refusal(expired, { SERVERCA: certPath('ca.pem') })).message).to.match(
      /presented an expired certificate \(certificate has expired\)/,
    );
  });

  it('a tls:// hive whose server does not speak TLS is refused as such', async () => {
    const plain = await server({ auth: { kind: 'none' } });
    const r = await refusal({ ...plain, url: plain.url.replace('nats://', 'tls://') }, {});
    expect(r.message).to.match(
      /does not speak TLS .*use nats:\/\/ in SERVERHOST without SERVERCA, SERVERCERT and SERVERKEY, or enable TLS on the server$/,
    );
    // TLS material asks for TLS on a nats:// hive too
    expect((await refusal(plain, { SERVERCA: certPath('ca.pem') })).message).to.match(/does not speak TLS/);
  });

  it('a plain nats:// SERVERHOST still upgrades to TLS when the server requires it', async () => {
    const s = await server({ tls: serverTls(), auth: { kind: 'none' } });
    await callsThrough({ ...s, url: s.url.replace('tls://', 'nats://') }, { SERVERCA: certPath('ca.pem') });
  });

  it('verify_and_map: the certificate subject is the user (CN=alice connects, bob is refused naming SERVERCERT)', async () => {
    const s = await server({
      tls: serverTls({ verifyAndMap: true }),
      auth: { kind: 'users', users: [{ user: 'CN=alice' }] },
    });
    await callsThrough(s, clientCert('alice'));
    const r = await refusal(s, clientCert('bob'));
    expect(r.message).to.match(
      /refused the connection: Authorization Violation \(check SERVERCERT \(its subject must be a user of the server\)\)$/,
    );
  });

  it('nkey users: a seed file (path or file://) connects; another seed is refused naming SERVERAUTH', async () => {
    const user = nkeys.createUser();
    const s = await server({ auth: { kind: 'nkeys', nkeys: [user.getPublicKey()] } });
    const dir = tempDir('hn-nkey-');
    writeFileSync(join(dir, 'hive.nk'), `${new TextDecoder().decode(user.getSeed())}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'seed'), new TextDecoder().decode(user.getSeed()), { mode: 0o600 });
    await callsThrough(s, { SERVERAUTH: join(dir, 'hive.nk') });
    await Promise.all(nodes.splice(0).map((n) => n.stop(2000)));
    await callsThrough(s, { SERVERAUTH: `file://${join(dir, 'seed')}` });
    const r = await refusal(s, { SERVERAUTH: new TextDecoder().decode(nkeys.createUser().getSeed()) });
    expect(r.message).to.match(/refused the connection: Authorization Violation \(check SERVERAUTH\)$/);
  });

  it('a .creds file (operator mode, JWT signed by the account) connects; creds of another operator are refused', async () => {
    const op = makeOperator();
    const s = await server({ auth: { kind: 'operator', operatorJwt: op.operatorJwt, accounts: [op.account] } });
    const dir = tempDir('hn-creds-');
    writeFileSync(join(dir, 'hive.creds'), op.userCreds('hive'), { mode: 0o600 });
    writeFileSync(join(dir, 'stranger.creds'), makeOperator().userCreds('stranger'), { mode: 0o600 });
    await callsThrough(s, { SERVERAUTH: join(dir, 'hive.creds') });
    await Promise.all(nodes.splice(0).map((n) => n.stop(2000)));
    await callsThrough(s, { SERVERAUTH: `file://${join(dir, 'hive.creds')}` });
    const r = await refusal(s, { SERVERAUTH: join(dir, 'stranger.creds') });
    expect(r.message).to.match(/refused the connection: Authorization Violation \(check SERVERAUTH\)$/);
  });

  it('examples/nats/tls.yaml connects to a server run with examples/nats/nats-server-tls.conf', async () => {
    const example = (name: string): string => readFileSync(join(ROOT, 'examples', 'nats', name), 'utf8');
    // the example's server on a free port, with the certificates of this run and a private store
    const config = example('nats-server-tls.conf')
      .replace(/^listen:.*$/m, '')
      .replaceAll('"certs/', `"${certsDir()}/`)
      .replace('/tmp/hivenode-nats-tls', tempDir('hn-ex-js-'));
    const s = await server({ config, env: { HIVE_PASSWORD: 'pw-ex' } });
    const file = parseNodeFile(example('tls.yaml').replaceAll('localhost:4443', `localhost:${s.port}`), 'tls.yaml', {
      HIVENODE_CERTS: certsDir(),
      HIVE_PASSWORD: 'pw-ex',
    });
    const node = await HiveNode.start({ services: plansOf(file), logStream: new PassThrough() });
    nodes.push(node);
    expect(await node.hive.call('echo', makeMessage({ Data: { x: ['1'] } }), 5000)).to.deep.include({
      Code: 200,
      Data: { x: ['1'] },
    });
    const wrong = parseNodeFile(example('tls.yaml').replaceAll('localhost:4443', `localhost:${s.port}`), 'tls.yaml', {
      HIVENODE_CERTS: certsDir(),
      HIVE_PASSWORD: 'not-it',
    });
    const e = await HiveNode.start({ services: plansOf(wrong), logStream: new PassThrough() }).catch(
      (err: unknown) => err,
    );
    expect((e as Error).message).to.match(/refused the connection: Authorization Violation \(check SERVERAUTH\)$/);
  });

  describe('the command line', () => {
    it('send reaches a TLS hive with --ca, --cert, --key and --auth, or the same from the environment', async () => {
      const s = await server({
        tls: serverTls({ verify: true }),
        auth: { kind: 'users', users: [{ user: 'hive', password: 'pw' }] },
      });
      nodes.push(
        (
          await startTestNode([
            { service: 'echo', NAME: 'echo', SERVERHOST: s.url, SERVERAUTH: 'hive:pw', ...clientCert('alice') },
          ])
        ).node,
      );
      const byOptions = await runCli([
        'send',
        'echo',
        '--data',
        '{"a":["1"]}',
        '--server',
        s.url,
        '--auth',
        'hive:pw',
        '--ca',
        certPath('ca.pem'),
        '--cert',
        certPath('client-bob.pem'),
        '--key',
        certPath('client-bob.key'),
      ]);
      expect(byOptions.status, byOptions.stderr).to.equal(0);
      expect(JSON.parse(byOptions.stdout)).to.deep.include({ Code: 200 });
      const byEnv = await runCli(['send', 'echo'], {
        SERVERHOST: s.url,
        SERVERAUTH: 'hive:pw',
        ...clientCert('carol'),
        SERVERKEY: `file://${certPath('client-carol.key')}`,
      });
      expect(byEnv.status, byEnv.stderr).to.equal(0);
      const wrongCa = await runCli([
        'send',
        'echo',
        '--server',
        s.url,
        '--auth',
        'hive:pw',
        '--ca',
        certPath('other-ca.pem'),
      ]);
      expect(wrongCa.status).to.equal(2);
      expect(wrongCa.stderr).to.match(
        /^hivenode: the NATS hive at .* presented a certificate not signed by a trusted CA .*; check SERVERCA\n$/,
      );
    });

    it('a node file whose hive section has a wrong credential or CA stops the start with one line and exit code 2', async () => {
      const s = await server({
        tls: serverTls({ verify: true }),
        auth: { kind: 'users', users: [{ user: 'hive', password: 'pw' }] },
      });
      const dir = tempDir('hn-tls-node-');
      const write = (hive: Params): string => {
        const file = join(dir, `node-${Math.random().toString(36).slice(2)}.yaml`);
        writeFileSync(
          file,
          [
            `hive: ${JSON.stringify({ SERVERHOST: s.url, ...hive })}`,
            'services:',
            '  - {service: echo, NAME: e}',
            '',
          ].join('\n'),
        );
        return file;
      };
      const cases: [Params, RegExp][] = [
        [
          { ...clientCert('alice'), SERVERAUTH: 'hive:nope' },
          /refused the connection: Authorization Violation \(check SERVERAUTH\)/,
        ],
        [{ ...clientCert('alice'), SERVERCA: certPath('other-ca.pem'), SERVERAUTH: 'hive:pw' }, /check SERVERCA$/],
        [
          { SERVERCA: certPath('ca.pem'), SERVERAUTH: 'hive:pw' },
          /refused the client certificate .*check SERVERCERT and SERVERKEY/,
        ],
        [
          { ...clientCert('alice'), SERVERKEY: certPath('client-bob.key'), SERVERAUTH: 'hive:pw' },
          /^SERVERKEY is not the private key of the SERVERCERT certificate$/,
        ],
      ];
      for (const [hive, cause] of cases) {
        const r = await runCli(['run', write(hive)]);
        expect(r.status, r.stderr).to.equal(2);
        const lines = r.stderr.split('\n').filter((l) => l !== '');
        expect(lines, r.stderr).to.have.length(1);
        expect(lines[0]!.replace(/^hivenode: /, '')).to.match(cause);
      }
    });
  });
});
