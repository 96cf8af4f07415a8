/**
 * The address guard behind a proxy holds against DNS rebinding (README, The HTTP client): the node
 * resolves the upstream's name and checks it, the proxy would resolve it again — here a squid whose
 * hosts file answers `localhost` with 127.0.0.2, a blocked address, while this machine answers
 * 127.0.0.1. The request is pinned to the checked address: a CONNECT tunnel goes to it, while the
 * upstream still gets the name (Host; for https the TLS name verified). Without the pin (HIVENODE_TEST_BROKEN_NO_PIN, a
 * test-only switch) the same request reaches the blocked server: the test shows it can fail.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage } from '../../../protocol/message.js';
import { startTestNode } from '../../integration/helpers.js';
import { tempDir } from '../../temp.js';
import { freePort } from '../ports.js';
import type { Squid } from './squid.js';
import { SQUID_MISSING, squidAvailable, startSquid } from './squid.js';
import { requireInstalled } from '../../support/installed.js';
import { until } from '../../support/wait.js';

const PROXY_VARS = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];
const BLOCKED = '127.0.0.2';

describe('HTTP client through a proxy: the checked address is the one reached (DNS rebinding)', function () {
  this.timeout(60_000);
  let squid: Squid;
  let certDir: string;
  let node: HiveNode | undefined;
  const servers: Server[] = [];
  const saved = new Map<string, string | undefined>();

  before(async function () {
    requireInstalled(squidAvailable(), SQUID_MISSING, this);
    // the proxy's resolver disagrees with this machine's: the rebinding a hostile DNS server would do
    squid = await startSquid({ hosts: `${BLOCKED} localhost` });
    certDir = tempDir('hn-rebind-tls-');
    // a certificate for the name only: a tunnel to the address must still present and verify 'localhost'
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(certDir, 'key.pem'),
        '-out',
        join(certDir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    for (const v of PROXY_VARS) {
      saved.set(v, process.env[v]);
      delete process.env[v];
    }
  });
  after(async () => {
    await squid?.stop();
    for (const [k, v] of saved) if (v !== undefined) process.env[k] = v;
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    delete process.env.HIVENODE_TEST_BROKEN_NO_PIN;
    await Promise.all(
      servers.splice(0).map(
        (s) =>
          new Promise<void>((r) => {
            s.closeAllConnections();
            s.close(() => r());
          }),
      ),
    );
  });

  /** Two servers on one port: the allowed one on 127.0.0.1, the blocked one on 127.0.0.2; each records what reached it. */
  const pair = async (tls: boolean): Promise<{ port: number; reached: Record<string, string[]> }> => {
    const port = await freePort();
    const reached: Record<string, string[]> = { '127.0.0.1': [], [BLOCKED]: [] };
    for (const address of Object.keys(reached)) {
      const handler = (
        req: { url?: string; headers: Record<string, unknown> },
        res: { end: (b: string) => void },
      ): void => {
        reached[address]!.push(`${String(req.headers.host)} ${req.url ?? ''}`);
        res.end(address);
      };
      const server = tls
        ? createTlsServer(
            { key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) },
            handler,
          )
        : createServer(handler);
      servers.push(server);
      await new Promise<void>((r) => server.listen(port, address, () => r()));
    }
    return { port, reached };
  };
  const call = async (
    params: Record<string, string | number | boolean>,
  ): Promise<{ Code: number; Message: string; body: string }> => {
    ({ node } = await startTestNode([
      {
        service: 'httpclient',
        NAME: 'web',
        Method: 'GET',
        Retries: 0,
        InterceptBefore: 'module://examples/interceptors/data-body-before.mjs',
        Proxy: squid.url(),
        BlockNetworks: `${BLOCKED}/32`,
        ...params,
      },
    ]));
    const r = await node!.hive.call('web', makeMessage({}), 30_000);
    return { Code: r.Code, Message: r.Message, body: r.Data.body?.[0] ?? '' };
  };

  it('plain http: a tunnel to the checked address, the upstream gets the name in Host; the blocked server is never reached', async () => {
    const { port, reached } = await pair(false);
    const r = await call({ URL: `http://localhost:${port}/pinned` });
    expect(r.Code, r.Message).to.equal(200);
    expect(r.body).to.equal('127.0.0.1');
    expect(reached).to.deep.equal({ '127.0.0.1': [`localhost:${port} /pinned`], [BLOCKED]: [] });
    await node!.stop(1000);
    node = undefined;
    // squid logs a tunnel when it closes
    await until(() => squid.accessLog().includes(`CONNECT 127.0.0.1:${port} `));
  });

  it('https: the tunnel goes to the checked address, TLS verifies the name (a certificate for localhost only)', async () => {
    const { port, reached } = await pair(true);
    const r = await call({ URL: `https://localhost:${port}/secure`, CAFile: join(certDir, 'cert.pem') });
    expect(r.Code, r.Message).to.equal(200);
    expect(r.body).to.equal('127.0.0.1');
    expect(reached[BLOCKED]).to.deep.equal([]);
  });

  it('the test can fail: without the pin the proxy resolves the name again and reaches the blocked server', async () => {
    process.env.HIVENODE_TEST_BROKEN_NO_PIN = '1';
    const { port, reached } = await pair(false);
    const r = await call({ URL: `http://localhost:${port}/rebound` });
    expect(r.Code, r.Message).to.equal(200);
    expect(r.body).to.equal(BLOCKED);
    expect(reached[BLOCKED]).to.deep.equal([`localhost:${port} /rebound`]);
  });
});
