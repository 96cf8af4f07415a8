/**
 * Security of the gateway's TLS listener, with the gateway in its own process (`hivenode run`): a
 * stream of new TLS connections (a full handshake each) while wrk keeps keep-alive HTTPS load on the
 * same port; clear text (plain HTTP requests and random bytes) sent to the HTTPS port; and client
 * certificates that must be refused under TLSClientAuth require (none, expired, another CA's) beside
 * valid ones. Expected: no failed handshake or request among the valid ones, every bad connection
 * closed without a byte of clear text and counted by the gateway under its reason, nothing at warn in
 * the log, and the node serving throughout.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { request } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { certPath, certText } from '../certs.js';
import { tempDir } from '../temp.js';
import { prng } from '../prng.js';
import { httpsPost } from '../adapters/tls/tls-clients.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { ensureWrk } from './wrk.js';
import { sleep } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

const HANDSHAKE_SECONDS = byScale(4, 30);
const HANDSHAKE_CLIENTS = 8;
const KEEPALIVE_CONNECTIONS = 16;
const PLAIN_ATTEMPTS = byScale(300, 3000);
const BAD_CERT_ATTEMPTS = byScale(30, 300);
const BODY = '{"id":["42"]}';

const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const round = (n: number): number => Math.round(n * 10) / 10;

/** The node: echo, a gateway over HTTPS and one requiring client certificates, and the dashboard (for the gateways' counters). */
async function startTlsNode(): Promise<{
  node: NodeProcess;
  https: number;
  mtls: number;
  status(name: string): Promise<Record<string, number>>;
}> {
  const dir = tempDir('hn-security-tls-');
  const file = join(dir, 'tls.yaml');
  const tls = `TLSCert: "file://${certPath('server.pem')}", TLSKey: "file://${certPath('server.key')}"`;
  writeFileSync(
    file,
    [
      'dashboard: {Port: 0}',
      'services:',
      '  - {service: echo, NAME: echo}',
      `  - {service: gateway, NAME: https, Port: 0, Strict: true, OUTPUTCHANNEL: echo, MaxInFlight: 100000, ClientTimeout: 2s, ${tls}}`,
      `  - {service: gateway, NAME: mtls, Port: 0, Strict: true, OUTPUTCHANNEL: echo, ${tls}, TLSCA: "${certPath('ca.pem')}", TLSClientAuth: require}`,
      '',
    ].join('\n'),
  );
  const node = await startNodeProcess(file, { ready: /dashboard on http:\/\/127\.0\.0\.1:(\d+)\// });
  // the node's summary with the gateways' ports comes after the dashboard's line: on a loaded machine, a moment after
  const served = (): Array<readonly [string, number]> =>
    [...node.output().matchAll(/gateway\s+\S+\s+(\S+)\s+serves HTTPS on port (\d+)/g)].map(
      (m) => [m[1]!, Number(m[2])] as const,
    );
  for (const until = Date.now() + 30_000; served().length < 2 && Date.now() < until;) await sleep(50);
  const ports = served();
  if (ports.length < 2) {
    await node.kill('SIGKILL');
    throw new Error(`the node did not report both gateways' ports: ${node.output()}`);
  }
  const portOf = (name: string): number => ports.find(([n]) => n === name)![1];
  const status = (name: string): Promise<Record<string, number>> =>
    new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port: node.port, path: '/api/status', agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve(
            (JSON.parse(text) as { services: Array<{ name: string; status: Record<string, number> }> }).services.find(
              (s) => s.name === name,
            )!.status,
          ),
        );
      }).on('error', reject);
    });
  return { node, https: portOf('https'), mtls: portOf('mtls'), status };
}

/** wrk over HTTPS with keep-alive: its requests, non-2xx answers and socket errors. */
function wrkHttps(port: number, seconds: number): Promise<{ requests: number; errors: number }> {
  const script = join(tempDir('hn-wrk-tls-'), 'post.lua');
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = '${BODY}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  return new Promise((resolve, reject) => {
    execFile(
      'wrk',
      [
        '-t',
        '1',
        '-c',
        String(KEEPALIVE_CONNECTIONS),
        '-d',
        `${seconds}s`,
        '-s',
        script,
        `https://127.0.0.1:${port}/load/op`,
      ],
      { timeout: (seconds + 30) * 1000 },
      (err, stdout) => {
        if (err) return reject(err);
        const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN);
        const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
        const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
        resolve({ requests, errors: non2xx + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0) });
      },
    );
  });
}

