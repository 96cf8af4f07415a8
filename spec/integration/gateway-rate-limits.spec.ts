/**
 * Rate limits per route through a real gateway (README, Rate limits): the 429 with Retry-After and the
 * IETF RateLimit / RateLimit-Policy headers, buckets per route, user and client address, and the
 * admitted rate under a load generator (wrk, bounded in time) within 10 % of the limit.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { tempDir } from '../temp.js';
import type { RunningGateway } from './gateway-harness.js';
import { startError, startGateway } from './gateway-harness.js';

const run = promisify(execFile);

async function post(
  gw: RunningGateway,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; json: Record<string, unknown> }> {
  const res = await request(`${gw.base}/${path}`, {
    method: 'POST',
    body: '{"a":["1"]}',
    headers: { 'content-type': 'application/json', ...headers },
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    headers: res.headers,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

const basic = (user: string): string => `Basic ${Buffer.from(`${user}:pw`).toString('base64')}`;
const gwStatus = (gw: RunningGateway): { rateLimited: number } =>
  gw.node.services.find((s) => s.kind === 'gateway')!.running.status() as never;

describe('gateway rate limits (RateLimits)', function () {
  this.timeout(40_000);
  let gw: RunningGateway | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir('hn-gwrate-');
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('over the limit: 429 with Retry-After, RateLimit and RateLimit-Policy; the most specific entry decides; unlimited routes carry no headers', async () => {
    gw = await startGateway({ RateLimits: 'echo=3/m;echo/fast=2/s,burst=5', Routes: 'echo=echo;open=echo' });
    const first = await post(gw, 'echo/slow');
    expect(first.status).to.equal(200);
    expect(first.headers['ratelimit-policy']).to.equal('"echo";q=3;w=60');
    expect(first.headers.ratelimit).to.equal('"echo";r=2;t=20');
    expect((await post(gw, 'echo/other')).status, 'by=route: echo/other has its own bucket').to.equal(200);
    expect((await post(gw, 'echo/slow')).status).to.equal(200);
    expect((await post(gw, 'echo/slow')).status).to.equal(200);
    const over = await post(gw, 'echo/slow');
    expect(over.status).to.equal(429);
    expect(over.json.Message).to.match(/^the rate limit of route 'echo\/slow' is reached; retry in 2\d s$/);
    expect(Number(over.headers['retry-after'])).to.be.within(19, 20);
    expect(over.headers.ratelimit).to.match(/^"echo";r=0;t=(59|60)$/);
    for (let i = 0; i < 5; i++) expect((await post(gw, 'echo/fast')).status, `burst ${i}`).to.equal(200);
    const fast = await post(gw, 'echo/fast');
    expect(fast.status).to.equal(429);
    expect(fast.headers['ratelimit-policy']).to.equal('"echo/fast";q=2;w=1;burst=5');
    expect(fast.headers['retry-after']).to.equal('1');
    const open = await post(gw, 'open/x');
    expect(open.status).to.equal(200);
    expect(open.headers.ratelimit).to.equal(undefined);
    expect(gwStatus(gw).rateLimited).to.equal(2);
  });

  it('by=user and by=ip keep a bucket each; a refused request (401) spends no token', async () => {
    const users = join(dir, 'users');
    writeFileSync(users, `${await passwdLine('ann', 'pw', 4)}\n${await passwdLine('bob', 'pw', 4)}\n`);
    gw = await startGateway({ Users: users, RateLimits: 'echo=2/m,by=user;ip=2/m,by=ip', Routes: 'echo=echo;ip=echo' });
    for (const user of ['ann', 'bob']) {
      expect((await post(gw, 'echo/x', { authorization: basic(user) })).status).to.equal(200);
      expect((await post(gw, 'echo/y', { authorization: basic(user) })).status).to.equal(200);
      expect((await post(gw, 'echo/z', { authorization: basic(user) })).status, `${user}'s third`).to.equal(429);
    }
    expect((await post(gw, 'ip/x')).status, 'no credentials').to.equal(401);
    expect((await post(gw, 'ip/x', { authorization: basic('ann') })).status).to.equal(200);
    expect((await post(gw, 'ip/y', { authorization: basic('bob') })).status, 'same address, other user').to.equal(200);
    expect((await post(gw, 'ip/z', { authorization: basic('ann') })).status).to.equal(429);
  });

  it('under load (wrk, 8 connections, 4 s after a 1 s warm-up that spends the burst) the admitted rate is within 10 % of the limit', async () => {
    const limit = 150;
    // burst is the default (= the limit): tokens saved while the node is held up (a shared CPU) are
    // spent after, so the rate over the run is the limit; the warm-up empties the initial burst
    gw = await startGateway({ RateLimits: `echo=${limit}/s` });
    const script = join(dir, 'post.lua');
    writeFileSync(
      script,
      'wrk.method = "POST"\nwrk.body = \'{"a":["1"]}\'\nwrk.headers["Content-Type"] = "application/json"\n',
    );
    const wrk = (seconds: number) =>
      run('wrk', ['-t1', '-c8', `-d${seconds}s`, '--timeout', '2s', '-s', script, `${gw!.base}/echo/load`], {
        timeout: 20_000,
      });
    await wrk(1);
    const before = gwStatus(gw).rateLimited;
    const { stdout } = await wrk(4);
    const m = /(\d+) requests in ([\d.]+)s/.exec(stdout);
    const total = Number(m?.[1]);
    const seconds = Number(m?.[2]);
    const refused = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
    const admitted = total - refused;
    const rate = admitted / seconds;
    expect(refused, stdout).to.be.greaterThan(admitted);
    expect(rate, `admitted ${admitted} of ${total} in ${seconds} s`).to.be.within(limit * 0.9, limit * 1.1);
    // wrk stops counting with requests still in flight on its 8 connections
    expect(gwStatus(gw).rateLimited - before).to.be.closeTo(refused, 16);
  });

  it('the start refuses a bad RateLimits entry in one line naming it', async () => {
    const refused: Array<[string, RegExp]> = [
      ['echo=10', /RateLimits: entry 'echo=10': '10' is not a rate \(N\/s or N\/m/],
      ['echo=0/s', /is not a rate/],
      ['echo=10/h', /is not a rate/],
      ['echo=10/s,burst=0', /burst '0' is not a whole number of at least 1/],
      ['echo=10/s,by=tenant', /by 'tenant' is not user, ip or route/],
      ['echo=10/s,speed=2', /'speed=2' is not an option/],
    ];
    for (const [limits, message] of refused) {
      const error = await startError({ RateLimits: limits });
      expect(String(error), limits).to.match(message);
      expect(error?.name, limits).to.equal('ConfigError');
    }
  });
});
