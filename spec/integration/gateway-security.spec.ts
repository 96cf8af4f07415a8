/**
 * The gateway's security and limits, over real sockets on 127.0.0.1 (acceptance of the gateway
 * issue): Basic auth and the users file, the control allow list under fuzzing, header injection in
 * ResponseHeaders and in requests, body limits, slow clients, a hung interceptor, request smuggling
 * and MaxInFlight. Every test asserts behaviour; the one latency bound (health check under slow-loris)
 * is a functional limit with a wide margin, not a benchmark.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Client, request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { serveInterceptor } from '../../actors/interceptor/server.js';
import type { HiveNode } from '../../node/node.js';
import type { Params, RunningGateway } from './gateway-harness.js';
import { rawExchange, startGateway } from './gateway-harness.js';
import { prng } from '../prng.js';
import { tempDir } from '../temp.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';
import { sleep, until } from '../support/wait.js';

const repo = new URL('../../', import.meta.url).pathname;
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown>;
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.body.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    json = { text };
  }
  return { status: res.statusCode, headers: res.headers, json };
}

const gatewayStatus = (
  node: HiveNode,
): Record<string, unknown> & { inFlight: number; accepted: number; refused: number } =>
  node.services.find((s) => s.kind === 'gateway')!.running.status() as never;

/** Lines an echo RecordFile holds (it may not exist before the first message). */
function recordedLines(file: string): string[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];
}

