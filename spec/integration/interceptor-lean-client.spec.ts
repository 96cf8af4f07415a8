import { expect } from 'chai';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import type { Server as NetServer } from 'node:net';
import { InterceptorClient } from '../../actors/interceptor/client.js';
import { TimeoutError, UpstreamError } from '../../protocol/errors.js';
import { sleep } from '../support/wait.js';

/**
 * The lean HTTP/1.1 client (actors/interceptor/lean-client.ts) against servers that are not ours:
 * node:http answering every way a conformant server may, and raw sockets answering what node:http
 * never would (HTTP/1.0, a malformed status line, bytes cut off). Every failure is typed as the
 * undici client typed it, and the client works on after each.
 */
const OK = JSON.stringify({ data: { ok: true }, status: 'OK', status_code: 200 });
const request = { type: 'json', value: { a: 1 }, options: {} };

async function listen<S extends Server | NetServer>(server: S): Promise<{ server: S; base: string }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A raw server answering each connection's first request with `reply` (bytes as they go on the wire). */
async function rawServer(reply: (socket: Socket, head: string) => void): Promise<{ server: NetServer; base: string }> {
  const server = createNetServer((socket) => {
    let got = '';
    socket.on('error', () => undefined);
    socket.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? 0);
      if (got.length < end + 4 + length) return;
      const head = got.slice(0, end);
      got = got.slice(end + 4 + length);
      reply(socket, head);
    });
  });
  return listen(server);
}

