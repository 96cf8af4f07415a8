import { expect } from 'chai';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InterceptorFunction, RunningInterceptor } from '../../actors/interceptor/server.js';
import { serveInterceptor } from '../../actors/interceptor/server.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import type { Result } from '../../protocol/message.js';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from './helpers.js';

/**
 * A local upstream answering `/<status>` with that status (Retry-After: 0, so retries come at once),
 * `/big` with a body over the client's cap, `/drop` by closing the connection without an answer, and
 * counting the requests per path.
 */
async function statusUpstream(): Promise<{ server: Server; base: string; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      if (path === '/drop') {
        req.socket.destroy();
        return;
      }
      if (path === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(4096, 97));
        return;
      }
      res
        .writeHead(Number(path.slice(1)), { 'content-type': 'text/plain', 'retry-after': '0' })
        .end(`answered ${path.slice(1)}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

describe('HTTP client retries follow the retry classification (protocol/codes.ts)', function () {
  this.timeout(20_000);
  let node: HiveNode | undefined;
  let up: Awaited<ReturnType<typeof statusUpstream>>;
  let before: RunningInterceptor;
  beforeEach(async () => {
    up = await statusUpstream();
    // the before interceptor sends each message to the path and with the method its Data names
    const route: InterceptorFunction = (_t, value) => {
      const data = (value as { Data: { path: string[]; method: string[] } }).Data;
      return {
        data: null,
        status: 'OK',
        status_code: 200,
        options: { url: `${up.base}/${data.path[0]}`, method: data.method[0] },
      };
    };
    before = await serveInterceptor(route, 0);
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    await before.close();
    up.server.closeAllConnections();
    await new Promise<void>((r) => up.server.close(() => r()));
  });

  const client = async (
    params: Record<string, string | number> = {},
  ): Promise<(path: string, method?: string) => Promise<Result>> => {
    ({ node } = await startTestNode([
      {
        service: 'httpclient',
        NAME: 'web',
        Retries: 2,
        InterceptBefore: `http://127.0.0.1:${before.port}/`,
        ...params,
      },
    ]));
    return (path, method = 'GET') =>
      node!.hive.call('web', makeMessage({ Data: mapOf({ path: [path], method: [method] }) }), 10_000);
  };

  it("a caller's fault (400, 403, 404, 409, 422) is answered at once, not retried", async () => {
    const call = await client();
    for (const status of [400, 403, 404, 409, 422]) {
      const r = await call(String(status));
      expect(r.Data.status, String(status)).to.deep.equal([String(status)]);
      expect(up.hits.get(`/${status}`), `requests for ${status}`).to.equal(1);
    }
  });

  it('a retryable status (408, 429, 500, 502, 503, 504, 507) is retried Retries times for an idempotent method', async () => {
    const call = await client();
    for (const status of [408, 429, 500, 502, 503, 504, 507]) {
      const r = await call(String(status));
      expect(r.Data.status, String(status)).to.deep.equal([String(status)]);
      expect(up.hits.get(`/${status}`), `requests for ${status}`).to.equal(3);
    }
  });

  it('a retryable status is not retried for a method that is not idempotent (POST)', async () => {
    const call = await client();
    const r = await call('503', 'POST');
    expect(r.Data.status).to.deep.equal(['503']);
    expect(up.hits.get('/503')).to.equal(1);
  });

  it('a connection failure (502) is retried; a retry whose wait would pass the deadline is not made, the failure is answered', async () => {
    const call = await client();
    const r = await call('drop');
    expect(r.Code).to.equal(502);
    expect(up.hits.get('/drop')).to.equal(3);
    await node!.stop(1000);
    // the first retry waits 400 ms, the second 800 ms: only the first fits in 1 s
    const short = await client({ Timeout: '1s' });
    up.hits.clear();
    const s = await short('drop');
    expect(s.Code, s.Message).to.equal(502);
    expect(s.Message).to.contain('failed');
    expect(up.hits.get('/drop')).to.be.within(1, 2);
  });

  it('a response over MaxResponseBytes is final (502), not fetched again', async () => {
    const call = await client({ MaxResponseBytes: 1024 });
    const r = await call('big');
    expect(r.Code).to.equal(502);
    expect(r.Message).to.contain('larger than 1024 bytes');
    expect(up.hits.get('/big')).to.equal(1);
  });
});
