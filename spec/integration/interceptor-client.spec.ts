import { expect } from 'chai';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InterceptorClient } from '../../actors/interceptor/client.js';
import { TimeoutError, UpstreamError } from '../../protocol/errors.js';

/** An interceptor service that misbehaves by path. */
async function misbehaving(): Promise<{ server: Server; base: string }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      switch (req.url) {
        case '/silent':
          return; // never answers
        case '/huge': {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(Buffer.alloc(17 * 1024 * 1024, 32));
          return;
        }
        case '/broken':
          res.writeHead(500).end('oops');
          return;
        case '/notjson':
          res.writeHead(200).end('<html>');
          return;
        default:
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ data: { ok: true }, status: 'OK', status_code: 200 }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('interceptor client (HTTP interceptor services)', () => {
  let up: { server: Server; base: string };
  const clients: InterceptorClient[] = [];
  before(async () => {
    up = await misbehaving();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    up.server.closeAllConnections();
    up.server.close();
  });
  const client = (path: string): InterceptorClient => {
    const c = new InterceptorClient(`${up.base}${path}`);
    clients.push(c);
    return c;
  };
  const request = { type: 'json', value: { a: 1 }, options: {} };

  it('answers with the validated reply', async () => {
    expect(await client('/ok').call(request, Date.now() + 5000)).to.deep.include({
      data: { ok: true },
      status: 'OK',
      status_code: 200,
    });
  });

  it('an interceptor that never answers is cut at the deadline with a TimeoutError (504), and the next call still works', async () => {
    const silent = client('/silent');
    const started = Date.now();
    const e = await silent.call(request, Date.now() + 200).catch((x: unknown) => x);
    expect(e).to.be.instanceOf(TimeoutError);
    expect((e as TimeoutError).message).to.contain('did not answer within');
    expect(Date.now() - started).to.be.within(190, 1500);
    expect((await client('/ok').call(request, Date.now() + 5000)).status_code).to.equal(200);
  });

  it('a reply over 16 MB, an HTTP error and a reply that is not JSON are UpstreamErrors (502) naming the problem', async () => {
    const huge = await client('/huge')
      .call(request, Date.now() + 10_000)
      .catch((x: unknown) => x);
    expect(huge).to.be.instanceOf(UpstreamError);
    expect((huge as Error).message).to.contain('more than 16777216 bytes');
    const broken = await client('/broken')
      .call(request, Date.now() + 5000)
      .catch((x: unknown) => x);
    expect((broken as Error).message).to.contain('answered HTTP 500');
    const notJson = await client('/notjson')
      .call(request, Date.now() + 5000)
      .catch((x: unknown) => x);
    expect((notJson as Error).message).to.contain('not JSON');
  });
});