/** A new connection whose TLS handshake is timed (TCP connect to secureConnect), then one POST on it. */
function handshakeAndPost(port: number): Promise<{ handshakeMs: number; status: number; error?: string }> {
  return new Promise((resolve) => {
    let began = NaN;
    let handshakeMs = NaN;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/load/op',
        method: 'POST',
        servername: 'localhost',
        ca: certText('ca.pem'),
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ handshakeMs, status: res.statusCode ?? 0 }));
      },
    );
    req.on('socket', (socket) => {
      socket.once('connect', () => (began = performance.now()));
      socket.once('secureConnect', () => (handshakeMs = performance.now() - began));
    });
    req.on('error', (e) => resolve({ handshakeMs, status: 0, error: e.message }));
    req.end(BODY);
  });
}

/** Sends `bytes` on a new TCP connection and waits for the server to close it: what came back and how it closed. */
function clearText(
  port: number,
  bytes: Buffer,
): Promise<{ reply: number; alert: boolean; how: 'close' | 'reset' | 'open' }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = 0;
    let first: Buffer | undefined;
    let how: 'close' | 'reset' | 'open' = 'open';
    const timer = setTimeout(() => socket.destroy(), 5000);
    socket.on('data', (c: Buffer) => {
      first ??= c;
      reply += c.length;
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (how = e.code === 'ECONNRESET' ? 'reset' : how));
    socket.on('end', () => (how = how === 'open' ? 'close' : how));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ reply, alert: first !== undefined && isTlsAlert(first), how });
    });
    socket.on('connect', () => socket.write(bytes));
  });
}

/**
 * A TLS alert record (content type 21, version 3.x): what TLS answers to random bytes that happen to
 * begin like a TLS record — an answer in TLS, not in clear text.
 */
function isTlsAlert(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0x15 && bytes[1] === 0x03 && bytes[2]! <= 0x04;
}

/** Runs `total` jobs `concurrency` at a time. */
async function pool<T>(total: number, concurrency: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}

