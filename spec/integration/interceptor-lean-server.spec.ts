import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import type { RunningInterceptor } from '../../actors/interceptor/server.js';
import { serveInterceptor } from '../../actors/interceptor/server.js';

const run = promisify(execFile);

/**
 * The kit's lean HTTP/1.1 server (actors/interceptor/lean-server.ts) for clients that are not ours:
 * curl, undici and node:http, content-length and chunked uploads, Expect: 100-continue, keep-alive
 * and Connection: close, HTTP/1.0, pipelined requests answered in order, and the refusals (405, 413,
 * 400 and close).
 */
describe('interceptor kit: the lean HTTP/1.1 server', () => {
  let kit: RunningInterceptor;
  let base: string;
  const body = (i: number): string => JSON.stringify({ type: 'json', value: { i }, options: {} });
  const post = (i: number): string =>
    `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body(i))}\r\n\r\n${body(i)}`;

  before(async () => {
    // answers at once, or after a while for odd values of `delay`: pipelined answers must keep their order anyway
    kit = await serveInterceptor((type, value) => {
      const v = value as { i?: number; delay?: number };
      const out = { data: value, status: 'OK', status_code: 200, options: { type } };
      return v.delay ? new Promise((r) => setTimeout(() => r(out), v.delay)) : out;
    }, 0);
    base = `http://127.0.0.1:${kit.port}`;
  });
  after(() => kit.close());

  /** Writes `text` on a raw connection and reads until the server closes it, or `ms` pass. */
  function rawExchange(text: string | Buffer[], ms = 2000): Promise<{ reply: string; closed: boolean }> {
    return new Promise((resolve, reject) => {
      const socket = connect(kit.port, '127.0.0.1');
      let reply = '';
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ reply, closed: false });
      }, ms);
      socket.on('data', (c: Buffer) => (reply += c.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ reply, closed: true });
      });
      if (typeof text === 'string') socket.write(text);
      else for (const part of text) socket.write(part);
    });
  }

  it('curl: a POST, a chunked upload and one with Expect: 100-continue are answered 200', async () => {
    const plain = await run('curl', [
      '-sS',
      '-X',
      'POST',
      '-H',
      'content-type: application/json',
      '--data-binary',
      body(1),
      `${base}/`,
    ]);
    expect(JSON.parse(plain.stdout)).to.deep.equal({
      data: { i: 1 },
      status: 'OK',
      status_code: 200,
      options: { type: 'json' },
    });
    const chunked = await run('curl', [
      '-sS',
      '-H',
      'Transfer-Encoding: chunked',
      '-H',
      'content-type: application/json',
      '--data-binary',
      body(2),
      `${base}/`,
    ]);
    expect(JSON.parse(chunked.stdout).data).to.deep.equal({ i: 2 });
    const expect100 = await run('curl', [
      '-sS',
      '-v',
      '-H',
      'Expect: 100-continue',
      '--data-binary',
      body(3),
      `${base}/`,
    ]);
    expect(expect100.stderr).to.contain('HTTP/1.1 100 Continue');
    expect(JSON.parse(expect100.stdout).data).to.deep.equal({ i: 3 });
  });

  it('undici keeps one connection for many requests; node:http uploads chunked', async () => {
    const pool = new Pool(base, { connections: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await pool.request({
          path: '/',
          method: 'POST',
          body: body(i),
          headers: { 'content-type': 'application/json' },
        });
        expect(res.statusCode).to.equal(200);
        expect(res.headers['keep-alive']).to.equal('timeout=5');
        expect(((await res.body.json()) as { data: unknown }).data).to.deep.equal({ i });
      }
    } finally {
      await pool.close();
    }
    const reply = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        `${base}/`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      // no length given: node:http sends the body chunked, here in three chunks
      const text = body(7);
      req.write(text.slice(0, 4));
      req.write(text.slice(4, 10));
      req.end(text.slice(10));
    });
    expect(JSON.parse(reply).data).to.deep.equal({ i: 7 });
  });

  it('pipelined requests written at once are answered in order, an asynchronous answer holding those behind it', async () => {
    const slow = JSON.stringify({ type: 'json', value: { i: 0, delay: 50 }, options: {} });
    const first = `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${slow.length}\r\n\r\n${slow}`;
    const { reply } = await rawExchange(
      first + post(1) + post(2).replace('Host: x\r\n', 'Host: x\r\nConnection: close\r\n'),
    );
    const answers = reply.split(/(?=HTTP\/1\.1 )/);
    expect(answers).to.have.length(3);
    expect(
      answers.map((a) => (JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4)) as { data: { i: number } }).data.i),
    ).to.deep.equal([0, 1, 2]);
    expect(answers[2]).to.match(/\r\nconnection: close\r\n/i);
  });

  it('keeps the connection for HTTP/1.1, closes it after Connection: close and after HTTP/1.0 without keep-alive', async () => {
    expect((await rawExchange(post(1), 300)).closed).to.equal(false);
    const close = await rawExchange(post(1).replace('Host: x\r\n', 'Host: x\r\nConnection: close\r\n'));
    expect(close.closed).to.equal(true);
    expect(close.reply).to.match(/^HTTP\/1\.1 200 OK\r\n/);
    const old = await rawExchange(post(1).replace('HTTP/1.1', 'HTTP/1.0'));
    expect(old.closed).to.equal(true);
    expect(old.reply).to.match(/^HTTP\/1\.1 200 OK\r\n[^]*connection: close/i);
    const oldKept = await rawExchange(
      post(1).replace('HTTP/1.1', 'HTTP/1.0').replace('Host: x\r\n', 'Connection: keep-alive\r\n'),
      300,
    );
    expect(oldKept.closed).to.equal(false);
    expect(oldKept.reply).to.match(/connection: keep-alive/i);
  });

  it('a method other than POST is answered 405 and the connection kept', async () => {
    const { reply, closed } = await rawExchange('GET / HTTP/1.1\r\nHost: x\r\n\r\n', 300);
    expect(reply).to.match(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(closed).to.equal(false);
    const curl = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', `${base}/`]);
    expect(curl.stdout).to.equal('405');
  });

  it('a request over 16 MiB, by its length or chunked, is answered 413 and the connection closed', async () => {
    const byLength = await rawExchange(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${17 * 1024 * 1024}\r\n\r\n`);
    expect(byLength.reply).to.match(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(byLength.closed).to.equal(true);
    const mib = Buffer.alloc(1024 * 1024, 32);
    const parts: Buffer[] = [Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')];
    for (let i = 0; i < 17; i++) parts.push(Buffer.from(`${mib.length.toString(16)}\r\n`), mib, Buffer.from('\r\n'));
    const chunked = await rawExchange(parts, 5000);
    expect(chunked.reply).to.match(/^HTTP\/1\.1 413 /);
    expect(chunked.closed).to.equal(true);
  });

  it('a malformed request is answered 400 naming the problem, and the connection closed', async () => {
    const cases: Array<[string, RegExp]> = [
      ['POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}', /without Host/],
      ['NOT A REQUEST\r\n\r\n', /request line/],
      [
        'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        /both Transfer-Encoding and Content-Length/,
      ],
      ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', /Content-Length/],
      ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n', /chunk size/],
      ['POST / HTTP/1.1\r\nHost: x\r\nbad header\r\n\r\n', /header line/],
    ];
    for (const [text, problem] of cases) {
      const { reply, closed } = await rawExchange(text);
      expect(reply, text).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
      const answer = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { status: string; status_code: number };
      expect(answer.status_code, text).to.equal(400);
      expect(answer.status, text).to.match(problem);
      expect(closed, text).to.equal(true);
    }
    // and it answers on
    expect((await rawExchange(post(5), 300)).reply).to.match(/^HTTP\/1\.1 200 OK/);
  });
});
