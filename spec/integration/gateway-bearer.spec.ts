/**
 * Bearer tokens through a real gateway (README, Bearer tokens): keys made here, tokens signed with
 * jose, a JWKS served over HTTPS by a local server that rotates its key mid-test, and each way a token
 * is refused — expired, not yet valid, wrong issuer or audience, algorithm none, an unknown key, an
 * HMAC token made with the RSA public key as its secret (the classic confusion) — answered 401 with
 * `WWW-Authenticate: Bearer error="invalid_token"` and logged without the token.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:https';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { JWK, KeyLike } from 'jose';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair } from 'jose';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { certPath, certText } from '../certs.js';
import { tempDir } from '../temp.js';
import type { RunningGateway } from './gateway-harness.js';
import { startError, startGateway } from './gateway-harness.js';
import { sleep } from '../support/wait.js';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'orders-api';

interface Key {
  kid: string;
  alg: string;
  priv: KeyLike;
  jwk: JWK;
}

async function makeKey(kid: string, alg = 'RS256'): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, priv: privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

interface Claims {
  sub?: string;
  iss?: string;
  aud?: string;
  exp?: number;
  nbf?: number;
  groups?: unknown;
}

const now = (): number => Math.floor(Date.now() / 1000);

async function token(key: Key, claims: Claims = {}): Promise<string> {
  const c = { sub: 'alice', iss: ISSUER, aud: AUDIENCE, exp: now() + 300, ...claims };
  const jwt = new SignJWT(c.groups === undefined ? {} : { groups: c.groups })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setIssuedAt()
    .setExpirationTime(c.exp);
  if (c.sub) jwt.setSubject(c.sub);
  if (c.iss) jwt.setIssuer(c.iss);
  if (c.aud) jwt.setAudience(c.aud);
  if (c.nbf !== undefined) jwt.setNotBefore(c.nbf);
  return jwt.sign(key.priv);
}

const b64url = (v: string | Buffer): string => Buffer.from(v).toString('base64url');

async function post(
  gw: RunningGateway,
  path: string,
  authorization?: string,
): Promise<{ status: number; challenge: string | undefined; json: Record<string, unknown> }> {
  const res = await request(`${gw.base}/${path}`, {
    method: 'POST',
    body: '{"a":["1"]}',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
  });
  const text = await res.body.text();
  const challenge = res.headers['www-authenticate'];
  return {
    status: res.statusCode,
    challenge: typeof challenge === 'string' ? challenge : undefined,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

/** An HTTPS JWKS endpoint whose key set the test changes; counts its fetches. */
interface JwksServer {
  url: string;
  keys: JWK[];
  maxAge: number;
  fetches: number;
  close(): Promise<void>;
}