describe('gateway security and limits', function () {
  this.timeout(30_000);
  const ALICE_PW = 'Tr0ub4dor&3-alice';
  const CAROL_PW = 'c0rrect-h0rse-carol';
  let dir: string;
  let aliceLine: string;
  let carolLine: string;
  let gw: RunningGateway | undefined;
  const servers: Array<{ close(): Promise<void> }> = [];

  before(async () => {
    dir = tempDir('hn-gwsec-');
    // bcrypt at cost 10 takes ~100 ms a line: hash once for the whole file
    [aliceLine, carolLine] = await Promise.all([passwdLine('alice', ALICE_PW), passwdLine('carol', CAROL_PW)]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  const start = async (gateway: Params, echo: Params = {}): Promise<RunningGateway> => {
    gw = await startGateway(gateway, echo);
    return gw;
  };

  describe('Basic authentication (Users)', () => {
    it('answers 401 with WWW-Authenticate for missing, wrong, unknown or malformed credentials, 200 for right ones; the second is served from the cache', async () => {
      const users = join(dir, 'users-1');
      writeFileSync(users, `# test users\n${aliceLine}\n`);
      const { base, node } = await start({ Users: users });
      // counting bcrypt comparisons (made in the verification workers) shows the cache at work without measuring time
      const counted = (): number =>
        node.services.find((s) => s.kind === 'gateway')!.running.status().signInVerifications as number;
      {
        const refused: Array<[string, Record<string, string>, number]> = [
          ['no credentials', {}, 0],
          ['wrong password', { authorization: basic('alice', 'wrong-password') }, 1],
          // an unknown user costs a comparison too, so timing does not tell which users exist
          ['unknown user', { authorization: basic('mallory', ALICE_PW) }, 1],
          ['user name of another case', { authorization: basic('Alice', ALICE_PW) }, 1],
          ['Bearer scheme', { authorization: 'Bearer abcdef0123456789' }, 0],
          ['not base64', { authorization: 'Basic !!!not-base64!!!' }, 0],
          ['no colon inside', { authorization: `Basic ${Buffer.from('alice').toString('base64')}` }, 0],
          ['empty Basic', { authorization: 'Basic ' }, 0],
        ];
        for (const [what, headers, comparisons] of refused) {
          const was = counted();
          const r = await post(`${base}/t/op`, '{"a":["1"]}', headers);
          expect(r.status, what).to.equal(401);
          expect(r.headers['www-authenticate'], what).to.match(/^Basic realm="[^"]+"/);
          expect(r.json.Code, what).to.equal(401);
          expect(counted() - was, `${what}: bcrypt comparisons`).to.equal(comparisons);
        }
        const first = await post(`${base}/t/op`, '{"a":["1"]}', { authorization: basic('alice', ALICE_PW) });
        expect(first.status).to.equal(200);
        expect(first.json.Data).to.deep.equal({ a: ['1'] });
        const afterFirst = counted();
        const second = await post(`${base}/t/op`, '{"a":["2"]}', { authorization: basic('alice', ALICE_PW) });
        expect(second.status).to.equal(200);
        expect(second.json.Data).to.deep.equal({ a: ['2'] });
        expect(counted(), 'the second request must not run bcrypt again').to.equal(afterFirst);
        // a cached success must not let a wrong password through
        expect((await post(`${base}/t/op`, '{}', { authorization: basic('alice', `${ALICE_PW}x`) })).status).to.equal(
          401,
        );
      }
      const health = await request(`${base}/healthcheck`);
      expect(health.statusCode, 'the health check needs no credentials (load balancers probe it)').to.equal(200);
      await health.body.dump();
    });

    it('never writes the password or the Authorization value to the logs, at LOGLEVEL=trace, also on error paths', async () => {
      const users = join(dir, 'users-2');
      writeFileSync(users, `${aliceLine}\n`);
      const header = basic('alice', ALICE_PW);
      const b64 = header.slice('Basic '.length);
      const seenByInterceptor: string[] = [];
      // a careless mapper that quotes its whole input in its error: the gateway must not have given it credentials
      const beforeMapper = await serveInterceptor((_type, value, options) => {
        seenByInterceptor.push(JSON.stringify({ value, options }));
        const v = value as { Data?: Record<string, string[]>; fail?: string[] };
        if (v.fail) throw new Error(`mapper failed on ${options.http_request}`);
        return { data: { Class: 'c', Operation: 'o', Data: v }, status: 'OK', status_code: 200 };
      }, 0);
      const afterMapper = await serveInterceptor(
        (_type, value) => ({ data: value, status: 'OK', status_code: (value as { Code?: number }).Code ?? 200 }),
        0,
      );
      servers.push(beforeMapper, afterMapper);
      // masking off (LOGSENSITIVE=true) too: the gateway must not hand credentials to the logger at all
      for (const sensitive of [false, true]) {
        const common = { LOGLEVEL: 'trace', LOGSENSITIVE: sensitive };
        const g = await start(
          {
            ...common,
            Users: users,
            Strict: false,
            InterceptBefore: `http://127.0.0.1:${beforeMapper.port}/`,
            InterceptAfter: `http://127.0.0.1:${afterMapper.port}/`,
            ControlAllowList: 'echo_crash, x-trace',
          },
          common,
        );
        const auth = { authorization: header, cookie: `session=${b64}`, 'x-trace': 'yes' };
        expect((await post(`${g.base}/a/b`, '{"x":["1"]}', auth)).status).to.equal(200);
        const failed = await post(`${g.base}/a/b`, '{"fail":["1"]}', auth);
        expect(failed.status, 'a failing before interceptor is a bad gateway').to.equal(502);
        const crashed = await post(`${g.base}/a/b`, '{"x":["1"]}', { ...auth, echo_crash: 'true' });
        expect(crashed.status, 'a crashing service is a 500').to.equal(500);
        expect((await post(`${g.base}/a/b`, '{"x":[', auth)).status).to.equal(400);
        expect(
          (await post(`${g.base}/a/b`, '{}', { authorization: basic('alice', `${ALICE_PW}-wrong`) })).status,
        ).to.equal(401);
        await g.stop();
        gw = undefined;
        const logs = g.logs();
        // the error paths were logged at all (otherwise the assertions below prove nothing)
        expect(logs, `LOGSENSITIVE=${sensitive}`).to.contain('failed');
        expect(logs).to.contain('supervision crash');
        for (const secret of [ALICE_PW, b64, `alice:${ALICE_PW}`, `${ALICE_PW}-wrong`])
          expect(logs, `LOGSENSITIVE=${sensitive}: '${secret}' logged`).to.not.contain(secret);
      }
      expect(seenByInterceptor.length).to.be.greaterThan(0);
      for (const seen of seenByInterceptor) {
        expect(seen).to.not.contain(b64);
        expect(seen.toLowerCase()).to.not.contain('authorization');
        expect(seen.toLowerCase()).to.not.contain('cookie');
      }
    });

    it('re-reads the users file when it changes (within ~5 s): a new user gets in, a removed one is refused though cached', async () => {
      const users = join(dir, 'users-3');
      writeFileSync(users, `${aliceLine}\n`);
      const { base } = await start({ Users: users });
      expect((await post(`${base}/t/op`, '{}', { authorization: basic('alice', ALICE_PW) })).status).to.equal(200);
      expect((await post(`${base}/t/op`, '{}', { authorization: basic('carol', CAROL_PW) })).status).to.equal(401);
      writeFileSync(users, `${carolLine}\n`);
      // an mtime surely different from the first write's, however coarse the file system clock
      const later = new Date(Date.now() + 10_000);
      utimesSync(users, later, later);
      const deadline = Date.now() + 9_000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await post(`${base}/t/op`, '{}', { authorization: basic('carol', CAROL_PW) })).status;
        if (status === 200) break;
        await sleep(250);
      }
      expect(status, 'carol was not let in within 9 s of the change').to.equal(200);
      expect(
        (await post(`${base}/t/op`, '{}', { authorization: basic('alice', ALICE_PW) })).status,
        'a removed user must not stay in through the cache',
      ).to.equal(401);
    });
  });

  describe('controls from headers', () => {
    it('of 1,000 fuzzed header names only the allow-listed reach the message (case-insensitive, comma or semicolon separated)', async () => {
      const rnd = prng(0x5eed);
      const pick = (s: string): string => s[Math.floor(rnd() * s.length)]!;
      const TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
      // names the exchange itself needs, or which can never be controls, stay out of the fuzz
      const reserved = new Set([
        'host',
        'connection',
        'content-length',
        'content-type',
        'transfer-encoding',
        'te',
        'upgrade',
        'expect',
        'keep-alive',
        'platform-break',
        'platform-procedure',
        'authorization',
        'proxy-authorization',
        'cookie',
        'set-cookie',
        '__proto__',
        'constructor',
        'prototype',
      ]);
      const names = new Map<string, string>(); // lower case → as sent
      while (names.size < 1000) {
        let name = '';
        const length = 1 + Math.floor(rnd() * 24);
        for (let i = 0; i < length; i++) name += pick(TCHAR);
        if (!reserved.has(name.toLowerCase()) && !names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
      }
      const all = [...names.keys()];
      const allowed = new Set(all.filter(() => rnd() < 0.15));
      const flip = (s: string): string =>
        [...s].map((ch) => (rnd() < 0.5 ? ch.toUpperCase() : ch.toLowerCase())).join('');
      const allowList = ['Platform-Break', ...[...allowed].map(flip)]
        .map((n, i) => (i === 0 ? n : `${pick(',;')}${rnd() < 0.5 ? ' ' : ''}${n}`))
        .join('');
      const { base } = await start({ ControlAllowList: allowList });
      let reached = 0;
      // 10 requests of 100 headers: all 1,000 in one would pass Node's 16 KiB header limit
      for (let batch = 0; batch < 10; batch++) {
        const slice = all.slice(batch * 100, batch * 100 + 100);
        const headers: Record<string, string> = { 'PLATFORM-BREAK': 'true' };
        slice.forEach((lower, i) => (headers[flip(names.get(lower)!)] = `v${batch}-${i}`));
        const r = await post(`${base}/t/op`, '{"d":["1"]}', headers);
        expect(r.status).to.equal(200);
        // besides them, the trace the gateway adds itself: the one it answers with
        const expected: Record<string, string[]> = {
          'platform-break': ['true'],
          traceparent: [String(r.headers.traceparent)],
        };
        slice.forEach((lower, i) => {
          if (allowed.has(lower)) expected[lower] = [`v${batch}-${i}`];
        });
        expect(r.json.Control, `batch ${batch}`).to.deep.equal(expected);
        expect(r.json.Data).to.deep.equal({ d: ['1'] });
        reached += Object.keys(expected).length - 2;
      }
      expect(reached).to.equal(allowed.size);
      expect(allowed.size).to.be.within(100, 200);
    });

    it("Authorization, Proxy-Authorization and Cookie never become controls, even with ControlAllowList '*', naming them, DevMode or a ControlPrefix", async () => {
      const credentials = {
        authorization: basic('alice', ALICE_PW),
        'proxy-authorization': basic('p', 'q'),
        cookie: 'session=abc',
      };
      for (const params of [
        { ControlAllowList: '*' },
        { ControlAllowList: 'platform-break; Authorization, PROXY-AUTHORIZATION; cookie; x-other; x_prefixed' },
        { DevMode: true },
      ] as Params[]) {
        const { base } = await start({ ControlPrefix: 'ctl_', ...params });
        const body = JSON.stringify({ d: ['1'], ctl_authorization: ['x'], ctl_Cookie: ['y'], ctl_x_prefixed: ['z'] });
        const r = await post(`${base}/t/op`, body, { ...credentials, 'platform-break': 'true', 'x-other': 'o' });
        expect(r.status).to.equal(200);
        const control = r.json.Control as Record<string, string[]>;
        expect(
          Object.keys(control).map((k) => k.toLowerCase()),
          JSON.stringify(params),
        ).to.include.members(['platform-break', 'x-other', 'x_prefixed']);
        for (const k of Object.keys(control))
          expect(['authorization', 'proxy-authorization', 'cookie'], JSON.stringify(params)).to.not.include(
            k.toLowerCase(),
          );
        expect(JSON.stringify(r.json)).to.not.contain(credentials.authorization.slice(6));
        await gw!.stop();
        gw = undefined;
      }
    });
  });

  describe('header injection', () => {
    it('ResponseHeaders: CR LF separated Name: value lines all go out; anything else is refused at start with ConfigError', async () => {
      const { base } = await start({ ResponseHeaders: 'X-A: 1\r\nX-B: two words\nX-C: 3\\r\\nX-D: d:e' });
      for (const path of ['/healthcheck', '/t/op', '/outside/of/strict/paths']) {
        const r = await request(`${base}${path}`, {
          method: path === '/healthcheck' ? 'GET' : 'POST',
          body: path === '/healthcheck' ? null : '{}',
        });
        await r.body.dump();
        expect(r.headers, path).to.include({ 'x-a': '1', 'x-b': 'two words', 'x-c': '3', 'x-d': 'd:e' });
      }
      await gw!.stop();
      gw = undefined;
      const refused: Array<[string, string]> = [
        ['an empty header name', 'X-A: 1\r\n: injected'],
        ['a body-like line', 'X-A: 1\r\n\r\n<html>injected</html>'],
        ['a folded line starting with a space', 'X-A: 1\r\n X-Injected: 1'],
        ['a folded line starting with a tab', 'X-A: 1\r\n\tX-Injected: 1'],
        ['a bare CR inside a value', 'X-A: 1\rX-Injected: 1'],
        ['a NUL inside a value', 'X-A: 1\0X-Injected: 1'],
        ['a name that is not a token', 'X A: 1'],
        ['a line without a colon', 'X-A: 1\r\nX-Injected'],
        ['a control character in a value', 'X-A: a\u0001b'],
        ['a character beyond Latin-1', 'X-A: \u20ac5'],
        ['the escaped form with an empty name', 'X-A: 1\\r\\n: injected'],
        [
          "the traceparent, which is each answer's own trace",
          'X-A: 1\r\nTraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        ],
      ];
      for (const [what, value] of refused) {
        const err = await startGateway({ ResponseHeaders: value }).then(
          async (g) => {
            await g.stop();
            return undefined;
          },
          (e: unknown) => e as Error,
        );
        expect(err, `${what} was accepted`).to.be.instanceOf(Error);
        expect(err!.name, what).to.equal('ConfigError');
        expect(err!.message, what).to.contain('ResponseHeaders');
      }
    });

    it('as a process: header injection in -ResponseHeaders exits with code 2; a valid multi-header value starts', async () => {
      const run = (
        responseHeaders: string,
      ): { exit: Promise<number | null>; output: () => string; stop: () => void } => {
        const child = spawn(
          process.execPath,
          [...HIVENODE_ARGS, 'gateway', '-Port=0', '-Strict=true', `-ResponseHeaders=${responseHeaders}`],
          { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.stderr.on('data', (c: Buffer) => (out += c.toString()));
        const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
        const exit = new Promise<number | null>((r) => child.on('exit', (code) => (clearTimeout(guard), r(code))));
        return { exit, output: () => out, stop: () => child.kill('SIGTERM') };
      };
      // both at once: each start of tsx costs a second or two on this machine
      const bad = run('X-A: 1\r\n: injected');
      const good = run('X-A: 1\\r\\nX-B: 2');
      expect(await bad.exit, bad.output()).to.equal(2);
      expect(bad.output()).to.contain('ResponseHeaders');
      const deadline = Date.now() + 15_000;
      let port: number | undefined;
      while (port === undefined && Date.now() < deadline) {
        const m = /gateway listening on port (\d+)/.exec(good.output());
        if (m) port = Number(m[1]);
        else await sleep(50);
      }
      try {
        expect(port, good.output()).to.be.a('number');
        const r = await request(`http://127.0.0.1:${port}/healthcheck`);
        await r.body.dump();
        expect(r.statusCode).to.equal(200);
        expect(r.headers).to.include({ 'x-a': '1', 'x-b': '2' });
      } finally {
        good.stop();
      }
      expect(await good.exit, 'SIGTERM drains and exits cleanly').to.equal(0);
    });

    it('CR, LF or NUL inside request header values (or the request line) are answered 400 by the parser, and reach nobody', async () => {
      const record = join(dir, 'inject.jsonl');
      const { port, node } = await start({ ControlAllowList: '*' }, { RecordFile: record });
      const evil = ['X-A: a\rb', 'X-A: a\nb', 'X-A: a\0b', 'X-A: a\r\nX-B\r\n'];
      for (const header of evil) {
        const r = await rawExchange(port, `POST /t/op HTTP/1.1\r\nHost: x\r\n${header}\r\nContent-Length: 2\r\n\r\n{}`);
        expect(r.status, JSON.stringify(header)).to.equal(400);
        expect(r.closed, JSON.stringify(header)).to.equal(true);
        const body = JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4)) as { Code: number; Message: string };
        expect(body.Code).to.equal(400);
        expect(body.Message).to.match(/^malformed request: HPE_/);
      }
      for (const line of ['POST /t/op\0 HTTP/1.1', 'POST /t/\rop HTTP/1.1', 'POST /t/op HTTP/1.1\0']) {
        const r = await rawExchange(port, `${line}\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`);
        expect(r.status, JSON.stringify(line)).to.equal(400);
      }
      expect(recordedLines(record)).to.deep.equal([]);
      expect(gatewayStatus(node).accepted).to.equal(0);
    });
  });

  describe('bodies', () => {
    it('a body over MaxBodySize gets 413, with Content-Length and chunked; one at the limit passes', async () => {
      const record = join(dir, 'bodies.jsonl');
      const { base, port } = await start({ MaxBodySize: 1024 }, { RecordFile: record });
      const fill = (size: number): string => JSON.stringify({ a: ['x'.repeat(size - 10)] });
      expect(fill(1024)).to.have.length(1024);
      const declared = await post(`${base}/t/op`, fill(1025));
      expect(declared.status).to.equal(413);
      expect(declared.json.Message).to.contain('1024');
      const atLimit = await post(`${base}/t/op`, fill(1024));
      expect(atLimit.status).to.equal(200);
      // chunked without a length: cut off while streaming
      const big = fill(4000);
      const chunks = [big.slice(0, 1000), big.slice(1000, 2000), big.slice(2000, 3000), big.slice(3000)]
        .map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`)
        .join('');
      const chunked = await rawExchange(
        port,
        `POST /t/op HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks}0\r\n\r\n`,
        2000,
      );
      expect(chunked.status).to.equal(413);
      expect(chunked.text).to.contain('over the limit of 1024 bytes');
      // a chunked body just over the limit, sent slowly, is refused as well
      const slow = await rawExchange(
        port,
        [
          'POST /t/op HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
          `200\r\n${'a'.repeat(512)}\r\n`,
          `200\r\n${'a'.repeat(512)}\r\n`,
          `1\r\na\r\n`,
          '0\r\n\r\n',
        ],
        2000,
        20,
      );
      expect(slow.status).to.equal(413);
      expect(recordedLines(record)).to.have.length(1);
    });

    it('malformed JSON gets 400 naming the parse problem; a malformed %-escape in the path 400, not 500', async () => {
      const { base } = await start({});
      for (const [body, problem] of [
        ['{"a": [', /Unexpected end of JSON input/],
        ['{"a": ["x"],}', /position 12/],
        ["{'a': ['x']}", /property name/],
        ['{"a": ["x"]} trailing', /non-whitespace|position/],
      ] as Array<[string, RegExp]>) {
        const r = await post(`${base}/t/op`, body);
        expect(r.status, body).to.equal(400);
        expect(r.json.Message, body).to.match(/^request body is not valid JSON: /);
        expect(r.json.Message, body).to.match(problem);
      }
      const escape = await post(`${base}/%E0%A4%A/op`, '{}');
      expect(escape.status).to.equal(400);
      expect(escape.json.Message).to.contain('%E0%A4%A');
    });

    it('a control character in Class or Operation (percent-decoded path, or body) is 400 naming the part, and reaches no service', async () => {
      const record = join(dir, 'control-chars.jsonl');
      const { base } = await start({}, { RecordFile: record });
      for (const [path, refused] of [
        ['/ech%00o/x', String.raw`Class from the path 'ech\u0000o' contains the control character U+0000`],
        ['/echo/x%0D%0Ay', String.raw`Operation from the path 'x\u000D\u000Ay' contains the control character U+000D`],
        ['/%1B%5B31m/x', String.raw`Class from the path '\u001B[31m' contains the control character U+001B`],
        ['/a%7Fb/x', String.raw`Class from the path 'a\u007Fb' contains the control character U+007F`],
        ['/echo/%C2%85', String.raw`Operation from the path '\u0085' contains the control character U+0085`],
      ] as const) {
        const r = await post(`${base}${path}`, '{}');
        expect(r.status, path).to.equal(400);
        expect(r.json.Message, path).to.equal(`${refused}; Class and Operation take printable characters only`);
      }
      const body = await post(`${base}/`, JSON.stringify({ Class: 'a\u0000b', Operation: 'op', Data: {} }));
      expect(body.status).to.equal(400);
      expect(body.json.Message).to.contain(
        String.raw`request body.Class 'a\u0000b' contains the control character U+0000`,
      );
      // printable names (also non-ASCII ones) still pass
      expect((await post(`${base}/%C3%A9cho/x`, '{}')).status).to.equal(200);
      expect(recordedLines(record)).to.have.length(1);
    });
  });

  describe('slow and stuck peers', () => {
    it('500 slow-loris connections leave the health check fast and are cut off after ClientTimeout (408 or closed)', async function () {
      this.timeout(40_000);
      const { port, base, node } = await start({ ClientTimeout: '2s' });
      // half stall inside the request line, half inside the headers
      const slow: Array<{ socket: Socket; inLine: boolean; got: string; closedAt: number }> = [];
      for (let i = 0; i < 500; i++) {
        const entry = { socket: connect(port, '127.0.0.1'), inLine: i % 2 === 0, got: '', closedAt: 0 };
        entry.socket.on('error', () => undefined);
        entry.socket.on('data', (c: Buffer) => (entry.got += c.toString('latin1')));
        entry.socket.on('close', () => (entry.closedAt = Date.now()));
        entry.socket.on('connect', () =>
          entry.socket.write(entry.inLine ? 'POST /t' : 'POST /t/op HTTP/1.1\r\nHost: x\r\n'),
        );
        slow.push(entry);
        if (i % 100 === 99) await sleep(10);
      }
      const opened = Date.now();
      // a little more every 300 ms (a longer path, one more header): never finishing, never idle
      let tick = 0;
      const trickle = setInterval(() => {
        tick++;
        for (const e of slow)
          if (e.closedAt === 0 && e.got === '' && e.socket.readyState === 'open')
            e.socket.write(e.inLine ? 'a' : `X-${tick}: y\r\n`);
      }, 300);
      try {
        await sleep(300);
        const times: number[] = [];
        for (let i = 0; i < 10; i++) {
          // a fresh connection each time: accepting must not be starved either
          const client = new Client(base);
          const t = performance.now();
          const r = await client.request({ path: '/healthcheck', method: 'GET' });
          await r.body.dump();
          times.push(performance.now() - t);
          await client.close();
          expect(r.statusCode).to.equal(200);
          await sleep(50);
        }
        // starved, it would wait for the 2 s ClientTimeout of the slow connections
        expect(median(times), `health check times ${times.map((t) => t.toFixed(1)).join(', ')} ms`).to.be.below(1000);
        const deadline = opened + 2_000 + 4_000;
        while (slow.some((e) => e.closedAt === 0) && Date.now() < deadline) await sleep(100);
      } finally {
        clearInterval(trickle);
      }
      const open = slow.filter((e) => e.closedAt === 0).length;
      for (const e of slow) e.socket.destroy();
      expect(open, 'slow connections still open 4 s after ClientTimeout').to.equal(0);
      const timedOut = slow.filter((e) => e.got.startsWith('HTTP/1.1 408')).length;
      const other = slow.filter((e) => e.got !== '' && !e.got.startsWith('HTTP/1.1 408'));
      expect(
        other.map((e) => e.got.slice(0, 30)),
        'answers other than 408',
      ).to.deep.equal([]);
      expect(timedOut, 'most should be told 408 before being closed').to.be.at.least(450);
      // none was cut off early: each held at least ClientTimeout (minus timer slack)
      expect(Math.min(...slow.map((e) => e.closedAt)) - opened).to.be.at.least(1_500);
      expect(gatewayStatus(node).accepted).to.equal(0);
    });

    it('a hung before interceptor is answered 504 within RequestTimeout, and the gateway stays usable', async () => {
      const sockets = new Set<Socket>();
      const hung: Server = createServer(() => undefined);
      hung.on('connection', (s: Socket) => sockets.add(s));
      await new Promise<void>((r) => hung.listen(0, '127.0.0.1', () => r()));
      servers.push({
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            hung.close(() => r());
          }),
      });
      const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/`;
      const { base, node } = await start({
        Strict: false,
        InterceptBefore: url,
        InterceptAfter: 'http://127.0.0.1:9/',
        RequestTimeout: '1s',
      });
      const timings = await Promise.all(
        [0, 1, 2].map(async () => {
          const t = Date.now();
          const r = await post(`${base}/t/op`, '{"a":["1"]}');
          return { status: r.status, ms: Date.now() - t, message: String(r.json.Message) };
        }),
      );
      for (const { status, ms, message } of timings) {
        expect(status).to.equal(504);
        expect(ms).to.be.within(900, 5000);
        expect(message).to.match(/did not answer/);
      }
      expect(gatewayStatus(node).inFlight).to.equal(0);
      const health = await request(`${base}/healthcheck`);
      expect(health.statusCode).to.equal(200);
      await health.body.dump();
    });
  });

  describe('request smuggling', () => {
    it('a corpus of ambiguous framings is answered 400 (or closed without a 2xx) and reaches no service', async () => {
      const record = join(dir, 'smuggle.jsonl');
      const { port, node } = await start({}, { RecordFile: record });
      const H = 'POST /t/op HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
      const corpus: Record<string, string> = {
        'CL.TE: Content-Length with Transfer-Encoding chunked': `${H}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        'TE.CL: Transfer-Encoding chunked then Content-Length': `${H}Transfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n2\r\n{}\r\n0\r\n\r\nPOST /t/op HTTP/1.1\r\n\r\n`,
        'duplicate conflicting Content-Length': `${H}Content-Length: 2\r\nContent-Length: 30\r\n\r\n{}`,
        'duplicate equal Content-Length': `${H}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}`,
        'Content-Length list': `${H}Content-Length: 2, 2\r\n\r\n{}`,
        'negative Content-Length': `${H}Content-Length: -2\r\n\r\n{}`,
        'signed Content-Length': `${H}Content-Length: +2\r\n\r\n{}`,
        'hexadecimal Content-Length': `${H}Content-Length: 0x2\r\n\r\n{}`,
        'Transfer-Encoding: chunked, identity': `${H}Transfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        'Transfer-Encoding: xchunked': `${H}Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        'Transfer-Encoding twice': `${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        'obs-fold header line': `${H}Content-Length: 2\r\nX-A: a\r\n b\r\n\r\n{}`,
        'obs-fold Transfer-Encoding': `${H}Transfer-Encoding:\r\n chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        'space before colon (Content-Length)': `${H}Content-Length : 2\r\n\r\n{}`,
        'space before colon (Transfer-Encoding)': `${H}Transfer-Encoding : chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        'tab before colon': `${H}Content-Length\t: 2\r\n\r\n{}`,
        'bad chunk size': `${H}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        'negative chunk size': `${H}Transfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n0\r\n\r\n`,
        'overflowing chunk size': `${H}Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n`,
        'NUL in a chunk extension': `${H}Transfer-Encoding: chunked\r\n\r\n2;\0\r\n{}\r\n0\r\n\r\n`,
        'NUL in the request line': `POST /t/op\0 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`,
        'bare LF line ends': 'POST /t/op HTTP/1.1\nHost: x\nContent-Length: 2\n\n{}',
        'unknown HTTP version': 'POST /t/op HTTP/9.9\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
        'space inside a header name': `${H}Content Length: 2\r\n\r\n{}`,
        'empty header name': `${H}: 2\r\nContent-Length: 2\r\n\r\n{}`,
        'no Host in HTTP/1.1': 'POST /t/op HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}',
      };
      const outcomes: string[] = [];
      for (const [what, bytes] of Object.entries(corpus)) {
        const r = await rawExchange(port, bytes, 2000);
        expect(r.status === 400 || (r.status === undefined && r.closed), `${what}: ${r.text.slice(0, 60)}`).to.equal(
          true,
        );
        // also no 2xx later in the stream (a smuggled second request answered)
        expect(r.text, what).to.not.match(/HTTP\/1\.[01] 2\d\d/);
        outcomes.push(`${what}: ${r.status ?? 'closed'}`);
      }
      expect(Object.keys(corpus)).to.have.length.at.least(10);
      expect(recordedLines(record), outcomes.join('\n')).to.deep.equal([]);
      // requests whose headers parsed but whose body framing failed were admitted, then failed: their slots come back
      await until(() => gatewayStatus(node).inFlight === 0, 2000);
      // the record is live: one well-formed request does land in it
      const ok = await rawExchange(port, `${H}Content-Length: 2\r\nConnection: close\r\n\r\n{}`, 2000);
      expect(ok.status).to.equal(200);
      expect(recordedLines(record)).to.have.length(1);
    });
  });

  describe('admission control', () => {
    it('MaxInFlight=4 with a 1 s service: of 20 concurrent requests the excess get 503 with Retry-After, the rest 200, none hangs', async () => {
      const { base, node } = await start({ MaxInFlight: 4 }, { Delay: '1s' });
      const started = Date.now();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => post(`${base}/t/op`, JSON.stringify({ i: [String(i)] }))),
      );
      const elapsed = Date.now() - started;
      const ok = results.filter((r) => r.status === 200);
      const busy = results.filter((r) => r.status === 503);
      expect(ok.length + busy.length, results.map((r) => r.status).join(',')).to.equal(20);
      // at most 4 in flight with a 1 s service: however slow the machine, no more than 4 per started second succeed
      expect(ok.length)
        .to.be.at.least(4)
        .and.at.most(4 * Math.ceil(elapsed / 1000));
      expect(busy.length).to.be.at.least(1);
      for (const r of busy) {
        expect(r.headers['retry-after']).to.match(/^\d+$/);
        expect(r.json.Code).to.equal(503);
      }
      for (const r of ok) expect(r.json.Data).to.have.property('i');
      expect(elapsed, 'nothing may wait for more than the service delay and a margin').to.be.below(10_000);
      const status = gatewayStatus(node);
      expect(status.refused).to.equal(busy.length);
      expect(status.inFlight).to.equal(0);
      // the slots are given back
      expect((await post(`${base}/t/op`, '{"after":["1"]}')).status).to.equal(200);
    });

    it('clients that vanish mid-body or mid-wait give their slot back (no MaxInFlight leak)', async () => {
      const { base, port, node } = await start({ MaxInFlight: 2 }, { Delay: '300ms' });
      for (let i = 0; i < 3; i++) {
        // half a body, then the connection is gone
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        await new Promise<void>((r) => socket.on('connect', () => r()));
        socket.write('POST /t/op HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a":');
        await until(() => gatewayStatus(node).accepted === 2 * i + 1, 2000);
        socket.destroy();
        // a full request, abandoned while the service is still working on it
        const gone = connect(port, '127.0.0.1');
        gone.on('error', () => undefined);
        await new Promise<void>((r) => gone.on('connect', () => r()));
        gone.write('POST /t/op HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
        await until(() => gatewayStatus(node).accepted === 2 * i + 2, 2000);
        gone.destroy();
        // the abandoned call holds its slot only while the service works on it (300 ms)
        await until(() => gatewayStatus(node).inFlight === 0, 3000);
      }
      expect(gatewayStatus(node).refused).to.equal(0);
      const results = await Promise.all([post(`${base}/t/op`, '{}'), post(`${base}/t/op`, '{}')]);
      expect(results.map((r) => r.status)).to.deep.equal([200, 200]);
    });
  });
});
