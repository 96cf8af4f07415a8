import { expect } from 'chai';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InterceptorFunction, RunningInterceptor } from '../../actors/interceptor/server.js';
import { serveInterceptor } from '../../actors/interceptor/server.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import type { Result } from '../../protocol/message.js';
import type { HiveNode } from '../../node/node.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestNode } from './helpers.js';
import { tempDir } from '../temp.js';

type Seen = { method: string; url: string; headers: IncomingMessage['headers']; body: string };

/** A local upstream with one route per behaviour under test. */
async function upstream(
  host = '127.0.0.1',
  redirectTarget?: () => string,
): Promise<{ server: Server; base: string; seen: Seen[]; hits: Map<string, number> }> {
  const seen: Seen[] = [];
  const hits = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      switch (path) {
        case '/json':
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, n: 1 }));
          return;
        case '/text':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('plain answer');
          return;
        case '/xml':
          res.writeHead(200, { 'content-type': 'application/xml' }).end('<a>1</a>');
          return;
        case '/none':
          res.removeHeader('content-type');
          res.writeHead(200).end('no type');
          return;
        case '/binary':
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 2]));
          return;
        case '/missing':
          res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here');
          return;
        case '/broken':
          res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream fault');
          return;
        case '/refuse-busy':
          res.writeHead(429, { 'content-type': 'text/plain' }).end('slow down');
          return;
        case '/slow':
          return; // never answers
        case '/endless': {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = Buffer.alloc(64 * 1024, 97);
          const pump = (): void => {
            while (!res.destroyed && res.write(chunk));
            if (!res.destroyed) res.once('drain', pump);
          };
          pump();
          return;
        }
        case '/loop':
          res.writeHead(302, { location: '/loop' }).end();
          return;
        case '/away':
          res.writeHead(302, { location: redirectTarget!() }).end();
          return;
        case '/busy':
          if ((hits.get(path) ?? 0) === 1) res.writeHead(429, { 'retry-after': '1' }).end('busy');
          else res.writeHead(200, { 'content-type': 'text/plain' }).end('now');
          return;
        default:
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  return { server, base: `http://${host}:${(server.address() as AddressInfo).port}`, seen, hits };
}

