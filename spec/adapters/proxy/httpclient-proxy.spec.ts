/**
 * The HTTP client through a real proxy (a private squid, ./squid.ts): plain http forwarded, https
 * through CONNECT, proxy authentication, NO_PROXY, the Proxy parameter over the environment, the
 * address guard on the upstream behind the proxy, and interceptor calls direct unless InterceptProxy.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { plansOf } from '../../../bin/plans.js';
import { loadNodeFile } from '../../../config/node-file.js';
import { HiveNode } from '../../../node/node.js';
import type { InterceptorFunction } from '../../../actors/interceptor/server.js';
import { loadInterceptor } from '../../../actors/interceptor/server.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { Result } from '../../../protocol/message.js';
import { startTestNode } from '../../integration/helpers.js';
import { tempDir } from '../../temp.js';
import type { Squid } from './squid.js';
import { SQUID_MISSING, squidAvailable, startSquid } from './squid.js';
import { requireInstalled } from '../../support/installed.js';
import { sleep, until } from '../../support/wait.js';

const PROXY_VARS = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];
const ROOT = new URL('../../../', import.meta.url).pathname;
const examples = join(ROOT, 'examples/interceptors/');

type Seen = { url: string; headers: IncomingHttpHeaders };

/** Answers every request with what it saw (JSON), remembering each; or redirects every request to `location`. */
function recorder(seen: Seen[], location?: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    req.resume();
    req.on('end', () => {
      seen.push({ url: req.url!, headers: req.headers });
      if (location) return void res.writeHead(302, { location }).end();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ path: req.url, via: req.headers.via ?? null }));
    });
  };
}

/** An interceptor service over HTTP that also remembers the headers it was called with. */
function recordingInterceptor(fn: InterceptorFunction, seen: Seen[]) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ url: req.url!, headers: req.headers });
      const { type, value, options } = JSON.parse(Buffer.concat(chunks).toString()) as {
        type: string;
        value: unknown;
        options: Record<string, string>;
      };
      void Promise.resolve(fn(type, value, options)).then((reply) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply)),
      );
    });
  };
}

const passBefore: InterceptorFunction = (_t, value) => ({
  data: (value as { Data: unknown }).Data,
  status: 'OK',
  status_code: 200,
});

