/**
 * Signed webhooks through a real gateway (README, Signed webhooks): GitHub, Stripe, Shopify and a
 * generic hmac-sha256:<Header> signature, each computed with the openssl command over the exact bytes
 * sent; a body changed by one byte, a wrong or missing signature, a replayed or old Stripe event are
 * 401 before the hive; secrets rotate (two at once, and a file rewritten); Access and Basic do not
 * apply to a webhook route, whose user is webhook:<route>.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { tempDir } from '../temp.js';
import type { RunningGateway } from './gateway-harness.js';
import { startError, startGateway } from './gateway-harness.js';
import { until } from '../support/wait.js';

const BODY = Buffer.from('{"event":["push"],"ref":["refs/heads/main"]}');

async function post(
  gw: RunningGateway,
  path: string,
  headers: Record<string, string>,
  body: Buffer = BODY,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await request(`${gw.base}/${path}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const gwStatus = (gw: RunningGateway): { unauthorized: number } =>
  gw.node.services.find((s) => s.kind === 'gateway')!.running.status() as never;

describe('gateway signed webhooks (Webhooks, WebhookTolerance)', function () {
  this.timeout(40_000);
  let gw: RunningGateway | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir('hn-gwhooks-');
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  /** HMAC-SHA256 of `data` under `secret`, computed by the openssl command. */
  const openssl = (secret: string, data: Buffer): Buffer => {
    const file = join(dir, 'payload');
    writeFileSync(file, data);
    return execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret, '-binary', file]);
  };
  const secretFile = (name: string, secret: string): string => {
    const file = join(dir, name);
    writeFileSync(file, `${secret}\n`);
    return file;
  };

  async function start(): Promise<RunningGateway> {
    const users = join(dir, 'users');
    writeFileSync(users, `${await passwdLine('ann', 'pw', 4)}\n`);
    const hooks = [
      `gh=github:file://${secretFile('gh', 'gh-secret-1')}`,
      `pay=stripe:file://${secretFile('stripe-new', 'whsec_new')},file://${secretFile('stripe-old', 'whsec_old')}`,
      `shop=shopify:file://${secretFile('shop', 'shpss_1')}`,
      `acme/*=hmac-sha256:X-Acme-Signature:file://${secretFile('acme', 'acme key with spaces')}`,
    ].join(';');
    return startGateway({
      Users: users,
      Access: 'echo=*',
      Routes: 'gh=echo;pay=echo;shop=echo;acme=echo',
      Webhooks: hooks,
      WebhookTolerance: '5m',
      LOGLEVEL: 'debug',
    });
  }

  it('github: X-Hub-Signature-256 over the exact bytes; one byte changed, a wrong secret, none: 401 before the hive; the secret file rotates', async () => {
    gw = await start();
    const sig = (secret: string, body = BODY): string => `sha256=${openssl(secret, body).toString('hex')}`;
    const ok = await post(gw, 'gh', { 'x-hub-signature-256': sig('gh-secret-1') });
    expect(ok.status).to.equal(200);
    expect(ok.json.Data).to.deep.equal({ event: ['push'], ref: ['refs/heads/main'] });
    expect(gw.logs()).to.include('user webhook:gh (webhook signature)');

    const changed = Buffer.from(BODY);
    changed[changed.length - 3] = changed[changed.length - 3]! ^ 0x01;
    const oneByte = await post(gw, 'gh', { 'x-hub-signature-256': sig('gh-secret-1') }, changed);
    expect(oneByte.status, 'a body changed by one byte').to.equal(401);
    expect(oneByte.json.Message).to.equal(
      'webhook signature refused: the X-Hub-Signature-256 signature does not match the body',
    );
    expect((await post(gw, 'gh', { 'x-hub-signature-256': sig('another-secret') })).status, 'wrong secret').to.equal(
      401,
    );
    expect(
      (await post(gw, 'gh', { 'x-hub-signature-256': sig('gh-secret-1').toUpperCase() })).status,
      'sha256= prefix changed',
    ).to.equal(401);
    const none = await post(gw, 'gh', {});
    expect(none.status).to.equal(401);
    expect(none.json.Message).to.equal('webhook signature refused: the X-Hub-Signature-256 header is missing');
    // Basic credentials do not stand in for the signature
    expect(
      (await post(gw, 'gh', { authorization: `Basic ${Buffer.from('ann:pw').toString('base64')}` })).status,
    ).to.equal(401);
    expect(gwStatus(gw).unauthorized).to.equal(5);
    expect(gw.logs()).to.match(
      /401: webhook route 'gh' from \S+ refused: the X-Hub-Signature-256 signature does not match the body/,
    );

    // the secret is rotated by rewriting its file: the new one is taken within the recheck interval (5 s)
    const file = join(dir, 'gh');
    writeFileSync(file, 'gh-secret-2\n');
    const later = new Date(Date.now() + 10_000);
    utimesSync(file, later, later);
    let status = 0;
    await until(
      async () => (status = (await post(gw!, 'gh', { 'x-hub-signature-256': sig('gh-secret-2') })).status) === 200,
      { ms: 9_000, every: 200, what: () => `the new secret taken (last status ${status})` },
    );
    expect((await post(gw, 'gh', { 'x-hub-signature-256': sig('gh-secret-1') })).status, 'old secret').to.equal(401);
    expect(gw.logs()).not.to.include('gh-secret');
  });

  it('stripe: t.body signed, either of two secrets while rotating; a replayed event and one older than WebhookTolerance are refused', async () => {
    gw = await start();
    const stripe = (secret: string, t: number, body = BODY): string =>
      `t=${t},v1=${openssl(secret, Buffer.concat([Buffer.from(`${t}.`), body])).toString('hex')},v0=${'0'.repeat(64)}`;
    const now = Math.floor(Date.now() / 1000);
    const header = stripe('whsec_new', now);
    expect((await post(gw, 'pay', { 'stripe-signature': header })).status, 'current secret').to.equal(200);
    const replay = await post(gw, 'pay', { 'stripe-signature': header });
    expect(replay.status, 'the same event again').to.equal(401);
    expect(replay.json.Message).to.equal(
      'webhook signature refused: this Stripe event signature was received before (a replay)',
    );
    expect(
      (await post(gw, 'pay', { 'stripe-signature': stripe('whsec_old', now + 1) })).status,
      'the secret being rotated out',
    ).to.equal(200);
    const old = await post(gw, 'pay', { 'stripe-signature': stripe('whsec_new', now - 400) });
    expect(old.status, 'an event older than 5 minutes').to.equal(401);
    expect(old.json.Message).to.match(/timestamp is 40\d s from now, beyond WebhookTolerance/);
    const moved = Buffer.from(BODY.toString().replace('main', 'mair'));
    expect(
      (await post(gw, 'pay', { 'stripe-signature': stripe('whsec_new', now + 2) }, moved)).status,
      'a body changed by one byte',
    ).to.equal(401);
    // the timestamp is signed too: moving it forward breaks the signature
    expect(
      (await post(gw, 'pay', { 'stripe-signature': header.replace(`t=${now}`, `t=${now + 3}`) })).status,
      'timestamp changed',
    ).to.equal(401);
    expect((await post(gw, 'pay', { 'stripe-signature': `v1=${'a'.repeat(64)}` })).status, 'no timestamp').to.equal(
      401,
    );
  });

  it('shopify (base64) and hmac-sha256:<Header> (hex or base64); Access and Basic still hold the other routes', async () => {
    gw = await start();
    expect(
      (await post(gw, 'shop', { 'x-shopify-hmac-sha256': openssl('shpss_1', BODY).toString('base64') })).status,
    ).to.equal(200);
    expect(
      (await post(gw, 'shop', { 'x-shopify-hmac-sha256': openssl('shpss_2', BODY).toString('base64') })).status,
    ).to.equal(401);
    expect(
      (await post(gw, 'acme/order', { 'x-acme-signature': openssl('acme key with spaces', BODY).toString('hex') }))
        .status,
      'hex',
    ).to.equal(200);
    expect(
      (
        await post(gw, 'acme/refund', {
          'x-acme-signature': `sha256=${openssl('acme key with spaces', BODY).toString('base64')}`,
        })
      ).status,
      'base64',
    ).to.equal(200);
    expect(
      (
        await post(gw, 'acme/order', {
          'x-hub-signature-256': `sha256=${openssl('acme key with spaces', BODY).toString('hex')}`,
        })
      ).status,
      'the wrong header',
    ).to.equal(401);
    expect(gw.logs()).to.include('user webhook:acme/* (webhook signature)');
    expect((await post(gw, 'echo', {})).status, 'a route outside Webhooks needs credentials').to.equal(401);
    expect(
      (await post(gw, 'echo', { authorization: `Basic ${Buffer.from('ann:pw').toString('base64')}` })).status,
    ).to.equal(200);
  });

  it('the start refuses a bad Webhooks entry in one line naming it', async () => {
    const refused: Array<[string, RegExp]> = [
      ['gh=github:gh-secret-1', /Webhooks: entry 'gh=github:gh-secret-1': the secret must be a file:\/\/ reference/],
      [`gh=gitlab:file://${secretFile('s', 'x')}`, /'gitlab' is not a webhook scheme/],
      [`gh=hmac-sha256:file://${secretFile('s', 'x')}`, /hmac-sha256 needs the header carrying the signature/],
      [
        `gh=github:file://${join(dir, 'missing')}`,
        /Webhooks: cannot read secret file of route 'gh' '.*missing': ENOENT/,
      ],
      ['gh=github:', /names no secret/],
    ];
    for (const [hooks, message] of refused) {
      const error = await startError({ Webhooks: hooks });
      expect(String(error), hooks).to.match(message);
      expect(error?.name, hooks).to.equal('ConfigError');
    }
  });
});