describe('lean interceptor client (plain http:// services)', () => {
  let up: { server: Server; base: string };
  const clients: InterceptorClient[] = [];
  const raws: NetServer[] = [];
  let seen: IncomingMessage[] = [];
  let overlapped = false;

  before(async () => {
    up = await listen(
      createServer((req: IncomingMessage, res: ServerResponse) => {
        seen.push(req);
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          switch (req.url) {
            case '/echo': {
              // the value it was sent, so pipelined replies can be told apart
              const value = (JSON.parse(body) as { value: unknown }).value;
              const text = JSON.stringify({ data: value, status: 'OK', status_code: 200 });
              const delay = (value as { delay?: number } | null)?.delay ?? Math.random() * 5;
              // the word the kit says: pipelined requests are answered (node:http answers them in order)
              setTimeout(
                () => res.writeHead(200, { 'content-type': 'application/json', 'hivenode-pipelining': '1' }).end(text),
                delay,
              );
              return;
            }
            case '/one-at-a-time': {
              // a server that does not say it takes pipelined requests: it sees one at a time per connection
              const socket = req.socket as typeof req.socket & { busy?: boolean };
              if (socket.busy) overlapped = true;
              socket.busy = true;
              setTimeout(() => {
                socket.busy = false;
                res.writeHead(200, { 'content-type': 'application/json' }).end(OK);
              }, Math.random() * 5);
              return;
            }
            case '/chunked':
              // no length: node:http frames it chunked, here in three chunks
              res.writeHead(200, { 'content-type': 'application/json' });
              res.write(OK.slice(0, 5));
              setTimeout(() => {
                res.write(OK.slice(5, 20));
                res.end(OK.slice(20));
              }, 5);
              return;
            case '/close':
              res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(OK);
              return;
            case '/continue':
              res.writeContinue();
              res.writeProcessing();
              res.writeHead(200, { 'content-type': 'application/json' }).end(OK);
              return;
            case '/slow':
              setTimeout(() => res.writeHead(200).end(OK), 1500);
              return;
            case '/reset':
              res.writeHead(200, { 'content-length': 500 });
              res.write(OK.slice(0, 10));
              setTimeout(() => req.socket.destroy(), 10);
              return;
            case '/huge-chunked':
              res.writeHead(200, { 'content-type': 'application/json' });
              for (let i = 0; i < 17; i++) res.write(Buffer.alloc(1024 * 1024, 32));
              res.end();
              return;
            default:
              res
                .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(OK) })
                .end(OK);
          }
        });
      }),
    );
  });
  beforeEach(() => {
    seen = [];
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    up.server.closeAllConnections();
    up.server.close();
    for (const s of raws) s.close();
  });
  const client = (url: string, connections = 64): InterceptorClient => {
    const c = new InterceptorClient(url, connections);
    clients.push(c);
    return c;
  };
  const raw = async (reply: (socket: Socket, head: string) => void): Promise<string> => {
    const r = await rawServer(reply);
    raws.push(r.server);
    return r.base;
  };
  const failure = (p: Promise<unknown>): Promise<Error> =>
    p.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as Error,
    );

  it('reads content-length, chunked, Connection: close and 1xx-preceded replies, and sends the trace headers', async () => {
    for (const path of ['/length', '/chunked', '/close', '/continue']) {
      const reply = await client(`${up.base}${path}`).call(request, Date.now() + 5000, {
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'a=b',
      });
      expect(reply, path).to.deep.include({ data: { ok: true }, status: 'OK', status_code: 200 });
    }
    expect(
      seen.map((r) => [r.method, r.headers['content-type'], r.headers.traceparent, r.headers.tracestate]),
    ).to.deep.equal(
      Array(4).fill(['POST', 'application/json', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'a=b']),
    );
  });

  it('a reply with Connection: close closes the connection; the next call opens a new one', async () => {
    const c = client(`${up.base}/close`);
    await c.call(request, Date.now() + 5000);
    await c.call(request, Date.now() + 5000);
    expect(seen[0]!.socket).to.not.equal(seen[1]!.socket);
    const keep = client(`${up.base}/length`);
    await keep.call(request, Date.now() + 5000);
    await keep.call(request, Date.now() + 5000);
    expect(seen[2]!.socket).to.equal(seen[3]!.socket);
  });

  it('many calls at once, pipelined on few connections, each get their own reply', async () => {
    const c = client(`${up.base}/echo`, 2);
    // a first round opens the connections and learns that they keep alive; the second pipelines
    for (let round = 0; round < 2; round++) {
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => c.call({ ...request, value: { i } }, Date.now() + 5000)),
      );
      expect(replies.map((r) => (r.data as { i: number }).i)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i));
    }
    expect(new Set(seen.map((r) => r.socket)).size).to.be.at.most(2);
  });

  it('a server that does not answer `hivenode-pipelining: 1` gets one request at a time on each connection', async () => {
    const c = client(`${up.base}/one-at-a-time`, 2);
    for (let round = 0; round < 2; round++) {
      const replies = await Promise.all(Array.from({ length: 20 }, () => c.call(request, Date.now() + 5000)));
      expect(replies.every((r) => r.status_code === 200)).to.equal(true);
    }
    expect(overlapped).to.equal(false);
    expect(new Set(seen.map((r) => r.socket)).size).to.be.at.most(2);
  });

  it('an idle connection is given up before the server’s Keep-Alive timeout, and one the server closed is not used', async () => {
    const short = await listen(
      createServer((req, res) => {
        seen.push(req);
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(OK));
      }),
    );
    // node:http says `Keep-Alive: timeout=1`: the client keeps the connection idle half of that
    short.server.keepAliveTimeout = 1000;
    const c = client(`${short.base}/`);
    await c.call(request, Date.now() + 5000);
    await c.call(request, Date.now() + 5000);
    await sleep(700);
    await c.call(request, Date.now() + 5000);
    expect(seen[0]!.socket).to.equal(seen[1]!.socket);
    expect(seen[2]!.socket).to.not.equal(seen[1]!.socket);
    // a server that closes idle connections without saying when: the close is seen, the next call goes on a new one
    let connections = 0;
    const closing = await raw((socket) => {
      connections++;
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${OK.length}\r\n\r\n${OK}`);
      setTimeout(() => socket.end(), 50);
    });
    const d = client(`${closing}/`);
    await d.call(request, Date.now() + 5000);
    await sleep(200);
    expect((await d.call(request, Date.now() + 5000)).status_code).to.equal(200);
    expect(connections).to.equal(2);
    short.server.closeAllConnections();
    short.server.close();
  });

  it('a pipelined call that times out is answered 504 alone: the call behind it on the connection gets its reply', async () => {
    const c = client(`${up.base}/echo`, 1);
    await c.call(request, Date.now() + 5000);
    const [slow, behind] = await Promise.allSettled([
      c.call({ ...request, value: { delay: 600 } }, Date.now() + 200),
      c.call({ ...request, value: { i: 2 } }, Date.now() + 5000),
    ]);
    expect(slow.status).to.equal('rejected');
    expect((slow as PromiseRejectedResult).reason).to.be.instanceOf(TimeoutError);
    expect(behind.status).to.equal('fulfilled');
    expect((behind as PromiseFulfilledResult<{ data: unknown }>).value.data).to.deep.equal({ i: 2 });
    expect(new Set(seen.map((r) => r.socket)).size).to.equal(1);
  });

  it('an HTTP/1.0 reply, with a length or running to the close, is read and its connection not reused', async () => {
    let connections = 0;
    const base = await raw((socket, head) => {
      if (head.startsWith('POST /counted')) connections++;
      const body = head.startsWith('POST /until-close')
        ? `HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n${OK}`
        : `HTTP/1.0 200 OK\r\nContent-Length: ${OK.length}\r\n\r\n${OK}`;
      socket.end(body);
    });
    expect((await client(`${base}/until-close`).call(request, Date.now() + 5000)).status_code).to.equal(200);
    const c = client(`${base}/counted`);
    await c.call(request, Date.now() + 5000);
    await c.call(request, Date.now() + 5000);
    expect(connections).to.equal(2);
  });

  it('an interceptor that is slow is cut at the deadline (TimeoutError, 504); the client calls on', async () => {
    const c = client(`${up.base}/slow`);
    const started = Date.now();
    const e = await failure(c.call(request, Date.now() + 200));
    expect(e).to.be.instanceOf(TimeoutError);
    expect(e.message).to.equal(
      `interceptor ${up.base}/slow did not answer within ${e.message.match(/within (\d+) ms/)![1]} ms`,
    );
    expect(Date.now() - started).to.be.within(190, 1000);
    expect((await client(`${up.base}/length`).call(request, Date.now() + 5000)).status_code).to.equal(200);
  });

  it('a connection reset mid-reply and a refused connection are UpstreamErrors (502); only the calls on it fail', async () => {
    const reset = await failure(client(`${up.base}/reset`).call(request, Date.now() + 5000));
    expect(reset).to.be.instanceOf(UpstreamError);
    expect(reset.message).to.match(
      /^interceptor .*\/reset (sent a malformed reply: the connection closed before the body was complete|failed: .*(ECONNRESET|closed))/,
    );
    const closed = await listen(createServer());
    closed.server.close();
    const refused = await failure(client(`${closed.base}/`).call(request, Date.now() + 5000));
    expect(refused).to.be.instanceOf(UpstreamError);
    expect(refused.message).to.match(/failed: .*ECONNREFUSED/);
  });

  it('pipelined calls behind a reply after which the server closes fail with 502, none is sent twice, and the client calls on', async () => {
    let requests = 0;
    let first = true;
    const base = await raw((socket) => {
      requests++;
      // the first connection: the first reply keeps alive (so calls pipeline), the second closes it
      if (first && requests === 1)
        return void socket.write(
          `HTTP/1.1 200 OK\r\nHivenode-Pipelining: 1\r\nContent-Length: ${OK.length}\r\n\r\n${OK}`,
        );
      if (first) {
        first = false;
        return void socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: ${OK.length}\r\n\r\n${OK}`);
      }
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${OK.length}\r\n\r\n${OK}`);
    });
    const c = client(`${base}/`, 1);
    await c.call(request, Date.now() + 5000);
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => c.call(request, Date.now() + 5000)));
    expect(results[0]!.status).to.equal('fulfilled');
    for (const r of results.slice(1)) {
      expect(r.status).to.equal('rejected');
      expect((r as PromiseRejectedResult).reason).to.be.instanceOf(UpstreamError);
      expect(((r as PromiseRejectedResult).reason as Error).message).to.contain(
        'closed by the server after an earlier reply',
      );
    }
    // the raw server answered 2 requests; the 3 rejected were written but never answered, nor resent
    expect(requests).to.equal(2);
    expect((await c.call(request, Date.now() + 5000)).status_code).to.equal(200);
  });

  it('a reply over 16 MiB, by its length or chunked, is a 502 naming the limit', async () => {
    const base = await raw((socket) => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${17 * 1024 * 1024}\r\n\r\n`));
    for (const url of [`${base}/`, `${up.base}/huge-chunked`]) {
      const e = await failure(client(url).call(request, Date.now() + 10_000));
      expect(e, url).to.be.instanceOf(UpstreamError);
      expect(e.message, url).to.contain('replied with more than 16777216 bytes');
    }
  });

  it('a malformed status line, header or chunk is a 502 naming the problem', async () => {
    const replies: Record<string, string> = {
      '/status': `HTTP/2 200 OK\r\nContent-Length: ${OK.length}\r\n\r\n${OK}`,
      '/header': `HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: ${OK.length}\r\n\r\n${OK}`,
      '/lengths': `HTTP/1.1 200 OK\r\nContent-Length: ${OK.length}\r\nContent-Length: 3\r\n\r\n${OK}`,
      '/chunk': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n${OK}\r\n0\r\n\r\n`,
      '/unasked': '',
    };
    const base = await raw((socket, head) => {
      const path = head.split(' ')[1]!;
      if (path === '/unasked') return void socket.end();
      socket.write(replies[path]!);
    });
    const expected: Record<string, RegExp> = {
      '/status': /malformed reply: a status line that is not HTTP\/1\.x: 'HTTP\/2 200 OK'/,
      '/header': /malformed reply: a header line without a name and colon/,
      '/lengths': /malformed reply: more than one Content-Length/,
      '/chunk': /malformed reply: a chunk size line that is not a hexadecimal size/,
      '/unasked': /malformed reply: the connection closed without a reply/,
    };
    for (const [path, pattern] of Object.entries(expected)) {
      const e = await failure(client(`${base}${path}`).call(request, Date.now() + 5000));
      expect(e, path).to.be.instanceOf(UpstreamError);
      expect(e.message, path).to.match(pattern);
    }
  });

  it('a trace header with a line break is refused, not written', async () => {
    const e = await failure(
      client(`${up.base}/length`).call(request, Date.now() + 5000, { traceparent: 'x\r\nevil: 1' }),
    );
    expect(e).to.be.instanceOf(UpstreamError);
    expect(e.message).to.contain('invalid traceparent header');
    expect(seen).to.have.length(0);
  });

  it('close() waits for the calls in flight and refuses new ones', async () => {
    const c = client(`${up.base}/echo`);
    const pending = c.call(request, Date.now() + 5000);
    await c.close();
    expect((await pending).status_code).to.equal(200);
    expect(await failure(c.call(request, Date.now() + 5000))).to.be.instanceOf(UpstreamError);
  });
});