describe('HTTP client through a proxy (squid)', function () {
  this.timeout(60_000);
  let squid: Squid;
  let certDir: string;
  const saved = new Map<string, string | undefined>();
  let node: HiveNode | undefined;
  let logs: () => string = () => '';
  const servers: Server[] = [];

  before(async function () {
    requireInstalled(squidAvailable(), SQUID_MISSING, this);
    squid = await startSquid();
    certDir = tempDir('hn-proxy-tls-');
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
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    for (const v of PROXY_VARS) saved.set(v, process.env[v]);
  });
  after(async () => {
    await squid?.stop();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
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

  /** The proxy variables exactly as given (every other one unset). */
  const env = (vars: Record<string, string>): void => {
    for (const v of PROXY_VARS) delete process.env[v];
    Object.assign(process.env, vars);
  };
  const listen = async (server: Server): Promise<number> => {
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return (server.address() as AddressInfo).port;
  };
  const httpUpstream = async (): Promise<{ base: string; seen: Seen[] }> => {
    const seen: Seen[] = [];
    return { base: `http://127.0.0.1:${await listen(createServer(recorder(seen)))}`, seen };
  };
  const httpsUpstream = async (location?: string): Promise<{ port: number; seen: Seen[] }> => {
    const seen: Seen[] = [];
    const server = createTlsServer(
      { key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) },
      recorder(seen, location),
    );
    return { port: await listen(server), seen };
  };
  const interceptor = async (fn: InterceptorFunction): Promise<{ url: string; seen: Seen[] }> => {
    const seen: Seen[] = [];
    return { url: `http://127.0.0.1:${await listen(createServer(recordingInterceptor(fn, seen)))}/map`, seen };
  };
  const client = async (
    params: Record<string, string | number | boolean>,
  ): Promise<(data?: Record<string, string[]>) => Promise<Result>> => {
    const before = params.InterceptBefore ?? (await interceptor(passBefore)).url;
    ({ node, logs } = await startTestNode([
      {
        service: 'httpclient',
        NAME: 'web',
        Method: 'GET',
        LOGLEVEL: 'DEBUG',
        Retries: 0,
        ...params,
        InterceptBefore: before,
      },
    ]));
    return (data = {}) => node!.hive.call('web', makeMessage({ Data: mapOf(data) }), 30_000);
  };
  /** Access-log lines added by `action`. */
  const proxied = async (action: () => Promise<unknown>): Promise<string[]> => {
    const before = squid.accessLog().length;
    await action();
    await sleep(100);
    return squid.accessLog().slice(before).split('\n').filter(Boolean);
  };

  it('forwards plain http through the proxy (its Via header and access log show it); the credentials appear in no log', async () => {
    env({});
    const up = await httpUpstream();
    const call = await client({ URL: `${up.base}/plain?q=1`, Proxy: squid.url() });
    let r: Result | undefined;
    const lines = await proxied(async () => (r = await call()));
    expect(r!.Code, r!.Message).to.equal(200);
    expect(up.seen[0]!.headers.via).to.match(/squid/);
    // squid logs URLs without their query (strip_query_terms)
    expect(lines.join('\n')).to.contain(`GET ${up.base}/plain? ${squid.user} `);
    expect(logs()).to.contain(`through proxy http://127.0.0.1:${squid.port} (Proxy)`);
    expect(logs()).to.not.contain(squid.password);
    expect(squid.accessLog()).to.not.contain(squid.password);
  });

  it('reaches an https upstream through a CONNECT tunnel, trusting its certificate through CAFile', async () => {
    env({});
    const up = await httpsUpstream();
    const call = await client({
      URL: `https://localhost:${up.port}/secure`,
      Proxy: squid.url(),
      CAFile: join(certDir, 'cert.pem'),
    });
    const r = await call();
    expect(r.Code, r.Message).to.equal(200);
    expect(JSON.parse(r.Data.body![0]!)).to.deep.equal({ path: '/secure', via: null });
    // squid logs a tunnel when it closes: stopping the node closes it
    await node!.stop(1000);
    await until(() => squid.accessLog().includes(`CONNECT localhost:${up.port} ${squid.user} `));
    const untrusted = await (await client({ URL: `https://localhost:${up.port}/secure`, Proxy: squid.url() }))();
    expect(untrusted.Code, 'the tunnel does not lift certificate checks').to.equal(502);
    expect(untrusted.Message).to.match(/self[- ]signed|certificate/i);
  });

  it('a redirect to another host through the tunnel carries that host in its Host header', async () => {
    env({});
    const far = await httpsUpstream();
    const near = await httpsUpstream(`https://127.0.0.1:${far.port}/landed`);
    const r = await (
      await client({
        URL: `https://localhost:${near.port}/start`,
        Proxy: squid.url(),
        CAFile: join(certDir, 'cert.pem'),
      })
    )();
    expect(r.Code, r.Message).to.equal(200);
    expect(near.seen[0]!.headers.host).to.equal(`localhost:${near.port}`);
    expect(far.seen[0]).to.deep.include({ url: '/landed' });
    expect(far.seen[0]!.headers.host).to.equal(`127.0.0.1:${far.port}`);
  });

  it('wrong or missing proxy credentials: 502 naming the proxy and the parameter, for http and https, not retried, no password in the logs; no Proxy-Authorization header of ours', async () => {
    env({});
    const up = await httpUpstream();
    const tls = await httpsUpstream();
    const wrong = { user: squid.user, password: 'not-the-password' };
    const plain = await (await client({ URL: `${up.base}/x`, Proxy: squid.url(wrong) }))();
    expect(plain.Code).to.equal(502);
    expect(plain.Message).to.equal(
      `proxy http://127.0.0.1:${squid.port} refused the credentials given in Proxy (407 Proxy Authentication Required) for ${up.base}`,
    );
    expect(logs()).to.not.contain('not-the-password');
    await node!.stop(1000);
    const secureCall = await client({
      URL: `https://localhost:${tls.port}/x`,
      Proxy: squid.url(wrong),
      CAFile: join(certDir, 'cert.pem'),
      Retries: 2,
    });
    let secure: Result | undefined;
    const refusals = await proxied(async () => (secure = await secureCall()));
    // only the tunnel's lines: squid writes its log lines late, and the plain call's 407 can land in this window
    expect(
      refusals.filter((l) => l.includes('/407 ') && l.includes(`CONNECT localhost:${tls.port} `)),
      'a refusal is final: not retried',
    ).to.have.length(1);
    expect(secure!.Code).to.equal(502);
    expect(secure!.Message).to.contain('refused the credentials given in Proxy (407');
    expect(logs()).to.not.contain('not-the-password');
    await node!.stop(1000);
    env({ HTTP_PROXY: squid.url(false) });
    const none = await (await client({ URL: `${up.base}/x` }))();
    expect(none.Message).to.contain('requires credentials (give them in HTTP_PROXY');
    await node!.stop(1000);
    const header = await (
      await client({ URL: `${up.base}/x`, Proxy: squid.url(), Headers: 'Proxy-Authorization: Basic eDp5' })
    )();
    expect(header).to.deep.include({
      Code: 400,
      Message: 'a Proxy-Authorization header cannot be sent through a proxy: give the credentials in the proxy URL',
    });
    expect(up.seen, 'nothing reached the upstream').to.have.length(0);
    expect(tls.seen).to.have.length(0);
  });

  it('honours NO_PROXY: a host list, *, a domain suffix, host:port; the lower-case variables first', async () => {
    const up = await httpUpstream();
    const port = new URL(up.base).port;
    const cases: Array<[Record<string, string>, string, boolean]> = [
      [{ HTTP_PROXY: squid.url(), NO_PROXY: 'example.com, 127.0.0.1' }, `${up.base}/list`, false],
      [{ HTTP_PROXY: squid.url(), NO_PROXY: 'example.com' }, `${up.base}/other`, true],
      [{ HTTP_PROXY: squid.url(), NO_PROXY: '*' }, `${up.base}/star`, false],
      [{ HTTP_PROXY: squid.url(), NO_PROXY: '.localhost' }, `http://localhost:${port}/suffix-self`, false],
      [{ HTTP_PROXY: squid.url(), NO_PROXY: 'host' }, `http://localhost:${port}/label`, true],
      [{ HTTP_PROXY: squid.url(), NO_PROXY: `127.0.0.1:${port}` }, `${up.base}/port`, false],
      [{ HTTP_PROXY: squid.url(), NO_PROXY: `127.0.0.1:${Number(port) + 1}` }, `${up.base}/other-port`, true],
      [{ HTTP_PROXY: squid.url(), NO_PROXY: '127.0.0.0/8' }, `${up.base}/cidr`, false],
      [
        { http_proxy: squid.url(), HTTP_PROXY: 'http://127.0.0.1:1', no_proxy: 'example.com', NO_PROXY: '*' },
        `${up.base}/lower`,
        true,
      ],
    ];
    for (const [vars, url, viaProxy] of cases) {
      env(vars);
      const r = await (await client({ URL: url }))();
      expect(r.Code, `${url} with ${JSON.stringify(vars)}: ${r.Message}`).to.equal(200);
      expect(
        JSON.parse(r.Data.body![0]!).via === null,
        `${url} went ${viaProxy ? 'through the proxy' : 'direct'}`,
      ).to.equal(!viaProxy);
      await node!.stop(1000);
      node = undefined;
    }
    // a name below a NO_PROXY domain goes direct: unresolvable here, it fails without the proxy seeing it
    env({ HTTP_PROXY: squid.url(), NO_PROXY: 'example.test' });
    const call = await client({ URL: 'http://api.example.test/' });
    let r: Result | undefined;
    expect(await proxied(async () => (r = await call()))).to.deep.equal([]);
    expect(r!.Code).to.equal(502);
    expect(r!.Message).to.not.contain('through proxy');
  });

  it('an unreachable proxy is a 502 naming it; the Proxy parameter overrides the environment (proxy variables and NO_PROXY alike)', async () => {
    const up = await httpUpstream();
    env({ HTTP_PROXY: 'http://u:secret@127.0.0.1:1' });
    const dead = await (await client({ URL: `${up.base}/dead` }))();
    expect(dead.Code).to.equal(502);
    expect(dead.Message).to.match(/^GET http:\/\/127\.0\.0\.1:\d+ failed through proxy http:\/\/127\.0\.0\.1:1: /);
    expect(logs()).to.not.contain('secret');
    await node!.stop(1000);
    env({ HTTP_PROXY: 'http://127.0.0.1:1', NO_PROXY: '*' });
    const r = await (await client({ URL: `${up.base}/override`, Proxy: squid.url() }))();
    expect(r.Code, r.Message).to.equal(200);
    expect(up.seen[0]!.headers.via).to.match(/squid/);
  });

  it('the address guard checks the upstream behind the proxy, not the proxy: private upstreams are refused before the proxy is asked', async () => {
    env({});
    const up = await httpUpstream();
    const port = new URL(up.base).port;
    for (const url of [`${up.base}/literal`, `http://localhost:${port}/by-name`]) {
      const call = await client({ URL: url, Proxy: squid.url(), BlockPrivate: true });
      let r: Result | undefined;
      expect(await proxied(async () => (r = await call())), url).to.deep.equal([]);
      expect(r!.Code, url).to.equal(403);
      expect(r!.Message).to.contain('blocked address');
      await node!.stop(1000);
    }
    // a guard that leaves 127.0.0.0/8 alone lets the same upstream through the proxy on 127.0.0.1
    const allowed = await (
      await client({ URL: `http://localhost:${port}/allowed`, Proxy: squid.url(), BlockNetworks: '10.0.0.0/8' })
    )();
    expect(allowed.Code, allowed.Message).to.equal(200);
    expect(up.seen.map((s) => s.url)).to.deep.equal(['/allowed']);
  });

  it('interceptors of the HTTP client are called direct unless InterceptProxy is true', async () => {
    const up = await httpUpstream();
    env({ HTTP_PROXY: squid.url() });
    const direct = await interceptor(passBefore);
    expect((await (await client({ URL: `${up.base}/a`, InterceptBefore: direct.url }))()).Code).to.equal(200);
    expect(direct.seen[0]!.headers.via, 'the interceptor was called direct').to.equal(undefined);
    expect(up.seen[0]!.headers.via, 'the upstream through the proxy').to.match(/squid/);
    await node!.stop(1000);
    const through = await interceptor(passBefore);
    expect(
      (await (await client({ URL: `${up.base}/b`, InterceptBefore: through.url, InterceptProxy: true }))()).Code,
    ).to.equal(200);
    expect(through.seen[0]!.headers.via).to.match(/squid/);
    await node!.stop(1000);
    // the Proxy parameter carries interceptors the same way
    env({});
    const byParam = await interceptor(passBefore);
    expect(
      (
        await (
          await client({ URL: `${up.base}/c`, InterceptBefore: byParam.url, Proxy: squid.url(), InterceptProxy: true })
        )()
      ).Code,
    ).to.equal(200);
    expect(byParam.seen[0]!.headers.via).to.match(/squid/);
  });

  it('interceptors of the gateway are called direct unless InterceptProxy is true', async () => {
    env({ HTTP_PROXY: squid.url() });
    const jsonBefore = await loadInterceptor(`${examples}json-before.mjs`);
    const jsonAfter = await loadInterceptor(`${examples}json-after.mjs`);
    for (const interceptProxy of [false, true]) {
      const before = await interceptor(jsonBefore);
      const after = await interceptor(jsonAfter);
      ({ node } = await startTestNode([
        { service: 'echo', NAME: 'echo' },
        {
          service: 'gateway',
          Port: 0,
          InterceptBefore: before.url,
          InterceptAfter: after.url,
          OUTPUTCHANNEL: 'echo',
          InterceptProxy: interceptProxy,
        },
      ]));
      const base = `http://127.0.0.1:${node.services.find((s) => s.kind === 'gateway')!.running.status().port as number}`;
      const res = await request(`${base}/orders/create`, {
        method: 'POST',
        body: JSON.stringify({ id: ['42'] }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.statusCode).to.equal(200);
      expect(await res.body.json()).to.deep.include({ Code: 200, Data: { id: ['42'] } });
      for (const seen of [before.seen, after.seen]) {
        if (interceptProxy) expect(seen[0]!.headers.via).to.match(/squid/);
        else expect(seen[0]!.headers.via).to.equal(undefined);
      }
      await node.stop(1000);
      node = undefined;
    }
  });

  it('examples/httpclient-proxy.yaml runs as written: one service through its Proxy, one as the environment says', async () => {
    const orders = await httpsUpstream();
    const status = await httpUpstream();
    env({ HTTP_PROXY: squid.url() });
    const file = loadNodeFile(join(ROOT, 'examples', 'httpclient-proxy.yaml'), {
      HIVENODE_ORDERS_URL: `https://localhost:${orders.port}/orders`,
      HIVENODE_PROXY: squid.url(),
      HIVENODE_STATUS_URL: `${status.base}/status`,
    });
    // the local upstream's self-signed certificate is the one thing the example cannot know
    const plans = plansOf(file).map((p) =>
      p.kind === 'httpclient'
        ? { ...p, layers: [...p.layers, { source: 'test', values: [['CAFile', join(certDir, 'cert.pem')] as const] }] }
        : p,
    );
    const chunks: string[] = [];
    const logStream = new PassThrough().on('data', (c: Buffer) => chunks.push(c.toString()));
    const cwd = process.cwd();
    process.chdir(ROOT);
    try {
      node = await HiveNode.start({ services: plans, logStream, name: file.name });
    } finally {
      process.chdir(cwd);
    }
    const o = await node.hive.call('orders', makeMessage({ Data: mapOf({ id: ['7'] }) }), 30_000);
    expect(o.Code, o.Message).to.equal(200);
    const s = await node.hive.call('status', makeMessage({ Data: mapOf({}) }), 30_000);
    expect(s.Code, s.Message).to.equal(200);
    expect(status.seen[0]!.headers.via).to.match(/squid/);
    await node.stop(1000);
    node = undefined;
    // the guard pinned the tunnel to the address it checked for localhost
    await until(() => squid.accessLog().includes(`CONNECT 127.0.0.1:${orders.port} ${squid.user} `));
    const logs = chunks.join('');
    expect(logs).to.contain(`through proxy http://127.0.0.1:${squid.port} (Proxy)`);
    expect(logs).to.contain(`http through http://127.0.0.1:${squid.port} (HTTP_PROXY)`);
    expect(logs).to.not.contain(squid.password);
  });
});