describe('HTTP client service', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    await Promise.all(closers.splice(0).map((c) => c()));
  });

  const serveUp = async (host?: string, target?: () => string) => {
    const u = await upstream(host, target);
    closers.push(
      () =>
        new Promise<void>((r) => {
          u.server.closeAllConnections();
          u.server.close(() => r());
        }),
    );
    return u;
  };
  const serveFn = async (fn: InterceptorFunction): Promise<string> => {
    const s: RunningInterceptor = await serveInterceptor(fn, 0);
    closers.push(() => s.close());
    return `http://127.0.0.1:${s.port}/`;
  };
  const passBefore: InterceptorFunction = (_t, value) => ({
    data: (value as { Data: unknown }).Data,
    status: 'OK',
    status_code: 200,
  });
  const client = async (
    params: Record<string, string | number | boolean>,
  ): Promise<(data?: Record<string, string[]>) => Promise<Result>> => {
    ({ node } = await startTestNode([{ service: 'httpclient', NAME: 'web', ...params }]));
    return (data = {}) => node!.hive.call('web', makeMessage({ Data: mapOf(data) }), 20_000);
  };

  it('sends the before interceptor body and returns status, body and headers without an after interceptor', async () => {
    const up = await serveUp();
    const call = await client({
      URL: `${up.base}/echo`,
      Method: 'PUT',
      InterceptBefore: await serveFn(passBefore),
      Headers: 'X-Api: k1\r\nX-Two: 2',
    });
    const r = await call({ name: ['x'] });
    expect(r.Code).to.equal(200);
    const echoed = JSON.parse(r.Data.body![0]!) as { method: string; headers: Record<string, string>; body: string };
    expect(echoed.method).to.equal('PUT');
    expect(JSON.parse(echoed.body)).to.deep.equal({ name: ['x'] });
    expect(echoed.headers['content-type']).to.equal('application/json');
    expect(echoed.headers['x-api']).to.equal('k1');
    expect(r.Data.status).to.deep.equal(['200']);
    expect(r.Data['header_content-type']).to.deep.equal(['application/json']);
  });

  it('types the response for the after interceptor: json, text (text and XML), no Content-Type as text, raw', async () => {
    const up = await serveUp();
    const types: string[] = [];
    const after = await serveFn((type, value, options) => {
      types.push(type);
      return {
        data: {
          Code: 200,
          Message: 'mapped',
          Data: {
            type: [type],
            value: [typeof value === 'string' ? value : JSON.stringify(value)],
            status: [options.http_response_status_code!],
          },
        },
        status: 'OK',
        status_code: 200,
      };
    });
    const before = await serveFn((_t, value) => ({
      data: null,
      status: 'OK',
      status_code: 200,
      options: { url: `${up.base}/${(value as { Data: { path: string[] } }).Data.path[0]}`, method: 'GET' },
    }));
    const call = await client({ InterceptBefore: before, InterceptAfter: after });
    expect((await call({ path: ['json'] })).Data.value).to.deep.equal(['{"ok":true,"n":1}']);
    expect((await call({ path: ['text'] })).Data.value).to.deep.equal(['plain answer']);
    expect((await call({ path: ['xml'] })).Data.value).to.deep.equal(['<a>1</a>']);
    expect((await call({ path: ['none'] })).Data.value).to.deep.equal(['no type']);
    await call({ path: ['binary'] });
    expect(types).to.deep.equal(['json', 'text', 'text', 'text', 'raw']);
  });

  it('without an after interceptor other raw types are 400 Not supported raw types; an upstream 5xx is 502, an upstream 4xx keeps its status (final, not retried), both with the response', async () => {
    const up = await serveUp();
    const before = await serveFn((_t, value) => ({
      data: null,
      status: 'OK',
      status_code: 200,
      options: { url: `${up.base}/${(value as { Data: { path: string[] } }).Data.path[0]}`, method: 'GET' },
    }));
    const call = await client({ InterceptBefore: before });
    const raw = await call({ path: ['binary'] });
    expect(raw).to.deep.include({ Code: 400, Message: 'Not supported raw types' });
    const missing = await call({ path: ['missing'] });
    // the caller's fault as the upstream saw it: a queue with RetryOn retryable must not spend attempts on it
    expect(missing).to.deep.include({ Code: 404, Message: 'upstream answered 404 Not Found' });
    expect(missing.Data.status).to.deep.equal(['404']);
    expect(missing.Data.body).to.deep.equal(['nothing here']);
    const broken = await call({ path: ['broken'] });
    expect(broken.Code).to.equal(502);
    expect(broken.Data.status).to.deep.equal(['500']);
    // 429 says "later", as 408 and 425 do: kept, and retryable
    expect((await call({ path: ['refuse-busy'] })).Code).to.equal(429);
  });

  it('the before interceptor overrides method, URL, content type and headers; the after sees the issued request', async () => {
    const up = await serveUp();
    let afterOptions: Record<string, string> = {};
    const before = await serveFn((_t, _v, options) => {
      const headers = JSON.parse(options.headers!) as Record<string, string[]>;
      headers['x-added'] = ['yes'];
      return {
        data: '<xml/>',
        status: 'OK',
        status_code: 200,
        options: {
          method: 'PATCH',
          url: `${up.base}/echo?q=1`,
          content_type: 'application/xml',
          headers: JSON.stringify(headers),
        },
      };
    });
    const after = await serveFn((_t, value, options) => {
      afterOptions = options;
      return {
        data: { Code: 201, Message: 'made', Data: { got: [JSON.stringify(value)] } },
        status: 'OK',
        status_code: 200,
      };
    });
    const call = await client({
      URL: `${up.base}/unused`,
      Method: 'POST',
      InterceptBefore: before,
      InterceptAfter: after,
      Headers: 'Authorization: Bearer secret',
    });
    const r = await call({ a: ['1'] });
    expect(r).to.deep.include({ Code: 201, Message: 'made' });
    const seen = up.seen.at(-1)!;
    expect(seen.method).to.equal('PATCH');
    expect(seen.url).to.equal('/echo?q=1');
    expect(seen.headers['content-type']).to.equal('application/xml');
    expect(seen.headers['x-added']).to.equal('yes');
    expect(seen.body).to.equal('<xml/>');
    expect(JSON.parse(afterOptions.http_request!)).to.deep.include({ method: 'PATCH' });
    expect(afterOptions.http_request).to.not.contain('secret');
    expect(afterOptions.http_response_status_code).to.equal('200');
    expect(afterOptions.http_response_status).to.equal('200 OK');
    expect(JSON.parse(afterOptions.http_response_headers!)).to.have.property('content-type');
  });

  it('a before status outside 2xx stops the flow: no request is made', async () => {
    const up = await serveUp();
    const call = await client({
      URL: `${up.base}/echo`,
      InterceptBefore: await serveFn(() => ({ data: null, status: 'Empty payload', status_code: 400 })),
    });
    const r = await call({});
    expect(r).to.deep.include({ Code: 400, Message: 'Empty payload' });
    expect(up.seen).to.have.length(0);
  });

  it('a server that never answers is cut at the deadline (504); an endless body at the cap (502)', async () => {
    const up = await serveUp();
    const slow = await client({
      URL: `${up.base}/slow`,
      Method: 'POST',
      Timeout: '500ms',
      InterceptBefore: await serveFn(passBefore),
    });
    const started = Date.now();
    const r = await slow({});
    expect(r.Code).to.equal(504);
    expect(Date.now() - started, 'cut at the 500 ms Timeout').to.be.within(500, 5000);
    await node!.stop(1000);
    const endless = await client({
      URL: `${up.base}/endless`,
      Method: 'GET',
      MaxResponseBytes: 1_000_000,
      InterceptBefore: await serveFn(passBefore),
    });
    const e = await endless({});
    expect(e.Code).to.equal(502);
    expect(e.Message).to.contain('larger than 1000000 bytes');
  });

  it('a redirect loop ends after MaxRedirects with 502; Retry-After is honoured for idempotent methods', async () => {
    const up = await serveUp();
    const loop = await client({ URL: `${up.base}/loop`, Method: 'GET', InterceptBefore: await serveFn(passBefore) });
    const r = await loop({});
    expect(r.Code).to.equal(502);
    expect(r.Message).to.contain('too many redirects (more than 5)');
    expect(up.hits.get('/loop')).to.equal(6);
    await node!.stop(1000);
    const busy = await client({ URL: `${up.base}/busy`, Method: 'GET', InterceptBefore: await serveFn(passBefore) });
    const started = Date.now();
    const b = await busy({});
    expect(b.Code).to.equal(200);
    expect(b.Data.body).to.deep.equal(['now']);
    expect(Date.now() - started).to.be.within(900, 5000);
  });

  it('blocks private addresses on the resolved address, also after a redirect; drops Authorization across origins', async () => {
    let other = '';
    const far = await serveUp('127.0.0.2');
    other = far.base;
    const up = await serveUp('127.0.0.1', () => `${other}/echo`);
    const blocked = await client({
      URL: `${up.base}/json`,
      Method: 'GET',
      BlockPrivate: true,
      InterceptBefore: await serveFn(passBefore),
    });
    expect((await blocked({})).Code).to.equal(403);
    await node!.stop(1000);
    const byName = await client({
      URL: `http://localhost:${new URL(up.base).port}/json`,
      Method: 'GET',
      BlockPrivate: true,
      InterceptBefore: await serveFn(passBefore),
    });
    const n = await byName({});
    expect(n.Code).to.equal(403);
    expect(n.Message).to.contain('blocked address');
    await node!.stop(1000);
    const redirected = await client({
      URL: `${up.base}/away`,
      Method: 'GET',
      BlockNetworks: '127.0.0.2/32',
      InterceptBefore: await serveFn(passBefore),
    });
    expect((await redirected({})).Code).to.equal(403);
    expect(far.seen).to.have.length(0);
    await node!.stop(1000);
    const cross = await client({
      URL: `${up.base}/away`,
      Method: 'GET',
      Headers: 'Authorization: Bearer secret\r\nX-Keep: 1',
      InterceptBefore: await serveFn(passBefore),
    });
    const c = await cross({});
    expect(c.Code).to.equal(200);
    expect(far.seen[0]!.headers.authorization).to.equal(undefined);
    expect(far.seen[0]!.headers['x-keep']).to.equal('1');
  });

  it('refuses to start without any interceptor, or with a URL that is not http(s)', async () => {
    const err = await startTestNode([{ service: 'httpclient', URL: 'http://127.0.0.1:1/' }]).catch((e: unknown) => e);
    expect((err as Error).message).to.contain('needs at least one interceptor');
    const ftp = await startTestNode([
      { service: 'httpclient', URL: 'ftp://127.0.0.1/x', InterceptBefore: 'http://127.0.0.1:1/' },
    ]).catch((e: unknown) => e);
    expect((ftp as Error).message).to.contain('only http and https URLs are accepted, not ftp:');
  });

  it('an after interceptor that cannot be loaded stops the start in one line naming it (the before one and the pools are closed again)', async () => {
    const err = await startTestNode([
      {
        service: 'httpclient',
        URL: 'http://127.0.0.1:1/',
        InterceptBefore: 'http://127.0.0.1:1/',
        InterceptAfter: 'module:///nonexistent/after.mjs',
      },
    ]).catch((e: unknown) => e);
    expect((err as Error).message).to.match(/InterceptAfter/);
    expect((err as Error).message).to.not.contain('\n');
  });

  it('a bad Proxy stops the start with one line naming it; a malformed proxy variable is warned about once and requests go direct', async () => {
    const err = await startTestNode([
      { service: 'httpclient', Proxy: 'socks5://u:pw@proxy.test:1080', InterceptBefore: 'http://127.0.0.1:1/' },
    ]).catch((e: unknown) => e);
    expect((err as Error).message).to.contain(
      "Proxy: 'socks5://***@proxy.test:1080' is not an http:// or https:// URL",
    );
    expect((err as Error).message)
      .to.not.contain('pw')
      .and.not.contain('\n');
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = 'ftp://u:pw@proxy.test:21';
    try {
      const up = await serveUp();
      let logs: () => string;
      ({ node, logs } = await startTestNode([
        {
          service: 'httpclient',
          NAME: 'web',
          URL: `${up.base}/json`,
          Method: 'GET',
          InterceptBefore: await serveFn(passBefore),
        },
      ]));
      const r = await node.hive.call('web', makeMessage({ Data: mapOf({}) }), 20_000);
      expect(r.Code, r.Message).to.equal(200);
      const warnings = logs()
        .split('\n')
        .filter((l) => l.includes('HTTP_PROXY'));
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.contain(
        "HTTP_PROXY: 'ftp://***@proxy.test:21' is not an http:// or https:// URL; ignored, requests go direct",
      );
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
    }
  });

  describe('in-process interceptors (module://)', () => {
    const moduleOf = (source: string): string => {
      const file = join(tempDir('hn-intercept-'), 'interceptor.mjs');
      writeFileSync(file, source);
      return `module://${file}`;
    };

    it('a synchronous and an asynchronous function map the message; neither can change the caller’s message', async () => {
      const up = await serveUp();
      const sync = moduleOf(
        'export default (type, value) => { value.Data.name.push("changed"); return { data: value.Data, status: "OK", status_code: 200 }; };',
      );
      await client({ URL: `${up.base}/echo`, InterceptBefore: sync });
      const message = makeMessage({ Data: mapOf({ name: ['x'] }) });
      const r = await node!.hive.call('web', message, 20_000);
      expect(r.Code).to.equal(200);
      expect(JSON.parse(up.seen[0]!.body)).to.deep.equal({ name: ['x', 'changed'] });
      expect(message.Data.name, 'the caller’s message').to.deep.equal(['x']);
      await node!.stop(1000);
      const later = moduleOf(
        'export default async (type, value) => { await new Promise((r) => setTimeout(r, 20)); return { data: { later: [value.Data.n[0]] }, status: "OK", status_code: 200 }; };',
      );
      const asyncCall = await client({ URL: `${up.base}/echo`, InterceptBefore: later });
      expect((await asyncCall({ n: ['7'] })).Code).to.equal(200);
      expect(JSON.parse(up.seen[1]!.body)).to.deep.equal({ later: ['7'] });
    });

    it('a function that never answers is cut at the deadline (504); one that throws or returns no reply is 502 naming it', async () => {
      const up = await serveUp();
      const never = await client({
        URL: `${up.base}/echo`,
        Timeout: '300ms',
        InterceptBefore: moduleOf('export default () => new Promise(() => {});'),
      });
      const started = Date.now();
      const r = await never({});
      expect(r.Code).to.equal(504);
      expect(r.Message).to.contain('did not answer within');
      expect(Date.now() - started, 'cut at the 300 ms Timeout').to.be.within(300, 3000);
      await node!.stop(1000);
      const throwing = moduleOf('export default () => { throw new Error("mapping broke"); };');
      const t = await (await client({ URL: `${up.base}/echo`, InterceptBefore: throwing }))({});
      expect(t.Code).to.equal(502);
      expect(t.Message).to.contain('mapping broke').and.to.contain(throwing);
      await node!.stop(1000);
      const rejecting = await (
        await client({
          URL: `${up.base}/echo`,
          InterceptBefore: moduleOf('export default async () => { throw new Error("async broke"); };'),
        })
      )({});
      expect(rejecting.Code).to.equal(502);
      expect(rejecting.Message).to.contain('async broke');
      await node!.stop(1000);
      const malformed = await (
        await client({ URL: `${up.base}/echo`, InterceptBefore: moduleOf('export default () => 42;') })
      )({});
      expect(malformed.Code).to.equal(502);
      expect(malformed.Message).to.contain('must be an object');
      expect(up.seen, 'no request was made').to.have.length(0);
    });
  });
});