async function jwksServer(keys: JWK[], maxAge = 3600): Promise<JwksServer> {
  const state = { keys, maxAge, fetches: 0 };
  const server: Server = createServer({ cert: certText('server.pem'), key: certText('server.key') }, (_req, res) => {
    state.fetches++;
    res.writeHead(200, {
      'content-type': 'application/jwk-set+json',
      'cache-control': `public, max-age=${state.maxAge}`,
    });
    res.end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(state, {
    url: `https://127.0.0.1:${port}/.well-known/jwks.json`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  }) as JwksServer;
}

describe('gateway Bearer tokens (JWKS, JWT…)', function () {
  this.timeout(30_000);
  let gw: RunningGateway | undefined;
  let idp: JwksServer | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir('hn-gwbearer-');
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    await idp?.close();
    idp = undefined;
  });

  const jwksFile = (keys: Key[]): string => {
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: keys.map((k) => k.jwk) }));
    return `file://${file}`;
  };

  it('a valid token authenticates its user; each kind of bad token is 401 with Bearer error="invalid_token", logged without the token', async () => {
    const rsa = await makeKey('rsa-1');
    const ec = await makeKey('ec-1', 'ES256');
    const ed = await makeKey('ed-1', 'EdDSA');
    const stranger = await makeKey('rsa-1');
    gw = await startGateway({
      JWKS: jwksFile([rsa, ec, ed]),
      JWTIssuer: ISSUER,
      JWTAudience: `${AUDIENCE}, other-api`,
      JWTClockSkew: '30s',
    });
    for (const k of [rsa, ec, ed]) {
      const ok = await post(gw, 'echo', `Bearer ${await token(k)}`);
      expect(ok.status, k.alg).to.equal(200);
      expect(ok.json.Data).to.deep.equal({ a: ['1'] });
    }
    expect(
      (await post(gw, 'echo', `Bearer ${await token(rsa, { aud: 'other-api' })}`)).status,
      'second audience',
    ).to.equal(200);
    expect(
      (await post(gw, 'echo', `Bearer ${await token(rsa, { exp: now() - 10 })}`)).status,
      'expired within the clock skew',
    ).to.equal(200);

    const spki = await exportSPKI(
      (await import('node:crypto')).createPublicKey({ key: rsa.jwk as never, format: 'jwk' }) as never,
    );
    const header = (alg: string): string => b64url(JSON.stringify({ alg, kid: 'rsa-1', typ: 'JWT' }));
    const body = b64url(JSON.stringify({ sub: 'mallory', iss: ISSUER, aud: AUDIENCE, exp: now() + 300 }));
    const { createHmac } = await import('node:crypto');
    const hmacWithPublicKey = `${header('HS256')}.${body}.${createHmac('sha256', spki)
      .update(`${header('HS256')}.${body}`)
      .digest('base64url')}`;
    const bad: Array<[string, string]> = [
      ['expired', await token(rsa, { exp: now() - 120 })],
      ['not yet valid', await token(rsa, { nbf: now() + 120 })],
      ['wrong issuer', await token(rsa, { iss: 'https://evil.example' })],
      ['wrong audience', await token(rsa, { aud: 'billing-api' })],
      ['algorithm none', `${header('none')}.${body}.`],
      ['unknown key (same kid, other key)', await token(stranger)],
      ['unknown key id', await token(await makeKey('rsa-9'))],
      ['HMAC token with the RSA public key as secret', hmacWithPublicKey],
      ['no user claim', await token(rsa, { sub: '' })],
      ['not a JWT', 'abc.def'],
    ];
    for (const [what, t] of bad) {
      const r = await post(gw, 'echo', `Bearer ${t}`);
      expect(r.status, what).to.equal(401);
      expect(r.challenge, what).to.equal('Bearer error="invalid_token"');
      expect(r.json.Code, what).to.equal(401);
    }
    const none = await post(gw, 'echo');
    expect(none.status).to.equal(401);
    expect(none.challenge).to.equal('Bearer realm="hivenode"');
    const logs = gw.logs();
    expect(logs).to.match(/401: Bearer token from \S+ refused: the token has expired/);
    expect(logs).to.include('refused: the token\'s "aud" claim is not accepted');
    for (const [, t] of bad) expect(logs).not.to.include(t.split('.')[2] || t);
  });

  it('groups from the token claim feed Access, as the groups file does; Basic and Bearer both on', async () => {
    const rsa = await makeKey('k1');
    const users = join(dir, 'users');
    writeFileSync(users, `${await passwdLine('bob', 'pw-bob', 4)}\n`);
    const groups = join(dir, 'groups');
    writeFileSync(groups, 'ops: bob\n');
    gw = await startGateway({
      JWKS: jwksFile([rsa]),
      JWTGroupsClaim: 'groups',
      Users: users,
      Groups: groups,
      Access: 'orders=buyers,ops;admin=admins;*=ops',
      Routes: 'orders=echo;admin=echo',
    });
    const buyer = `Bearer ${await token(rsa, { sub: 'carol', groups: ['buyers'] })}`;
    const admin = `Bearer ${await token(rsa, { sub: 'dave', groups: 'readers admins' })}`;
    const noGroups = `Bearer ${await token(rsa, { sub: 'erin' })}`;
    const basicBob = `Basic ${Buffer.from('bob:pw-bob').toString('base64')}`;
    expect((await post(gw, 'orders', buyer)).status, 'buyers × orders').to.equal(200);
    expect((await post(gw, 'admin', buyer)).status, 'buyers × admin').to.equal(403);
    expect((await post(gw, 'admin', admin)).status, 'space-separated claim × admin').to.equal(200);
    expect((await post(gw, 'orders', admin)).status, 'admins × orders').to.equal(403);
    expect((await post(gw, 'orders', noGroups)).status, 'no groups').to.equal(403);
    expect((await post(gw, 'orders', basicBob)).status, 'Basic bob (ops in the file)').to.equal(200);
    expect((await post(gw, 'admin', basicBob)).status, 'Basic bob × admin').to.equal(403);
    const none = await post(gw, 'orders');
    expect(none.status).to.equal(401);
    expect(none.challenge).to.equal('Basic realm="hivenode", charset="UTF-8", Bearer realm="hivenode"');
    expect((await post(gw, 'orders', `Basic ${Buffer.from('bob:wrong').toString('base64')}`)).challenge).to.include(
      'Basic realm',
    );
  });

  it('an https:// JWKS served by a provider that rotates its key: fetched at start, again on an unknown key id (at most once a minute)', async () => {
    const first = await makeKey('2026-a');
    idp = await jwksServer([first.jwk], 3600);
    gw = await startGateway({ JWKS: idp.url, JWKSCA: certPath('ca.pem'), JWTAudience: AUDIENCE });
    expect(idp.fetches, 'fetched at start').to.equal(1);
    expect((await post(gw, 'echo', `Bearer ${await token(first)}`)).status).to.equal(200);
    expect((await post(gw, 'echo', `Bearer ${await token(first)}`)).status).to.equal(200);
    expect(idp.fetches, 'cached within max-age').to.equal(1);

    // the provider rotates: a new key signs, the old one is withdrawn
    const second = await makeKey('2026-b');
    idp.keys = [second.jwk];
    expect((await post(gw, 'echo', `Bearer ${await token(second)}`)).status, 'new key after rotation').to.equal(200);
    expect(idp.fetches, 'one refetch for the unknown key id').to.equal(2);
    expect((await post(gw, 'echo', `Bearer ${await token(first)}`)).status, 'withdrawn key').to.equal(401);

    // a second rotation within the minute: no refetch, so its tokens wait (and a flood of made-up key ids costs nothing)
    const third = await makeKey('2026-c');
    idp.keys = [third.jwk];
    for (let i = 0; i < 5; i++) expect((await post(gw, 'echo', `Bearer ${await token(third)}`)).status).to.equal(401);
    expect(idp.fetches, 'at most one unknown-key refetch a minute').to.equal(2);
  });

  it("an https:// JWKS's max-age is kept: the set is fetched again once it ends", async () => {
    const first = await makeKey('m-1');
    idp = await jwksServer([first.jwk], 1);
    gw = await startGateway({ JWKS: idp.url, JWKSCA: certPath('ca.pem') });
    expect((await post(gw, 'echo', `Bearer ${await token(first)}`)).status).to.equal(200);
    expect(idp.fetches).to.equal(1);
    // the provider publishes a second key beside the first, which the cached set lacks
    const second = await makeKey('m-2');
    idp.keys = [first.jwk, second.jwk];
    await sleep(2300);
    // the cache has ended (max-age 1 s, kept at least 2 s): a token of a known key makes the set be fetched again first
    expect((await post(gw, 'echo', `Bearer ${await token(first)}`)).status).to.equal(200);
    expect(idp.fetches, 'fetched again after max-age').to.equal(2);
    // so the second key is known without an unknown-key refetch
    expect((await post(gw, 'echo', `Bearer ${await token(second)}`)).status).to.equal(200);
    expect(idp.fetches).to.equal(2);
  });

  it('HMAC tokens with JWTSecret (a file:// secret); the start refuses unsafe or incomplete settings in one line', async () => {
    const secretFile = join(dir, 'jwt-secret');
    const secret = 'a-shared-secret-of-at-least-32-bytes-0123456789';
    writeFileSync(secretFile, `${secret}\n`);
    gw = await startGateway({ JWTSecret: `file://${secretFile}`, JWTAlgorithms: 'HS256' });
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('svc')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(secret));
    expect((await post(gw, 'echo', `Bearer ${hs}`)).status).to.equal(200);
    const wrong = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('svc')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(`${secret}x`));
    expect((await post(gw, 'echo', `Bearer ${wrong}`)).status).to.equal(401);
    const noExp = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('svc')
      .sign(new TextEncoder().encode(secret));
    expect((await post(gw, 'echo', `Bearer ${noExp}`)).status, 'a token without exp').to.equal(401);
    await gw.stop();
    gw = undefined;

    const refused: Array<[Record<string, string>, RegExp]> = [
      [{ JWKS: jwksFile([]), JWTAlgorithms: 'RS256,none' }, /'none' \(unsigned tokens\) is never accepted/],
      [{ JWKS: jwksFile([]), JWTAlgorithms: 'RS256,HS256' }, /HS256 but JWTSecret is not set/],
      [{ JWTSecret: 'short', JWTAlgorithms: 'HS256' }, /at least 32/],
      [{ JWKS: 'http://idp.example/jwks' }, /neither a file:\/\/ path nor an https:\/\/ URL/],
      [{ JWTIssuer: ISSUER }, /JWTIssuer is set but neither JWKS nor JWTSecret is/],
      [{ JWKS: 'https://127.0.0.1:1/jwks' }, /JWKS: cannot fetch the key set from https:\/\/127\.0\.0\.1:1\/jwks/],
      [
        { JWKS: jwksFile([]), Access: 'orders=buyers' },
        /Access names 'buyers' but Groups is not set; .*JWTGroupsClaim/,
      ],
    ];
    for (const [params, message] of refused) {
      const error = await startError(params);
      expect(String(error), JSON.stringify(params)).to.match(message);
      expect(error?.name, JSON.stringify(params)).to.equal('ConfigError');
    }
  });
});
