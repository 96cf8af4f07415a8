/**
 * Outbound webhooks (README, The HTTP client, Signed webhooks out): the HTTP client's Signing puts
 * the scheme's signature on every request it sends. Each signature a real upstream receives is
 * computed again with the openssl command over the bytes received; with two secrets (a rotation)
 * both are there; a gateway's own Webhooks verifier (scheme `standard`, the same secret file)
 * accepts what the client sends and refuses a wrong secret; a bad Signing stops the start naming it.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import type { IncomingMessage, Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeMessage, mapOf } from '../../protocol/message.js';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from './helpers.js';
import { tempDir } from '../temp.js';
import type { RunningGateway } from './gateway-harness.js';
import { startGateway } from './gateway-harness.js';

const BEFORE = `module://${new URL('../../examples/interceptors/data-body-before.mjs', import.meta.url).pathname}`;
/** Standard Webhooks secrets: whsec_ and the key in base64 (two 24-byte keys). */
const KEY1 = Buffer.from('hivenode-signing-key-one').toString('base64');
const KEY2 = Buffer.from('hivenode-signing-key-two').toString('base64');

interface Received {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

describe('HTTP client Signing: outbound webhooks signed as the receiver expects', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let server: Server | undefined;
  let gw: RunningGateway | undefined;
  let dir: string;
  let received: Received[];
  beforeEach(async () => {
    dir = tempDir('hn-signing-');
    received = [];
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    await gw?.stop();
    gw = undefined;
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  const url = (): string => `http://127.0.0.1:${(server!.address() as AddressInfo).port}/hook`;
  const send = async (signing: string, control: Record<string, string[]> = {}, target = url()): Promise<number> => {
    ({ node } = await startTestNode([
      { service: 'httpclient', NAME: 'web', URL: target, InterceptBefore: BEFORE, Signing: signing },
    ]));
    const r = await node.hive.call(
      'web',
      makeMessage({ Control: mapOf(control), Data: mapOf({ event: ['invoice.paid'], amount: ['42'] }) }),
      10_000,
    );
    return r.Code;
  };
  /** HMAC-SHA256 by the openssl command: of `data` under a key given as hex (Standard Webhooks) or as text. */
  const openssl = (key: { hex: string } | { text: string }, data: Buffer): Buffer => {
    const file = join(dir, 'signed');
    writeFileSync(file, data);
    const mac = 'hex' in key ? ['-mac', 'HMAC', '-macopt', `hexkey:${key.hex}`] : ['-hmac', key.text];
    return execFileSync('openssl', ['dgst', '-sha256', ...mac, '-binary', file]);
  };
  const header = (r: Received, name: string): string => String(r.headers[name]);

  it('standard: webhook-id, webhook-timestamp and one v1 signature per secret, as openssl computes them; webhook-id from the control', async () => {
    expect(await send(`standard:whsec_${KEY1},whsec_${KEY2}`, { 'webhook-id': ['evt_42'] })).to.equal(200);
    const r = received[0]!;
    expect(header(r, 'webhook-id')).to.equal('evt_42');
    const ts = header(r, 'webhook-timestamp');
    expect(Math.abs(Number(ts) - Date.now() / 1000)).to.be.below(10);
    const signed = Buffer.concat([Buffer.from(`evt_42.${ts}.`), r.body]);
    const expected = [KEY1, KEY2].map(
      (k) => `v1,${openssl({ hex: Buffer.from(k, 'base64').toString('hex') }, signed).toString('base64')}`,
    );
    expect(header(r, 'webhook-signature').split(' ')).to.deep.equal(expected);
    expect(JSON.parse(r.body.toString())).to.deep.equal({ event: ['invoice.paid'], amount: ['42'] });
  });

  it('standard without a webhook-id control: a new msg_ id per request', async () => {
    expect(await send(`standard:whsec_${KEY1}`)).to.equal(200);
    expect(header(received[0]!, 'webhook-id')).to.match(/^msg_[0-9a-f]{32}$/);
  });

  it('github: X-Hub-Signature-256 over the body, with the first secret; the secret read from a file', async () => {
    const file = join(dir, 'gh.secret');
    writeFileSync(file, 'gh-secret\n');
    expect(await send(`github:file://${file},old-secret`)).to.equal(200);
    const r = received[0]!;
    expect(header(r, 'x-hub-signature-256')).to.equal(
      `sha256=${openssl({ text: 'gh-secret' }, r.body).toString('hex')}`,
    );
  });

  it('stripe: Stripe-Signature t=…,v1=…,v1=… over t.body, one v1 per secret', async () => {
    expect(await send('stripe:sk_new,sk_old')).to.equal(200);
    const r = received[0]!;
    const fields = header(r, 'stripe-signature').split(',');
    const t = fields[0]!.replace(/^t=/, '');
    const signed = Buffer.concat([Buffer.from(`${t}.`), r.body]);
    expect(fields.slice(1)).to.deep.equal(
      ['sk_new', 'sk_old'].map((s) => `v1=${openssl({ text: s }, signed).toString('hex')}`),
    );
  });

  it("a gateway's Webhooks (scheme standard, the same secret file) accepts what the client signed, and refuses another secret", async () => {
    const secret = join(dir, 'hook.secret');
    writeFileSync(secret, `whsec_${KEY1}\n`);
    gw = await startGateway({ Webhooks: `hooks/*=standard:file://${secret}` });
    expect(await send(`standard:file://${secret}`, {}, `${gw.base}/hooks/paid`)).to.equal(200);
    await node!.stop(2000);
    node = undefined;
    const refused = await send(`standard:whsec_${KEY2}`, {}, `${gw.base}/hooks/paid`);
    expect(refused).to.equal(401);
    expect(gw.logs()).to.match(/webhook route 'hooks\/\*'.*the webhook-signature signature does not match the body/);
  });

  it("the gateway's standard verifier: openssl-signed request accepted once, a replay and an old timestamp refused, rotation's second signature accepted", async () => {
    const secret = join(dir, 'hook.secret');
    writeFileSync(secret, `whsec_${KEY1}\n`);
    gw = await startGateway({ Webhooks: `hooks/*=standard:file://${secret}`, WebhookTolerance: '5m' });
    const body = Buffer.from('{"event":["paid"]}');
    const post = async (id: string, ts: number, signature: string): Promise<{ status: number; message: string }> => {
      const res = await fetch(`${gw!.base}/hooks/paid`, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(ts),
          'webhook-signature': signature,
        },
      });
      return { status: res.status, message: ((await res.json()) as { Message: string }).Message };
    };
    const sign = (key: string, id: string, ts: number): string =>
      `v1,${openssl({ hex: Buffer.from(key, 'base64').toString('hex') }, Buffer.concat([Buffer.from(`${id}.${ts}.`), body])).toString('base64')}`;
    const now = Math.floor(Date.now() / 1000);
    // a sender rotating: the unknown key's signature first, then ours
    expect(await post('msg_1', now, `${sign(KEY2, 'msg_1', now)} ${sign(KEY1, 'msg_1', now)}`)).to.deep.equal({
      status: 200,
      message: 'Success',
    });
    expect(await post('msg_1', now, sign(KEY1, 'msg_1', now))).to.deep.equal({
      status: 401,
      message: 'webhook signature refused: this webhook signature was received before (a replay)',
    });
    const old = now - 600;
    expect((await post('msg_2', old, sign(KEY1, 'msg_2', old))).message).to.match(
      /the webhook-timestamp timestamp is 60\d s from now, beyond WebhookTolerance/,
    );
    expect((await post('msg_3', now, sign(KEY1, 'msg_other', now))).message).to.equal(
      'webhook signature refused: the webhook-signature signature does not match the body',
    );
  });

  for (const [signing, why] of [
    ['hmac:abc', /Signing: 'hmac' is not a signing scheme/],
    ['standard:', /Signing: 'standard' names no secret/],
    ['standard:plain-secret', /Signing: the first secret: a Standard Webhooks secret starts with 'whsec_'/],
    ['standard:whsec_!!!', /Signing: the first secret: the part after 'whsec_' is not base64/],
    ['github:a,b,c', /Signing: 3 secrets given; at most two/],
    ['stripe:file:///nonexistent/hook.secret', /Signing: cannot read secret file '\/nonexistent\/hook.secret': ENOENT/],
  ] as const) {
    it(`refuses Signing '${signing}' at start, naming what is wrong`, async () => {
      const err = await send(signing).catch((e: unknown) => e);
      expect((err as Error).message).to.match(why);
    });
  }
});
