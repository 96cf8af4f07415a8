import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import type { HiveNode } from '../../node/node.js';
import { prng } from '../prng.js';
import { startTestNode } from './helpers.js';
import { recorded } from './queue/helpers.js';
import { tempDir } from '../temp.js';
import { sleep } from '../support/wait.js';

describe('gateway security and limits', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  let dir: string;
  let logs: () => string = () => '';
  beforeEach(() => {
    dir = tempDir('hn-gwsec-');
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });
  const start = async (
    gateway: Record<string, string | number | boolean>,
    echo: Record<string, string | number | boolean> = {},
  ): Promise<{ port: number; base: string }> => {
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'echo', RecordFile: join(dir, 'echo.jsonl'), ...echo },
      { service: 'gateway', NAME: 'gw', Port: 0, Strict: true, OUTPUTCHANNEL: 'echo', LOGLEVEL: 'trace', ...gateway },
    ]));
    const port = node.services.find((s) => s.kind === 'gateway')!.running.status().port as number;
    return { port, base: `http://127.0.0.1:${port}` };
  };
  /** Sends raw bytes and resolves with everything the server answered before closing (or 2 s). */
  const raw = (port: number, bytes: string): Promise<string> =>
    new Promise((resolve) => {
      const s: Socket = connect(port, '127.0.0.1');
      let got = '';
      s.on('data', (c: Buffer) => (got += c.toString()));
      s.on('error', () => resolve(got));
      s.on('close', () => resolve(got));
      s.on('connect', () => s.write(bytes));
      setTimeout(() => {
        s.destroy();
        resolve(got);
      }, 2000);
    });

  it('Basic auth: missing and wrong credentials get 401 with WWW-Authenticate; right ones pass; nothing secret is logged', async () => {
    writeFileSync(join(dir, 'users'), `${await passwdLine('alice', 'correct horse battery')}\n`);
    const { base } = await start({ Users: join(dir, 'users') });
    const none = await request(`${base}/a/b`, { method: 'POST', body: '{}' });
    expect(none.statusCode).to.equal(401);
    expect(none.headers['www-authenticate']).to.match(/^Basic realm=/);
    await none.body.dump();
    const header = (u: string, p: string): string => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
    for (const [u, p] of [
      ['alice', 'wrong'],
      ['mallory', 'correct horse battery'],
    ] as const) {
      const r = await request(`${base}/a/b`, { method: 'POST', body: '{}', headers: { authorization: header(u, p) } });
      expect(r.statusCode).to.equal(401);
      await r.body.dump();
    }
    for (let i = 0; i < 2; i++) {
      const ok = await request(`${base}/a/b`, {
        method: 'POST',
        body: '{"x":["1"]}',
        headers: { authorization: header('alice', 'correct horse battery') },
      });
      expect(ok.statusCode).to.equal(200);
      await ok.body.dump();
    }
    const bad = await request(`${base}/a/b/c/d`, {
      method: 'POST',
      body: '{',
      headers: { authorization: header('alice', 'correct horse battery') },
    });
    await bad.body.dump();
    expect(logs()).to.not.contain('correct horse battery');
    expect(logs()).to.not.contain(Buffer.from('alice:correct horse battery').toString('base64'));
  });

  it('of 1,000 fuzzed header names only the allow-listed reach the message', async () => {
    const { base } = await start({ ControlAllowList: 'platform-break, x-allowed-1; X-Allowed-2' });
    const rnd = prng(7);
    const chars = 'abcdefghijklmnopqrstuvwxyz0123456789-_';
    const fuzzed = new Set<string>();
    while (fuzzed.size < 1000) {
      let name = 'x-';
      const len = 3 + Math.floor(rnd() * 20);
      for (let i = 0; i < len; i++) name += chars[Math.floor(rnd() * chars.length)];
      fuzzed.add(name);
    }
    const names = [...fuzzed];
    // 10 requests of 100 fuzzed headers each (1,000 at once would pass Node's 16 KiB header limit)
    for (let batch = 0; batch < 10; batch++) {
      const headers: Record<string, string> = {
        'platform-break': 'true',
        'x-allowed-1': 'one',
        'X-ALLOWED-2': 'two',
        authorization: 'Basic eDp5',
      };
      for (const n of names.slice(batch * 100, batch * 100 + 100)) headers[n] = 'v';
      const r = await request(`${base}/a/b`, { method: 'POST', body: '{}', headers });
      expect(r.statusCode).to.equal(200);
      const msg = (await r.body.json()) as { Control: Record<string, string[]> };
      // besides them, the trace the gateway adds itself: the one it answers with
      expect(Object.keys(msg.Control).sort()).to.deep.equal([
        'platform-break',
        'traceparent',
        'x-allowed-1',
        'x-allowed-2',
      ]);
      expect(msg.Control.traceparent).to.deep.equal([r.headers.traceparent]);
    }
  });

  it('refuses header injection in ResponseHeaders at start; CR, LF or NUL in request headers get 400', async () => {
    const err = await start({ ResponseHeaders: 'X-Ok: 1\r\nBad Header: 2' }).catch((e: unknown) => e);
    expect((err as Error).message).to.contain("'Bad Header' is not a valid header name");
    const err2 = await start({ ResponseHeaders: 'X-Ok: 1\r\n: empty name' }).catch((e: unknown) => e);
    expect((err2 as Error).name).to.equal('ConfigError');
    const { port } = await start({});
    for (const evil of ['X-A: a\rb', 'X-A: a\0b', 'X A: b']) {
      const answer = await raw(port, `POST /a/b HTTP/1.1\r\nHost: x\r\n${evil}\r\nContent-Length: 2\r\n\r\n{}`);
      expect(answer, JSON.stringify(evil)).to.match(/^HTTP\/1\.1 400/);
    }
  });

  it('oversized bodies get 413 (declared and chunked); malformed JSON 400 naming the problem', async () => {
    const { base } = await start({ MaxBodySize: 1000 });
    const declared = await request(`${base}/a/b`, { method: 'POST', body: JSON.stringify({ a: ['x'.repeat(5000)] }) });
    expect(declared.statusCode).to.equal(413);
    await declared.body.dump();
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 10; i++) yield Buffer.alloc(500, 0x61);
    }
    const chunked = await request(`${base}/a/b`, { method: 'POST', body: Readable.from(chunks()) });
    expect(chunked.statusCode).to.equal(413);
    await chunked.body.dump();
    const malformed = await request(`${base}/a/b`, { method: 'POST', body: '{"a": [1,' });
    expect(malformed.statusCode).to.equal(400);
    expect(((await malformed.body.json()) as { Message: string }).Message).to.match(
      /request body is not valid JSON: .+/,
    );
  });

  it('answers a smuggling corpus with 400 and lets none of it reach the service', async () => {
    const { port } = await start({});
    const corpus = [
      'POST /a/b HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 3\r\n\r\n{}',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nContent-Length : 2\r\n\r\n{}',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\n{}',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nContent-Length: -2\r\n\r\n{}',
      'POST /a/\0b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
      'POST /a/b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\n{}',
      'POST /a/b HTTP/9.9\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
    ];
    for (const attack of corpus) {
      const answer = await raw(port, attack);
      expect(answer.startsWith('HTTP/1.1 2'), `${JSON.stringify(attack)} → ${answer.slice(0, 40)}`).to.equal(false);
      expect(
        answer === '' || /^HTTP\/1\.1 (400|505)/.test(answer),
        `${JSON.stringify(attack)} → ${answer.slice(0, 40)}`,
      ).to.equal(true);
    }
    expect(recorded(join(dir, 'echo.jsonl'))).to.deep.equal([]);
  });

  it('over MaxInFlight requests get 503 with Retry-After; nothing hangs', async () => {
    const { base } = await start({ MaxInFlight: 4 }, { Delay: '1s' });
    const results = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const r = await request(`${base}/a/b`, { method: 'POST', body: '{}' });
        await r.body.dump();
        return { status: r.statusCode, retry: r.headers['retry-after'] };
      }),
    );
    expect(results.filter((r) => r.status === 200)).to.have.length(4);
    const refused = results.filter((r) => r.status === 503);
    expect(refused).to.have.length(16);
    expect(refused.every((r) => r.retry === '1')).to.equal(true);
  });

  it('a hung interceptor is answered 504 within RequestTimeout', async () => {
    const hung = createServer(() => undefined);
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(hung.address() as { port: number }).port}/`;
    try {
      const { base } = await start({ Strict: false, InterceptBefore: url, InterceptAfter: url, RequestTimeout: '1s' });
      const started = Date.now();
      const r = await request(`${base}/a/b`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(r.statusCode).to.equal(504);
      await r.body.dump();
      expect(Date.now() - started, 'cut at the 1 s RequestTimeout').to.be.within(1000, 5000);
    } finally {
      hung.close();
    }
  });

  it('500 slow connections do not slow the health check; they are cut off after ClientTimeout', async () => {
    const { port, base } = await start({ ClientTimeout: '2s' });
    const slow: Socket[] = [];
    for (let i = 0; i < 500; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.resume(); // read what the server sends, so its close is seen here
      s.on('connect', () => s.write('POST /a/b HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n'));
      slow.push(s);
    }
    await sleep(300);
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      const r = await request(`${base}/healthcheck`);
      await r.body.dump();
      expect(r.statusCode).to.equal(200);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    // starved, it would wait for the 2 s ClientTimeout of the slow connections
    expect(times[Math.floor(times.length / 2)]!).to.be.below(1000);
    await sleep(3500);
    const open = slow.filter((s) => !s.destroyed && s.readyState === 'open').length;
    for (const s of slow) s.destroy();
    expect(open).to.be.below(10);
  });
});
