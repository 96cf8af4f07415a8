import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { IncomingMessage, Server } from 'node:http';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { otlpTransport } from '../../../actors/observe/otlp-transport.js';
import { certPath, certText } from '../../certs.js';

const listen = async (
  server: Server | ReturnType<typeof createTcpServer> | ReturnType<typeof createHttpsServer>,
): Promise<number> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
};

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });

const TRANSPORT = new URL('../../../actors/observe/otlp-transport.ts', import.meta.url).href;

/** Runs `body` in a process of its own with `t`, a transport to `url`, at hand; its exit code and what it printed. */
async function inProcess(
  url: string,
  body: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string }> {
  const script = `const { otlpTransport } = await import(${JSON.stringify(TRANSPORT)}); const t = otlpTransport({ url: new URL(${JSON.stringify(url)}), contentType: 'application/json', headers: { 'x-token': 'k' }, timeoutMs: 5000 }); ${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: new URL('../../..', import.meta.url).pathname,
    env: { ...process.env, ...env },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, out: out.trim() };
}

/** Bytes no two posts share, so a body that arrived mixed with another is seen. */
const body = (size: number, seed: number): Buffer => {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 7 + seed) & 0xff;
  return b;
};

describe('actors/shared/otlp-transport: a batch posted to the collector', () => {
  it('plain http: the head names the host, content type, length and the configured headers; the body arrives as it was; the connection is kept', async () => {
    const got: Array<{
      url: string;
      host: string;
      type: string;
      length: string;
      token: string;
      body: Buffer;
      socket: unknown;
    }> = [];
    const server = createServer(async (req, res) => {
      got.push({
        url: String(req.url),
        host: String(req.headers.host),
        type: String(req.headers['content-type']),
        length: String(req.headers['content-length']),
        token: String(req.headers['x-token']),
        body: await readBody(req),
        socket: req.socket,
      });
      res.writeHead(200).end();
    });
    const port = await listen(server);
    const transport = otlpTransport({
      url: new URL(`http://127.0.0.1:${port}/v1/traces?x=1`),
      contentType: 'application/x-protobuf',
      headers: { 'x-token': 'a b' },
      timeoutMs: 5000,
    });
    try {
      expect(await transport.post(body(100_000, 1))).to.equal(200);
      expect(await transport.post(body(10, 2))).to.equal(200);
      expect(got.map(({ body: _b, socket: _s, ...head }) => head)).to.deep.equal([
        {
          url: '/v1/traces?x=1',
          host: `127.0.0.1:${port}`,
          type: 'application/x-protobuf',
          length: '100000',
          token: 'a b',
        },
        {
          url: '/v1/traces?x=1',
          host: `127.0.0.1:${port}`,
          type: 'application/x-protobuf',
          length: '10',
          token: 'a b',
        },
      ]);
      expect(got[0]!.body.equals(body(100_000, 1))).to.equal(true);
      expect(got[1]!.body.equals(body(10, 2))).to.equal(true);
      expect(got[1]!.socket).to.equal(got[0]!.socket);
    } finally {
      transport.close();
      server.close();
    }
  });

  it('a collector answering before it read the whole body: its status, and the next batch goes on a new connection, whole', async () => {
    // answers at once and never reads the body: the rest of it may still wait in the client's buffer
    const sockets = new Set<unknown>();
    const bodies: Buffer[] = [];
    let refuse = true;
    const server = createServer((req, res) => {
      sockets.add(req.socket);
      if (refuse) {
        refuse = false;
        res.writeHead(413, { 'content-length': '0' }).end();
        return;
      }
      void readBody(req).then((b) => {
        bodies.push(b);
        res.writeHead(200).end();
      });
    });
    const port = await listen(server);
    const transport = otlpTransport({
      url: new URL(`http://127.0.0.1:${port}/v1/traces`),
      contentType: 'application/x-protobuf',
      headers: {},
      timeoutMs: 5000,
    });
    try {
      expect(await transport.post(body(8 << 20, 3))).to.equal(413);
      expect(await transport.post(body(50_000, 4))).to.equal(200);
      expect(bodies).to.have.length(1);
      expect(bodies[0]!.equals(body(50_000, 4))).to.equal(true);
      expect(sockets.size).to.equal(2);
    } finally {
      transport.close();
      server.close();
    }
  });

  it('an idle connection to the collector does not keep a process alive (the collector keeps it open 10 s)', async () => {
    const server = createServer((req, res) => void readBody(req).then(() => res.writeHead(200).end()));
    server.keepAliveTimeout = 10_000;
    const port = await listen(server);
    try {
      const started = Date.now();
      // no close(): the process has nothing left to do once the post is answered
      expect(
        await inProcess(`http://127.0.0.1:${port}/v1/traces`, "console.log(await t.post(Buffer.from('{}')));"),
      ).to.deep.equal({ code: 0, out: '200' });
      // the posting takes ~1 s of tsx start-up; a connection keeping the process would hold it 10 s more
      expect(Date.now() - started).to.be.below(7000);
    } finally {
      server.close();
    }
  });

  it('https: over node:https, the collector checked against the CAs node trusts (NODE_EXTRA_CA_CERTS here); one it cannot trust gives 0', async () => {
    const got: string[] = [];
    const server = createHttpsServer(
      { cert: certText('server.pem'), key: certText('server.key') },
      (req, res) =>
        void readBody(req).then(
          (b) => (
            got.push(`${String(req.headers['content-type'])} ${String(req.headers['x-token'])} ${b.toString()}`),
            res.writeHead(200).end()
          ),
        ),
    );
    const port = await listen(server);
    const post = (ca: string): Promise<{ code: number | null; out: string }> =>
      inProcess(
        `https://localhost:${port}/v1/traces`,
        `console.log(await t.post(Buffer.from('{"a":1}'))); t.close();`,
        { NODE_EXTRA_CA_CERTS: certPath(ca) },
      );
    try {
      expect(await post('ca.pem')).to.deep.equal({ code: 0, out: '200' });
      expect(await post('other-ca.pem')).to.deep.equal({ code: 0, out: '0' });
      expect(got).to.deep.equal(['application/json k {"a":1}']);
    } finally {
      server.close();
    }
  });

  it('no collector listening, or one that does not answer in time: 0 (no answer)', async () => {
    const closed = createTcpServer();
    const port = await listen(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = otlpTransport({
      url: new URL(`http://127.0.0.1:${port}/v1/traces`),
      contentType: 'application/json',
      headers: {},
      timeoutMs: 5000,
    });
    const silent = createTcpServer(() => undefined);
    const silentPort = await listen(silent);
    const slow = otlpTransport({
      url: new URL(`http://127.0.0.1:${silentPort}/v1/traces`),
      contentType: 'application/json',
      headers: {},
      timeoutMs: 200,
    });
    try {
      expect(await refused.post(Buffer.from('{}'))).to.equal(0);
      expect(await slow.post(Buffer.from('{}'))).to.equal(0);
    } finally {
      refused.close();
      slow.close();
      silent.close();
    }
  });
});