describe('reliability: security of the gateway over TLS (real sockets, the gateway in its own process)', function () {
  let tls: Awaited<ReturnType<typeof startTlsNode>> | undefined;
  before(async function () {
    this.timeout(60_000);
    tls = await startTlsNode();
  });
  after(async () => {
    await tls?.node.kill();
  });

  const plan = (load: string, faults: string) => ({ suite: 'security', load, faults });

  reliabilityTest(
    `TLS handshakes under load: ${HANDSHAKE_CLIENTS} clients opening new connections for ${HANDSHAKE_SECONDS} s beside ${KEEPALIVE_CONNECTIONS} keep-alive connections`,
    plan(
      `${HANDSHAKE_CLIENTS} clients each opening a new HTTPS connection per request (a full TLS 1.3 handshake) for ${HANDSHAKE_SECONDS} s, while wrk keeps ${KEEPALIVE_CONNECTIONS} keep-alive HTTPS connections busy on the same port`,
      'none (load only)',
    ),
    byScale(60_000, 120_000),
    async (figures, skip) => {
      const missing = ensureWrk();
      requireInstalled(missing === undefined, missing ?? '', skip);
      const { https, status } = tls!;
      const before = await status('https');
      const keepAlive = wrkHttps(https, HANDSHAKE_SECONDS);
      const handshakes: number[] = [];
      const failures: string[] = [];
      const deadline = Date.now() + HANDSHAKE_SECONDS * 1000;
      await Promise.all(
        Array.from({ length: HANDSHAKE_CLIENTS }, async () => {
          while (Date.now() < deadline) {
            const r = await handshakeAndPost(https);
            if (r.status === 200) handshakes.push(r.handshakeMs);
            else failures.push(r.error ?? `status ${r.status}`);
          }
        }),
      );
      const steady = await keepAlive;
      const after = await status('https');
      Object.assign(figures, {
        'new connections (handshake + request)': handshakes.length + failures.length,
        'handshakes per second': Math.round((handshakes.length + failures.length) / HANDSHAKE_SECONDS),
        'failed handshakes or requests': failures.length,
        'handshake p50 / p99 (ms)': `${round(percentile(handshakes, 50))} / ${round(percentile(handshakes, 99))}`,
        'keep-alive requests beside them': steady.requests,
        'keep-alive errors': steady.errors,
        "gateway's handshakes counted / failed (clients hanging up mid-handshake)": `${after.tlsHandshakes! - before.tlsHandshakes!} / ${after.tlsHandshakeFailures! - before.tlsHandshakeFailures!}`,
      });
      expect(failures.slice(0, 5), 'failed new connections').to.deep.equal([]);
      expect(handshakes.length, 'handshakes done').to.be.greaterThan(HANDSHAKE_SECONDS * 10);
      expect(steady.errors, 'keep-alive errors').to.equal(0);
      expect(steady.requests, 'keep-alive requests served').to.be.greaterThan(HANDSHAKE_SECONDS * 100);
      // a wrk connection cut at the end of its run may be mid-handshake: a hang-up, counted but with no reason
      const reasons = [
        'tlsPlainText',
        'tlsOldProtocol',
        'tlsNoCertificate',
        'tlsBadCertificate',
        'tlsHandshakeTimeouts',
      ].reduce((n, k) => n + after[k]! - before[k]!, 0);
      expect(reasons, 'handshakes the gateway refused for a reason').to.equal(0);
      expect(after.tlsHandshakes! - before.tlsHandshakes!, "the gateway's count of handshakes").to.be.at.least(
        handshakes.length + KEEPALIVE_CONNECTIONS,
      );
      expect(percentile(handshakes, 99), 'handshake p99 (ms)').to.be.below(2000);
    },
  );

  reliabilityTest(
    `plain text on the TLS port: ${PLAIN_ATTEMPTS} connections of plain HTTP and random bytes`,
    plan(
      `${PLAIN_ATTEMPTS} new TCP connections to the HTTPS port, 16 at a time, each sending a plain HTTP request (GET, POST, HTTP/1.0, CONNECT) or 1-512 random bytes`,
      'clear text where a TLS ClientHello is expected',
    ),
    byScale(60_000, 180_000),
    async (figures) => {
      const { node, https, status } = tls!;
      const rnd = prng(20261124);
      const plainRequests = [
        'GET /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n',
        'POST /load/op HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n{"id":["42"]}',
        'GET / HTTP/1.0\r\n\r\n',
        'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n',
      ];
      const before = await status('https');
      const logged = node.output().length;
      const rssBefore = node.rssBytes();
      let servedBetween = 0;
      const answers = await pool(PLAIN_ATTEMPTS, 16, async (i) => {
        if (i % 50 === 0 && (await httpsPost(https, '/load/op', BODY, false)).status === 200) servedBetween++;
        const bytes =
          i % 2 === 0
            ? Buffer.from(plainRequests[i % plainRequests.length]!)
            : Buffer.from(Array.from({ length: 1 + Math.floor(rnd() * 512) }, () => Math.floor(rnd() * 256)));
        return clearText(https, bytes);
      });
      const after = await status('https');
      const count = (how: string): number => answers.filter((a) => a.how === how).length;
      const clearReplies = answers.filter((a) => a.reply > 0 && !a.alert).length;
      const last = await httpsPost(https, '/load/op', BODY, false);
      Object.assign(figures, {
        attempts: PLAIN_ATTEMPTS,
        'closed by the gateway (FIN)': count('close'),
        'reset (RST)': count('reset'),
        'left open after 5 s (ClientTimeout 2 s)': count('open'),
        "gateway's handshake timeouts (truncated records)": after.tlsHandshakeTimeouts! - before.tlsHandshakeTimeouts!,
        'answers in clear text': clearReplies,
        'TLS alerts (random bytes that began like a TLS record)': answers.filter((a) => a.alert).length,
        "gateway's refused handshakes / of them plain HTTP": `${after.tlsHandshakeFailures! - before.tlsHandshakeFailures!} / ${after.tlsPlainText! - before.tlsPlainText!}`,
        'HTTPS requests served between (200)': `${servedBetween} of ${Math.ceil(PLAIN_ATTEMPTS / 50)}`,
        'RSS before / after (MiB)': `${round(rssBefore / 2 ** 20)} / ${round(node.rssBytes() / 2 ** 20)}`,
        'WARN or ERROR lines logged meanwhile': (
          node
            .output()
            .slice(logged)
            .match(/ (WARN|ERROR) /g) ?? []
        ).length,
      });
      expect(count('open'), 'connections left open').to.equal(0);
      expect(clearReplies, 'answers in clear text').to.equal(0);
      expect(count('close') + count('reset')).to.equal(PLAIN_ATTEMPTS);
      expect(after.tlsHandshakeFailures! - before.tlsHandshakeFailures!, 'refused handshakes counted').to.equal(
        PLAIN_ATTEMPTS,
      );
      expect(after.tlsPlainText! - before.tlsPlainText!, 'plain HTTP recognised').to.be.at.least(PLAIN_ATTEMPTS / 2);
      expect(servedBetween, 'HTTPS served between').to.equal(Math.ceil(PLAIN_ATTEMPTS / 50));
      expect(last.status, 'HTTPS served after').to.equal(200);
      expect(node.output().slice(logged), 'nothing logged at warn or error').to.not.match(/ (WARN|ERROR) /);
    },
  );

  reliabilityTest(
    `wrong certificates: none, expired and another CA's, ${BAD_CERT_ATTEMPTS} each, under TLSClientAuth require`,
    plan(
      `${BAD_CERT_ATTEMPTS} HTTPS requests each without a client certificate, with an expired one (2020), with one of a CA TLSCA does not name, and with a valid one (alice), 8 at a time, interleaved`,
      'client certificates missing, expired or from an untrusted CA',
    ),
    byScale(60_000, 180_000),
    async (figures) => {
      const { mtls, status } = tls!;
      const kinds = ['none', 'client-expired', 'other-client', 'client-alice'] as const;
      const before = await status('mtls');
      const results = await pool(BAD_CERT_ATTEMPTS * kinds.length, 8, async (i) => {
        const kind = kinds[i % kinds.length]!;
        const extra = kind === 'none' ? {} : { cert: certText(`${kind}.pem`), key: certText(`${kind}.key`) };
        try {
          const r = await httpsPost(mtls, '/load/op', BODY, false, extra);
          return { kind, answered: r.status };
        } catch {
          return { kind, answered: 0 };
        }
      });
      const after = await status('mtls');
      const of = (kind: string): Array<{ answered: number }> => results.filter((r) => r.kind === kind);
      const refused = (kind: string): number => of(kind).filter((r) => r.answered === 0).length;
      const delta = (k: string): number => after[k]! - before[k]!;
      Object.assign(figures, {
        'no certificate: refused': `${refused('none')} of ${BAD_CERT_ATTEMPTS}`,
        'expired: refused': `${refused('client-expired')} of ${BAD_CERT_ATTEMPTS}`,
        'another CA: refused': `${refused('other-client')} of ${BAD_CERT_ATTEMPTS}`,
        'valid (alice): answered 200': `${of('client-alice').filter((r) => r.answered === 200).length} of ${BAD_CERT_ATTEMPTS}`,
        "gateway's counts: no certificate / bad certificate / other": `${delta('tlsNoCertificate')} / ${delta('tlsBadCertificate')} / ${delta('tlsHandshakeFailures') - delta('tlsNoCertificate') - delta('tlsBadCertificate')}`,
      });
      for (const kind of ['none', 'client-expired', 'other-client'])
        expect(refused(kind), `${kind} refused`).to.equal(BAD_CERT_ATTEMPTS);
      expect(
        of('client-alice').every((r) => r.answered === 200),
        'every valid certificate answered 200',
      ).to.equal(true);
      expect(delta('tlsNoCertificate')).to.equal(BAD_CERT_ATTEMPTS);
      expect(delta('tlsBadCertificate')).to.equal(2 * BAD_CERT_ATTEMPTS);
      expect(delta('tlsHandshakeFailures')).to.equal(3 * BAD_CERT_ATTEMPTS);
    },
  );
});
