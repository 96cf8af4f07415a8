/**
 * CORS per route through a real gateway (README, CORS): preflights answered by the gateway (methods,
 * headers, Max-Age), the allowed origin on every answer of a browser's request (errors included), a
 * request from an origin the route's entry does not name refused with 403, `*` with credentials
 * refused at start, DevMode as before; and headless chromium calling the gateway from a page of an
 * allowed origin and failing from another.
 */
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { launchChromium } from '../browser.js';
import { tempDir } from '../temp.js';
import type { RunningGateway } from './gateway-harness.js';
import { startError, startGateway } from './gateway-harness.js';

const APP = 'https://app.example';

async function call(
  gw: RunningGateway,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; json: { Message?: string } }> {
  const res = await request(`${gw.base}/${path}`, {
    method: method as 'POST',
    headers,
    ...(method === 'POST' ? { body: '{"a":["1"]}' } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: text ? (JSON.parse(text) as { Message?: string }) : {} };
}

const preflight = (origin: string, headers = 'authorization, content-type'): Record<string, string> => ({
  origin,
  'access-control-request-method': 'POST',
  'access-control-request-headers': headers,
});
const forbidden = (gw: RunningGateway): number =>
  (gw.node.services.find((s) => s.kind === 'gateway')!.running.status() as { forbidden: number }).forbidden;

describe('gateway CORS per route (Cors)', function () {
  this.timeout(60_000);
  let gw: RunningGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('a preflight is answered by the gateway: 204 with origin, methods, headers and Max-Age; another origin gets 403', async () => {
    gw = await startGateway({
      Cors: `orders=${APP} https://admin.example,credentials;public=*`,
      Routes: 'orders=echo;public=echo',
      ControlAllowList: 'Platform-Break',
    });
    const ok = await call(gw, 'OPTIONS', 'orders/new', preflight(APP));
    expect(ok.status).to.equal(204);
    expect(ok.headers['access-control-allow-origin']).to.equal(APP);
    expect(ok.headers['access-control-allow-credentials']).to.equal('true');
    expect(ok.headers['access-control-allow-methods']).to.equal('POST');
    expect(String(ok.headers['access-control-allow-headers']).split(', ')).to.include.members([
      'authorization',
      'content-type',
      'traceparent',
      'platform-break',
    ]);
    expect(ok.headers['access-control-max-age']).to.equal('600');
    expect(ok.headers.vary).to.contain('Origin');
    const other = await call(gw, 'OPTIONS', 'orders/new', preflight('https://evil.example'));
    expect(other.status).to.equal(403);
    expect(other.headers['access-control-allow-origin']).to.equal(undefined);
    expect(other.json.Message).to.equal("origin 'https://evil.example' is not allowed by Cors entry 'orders'");
    const any = await call(gw, 'OPTIONS', 'public/x', preflight('https://anyone.example'));
    expect(any.status).to.equal(204);
    expect(any.headers['access-control-allow-origin']).to.equal('*');
    expect(any.headers['access-control-allow-credentials']).to.equal(undefined);
    // a route without an entry: the OPTIONS request is a request like any other (strict mode: POST only)
    const none = await call(gw, 'OPTIONS', 'echo/x', preflight(APP));
    expect(none.status).to.equal(400);
    expect(none.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('an actual request: the allowed origin on every answer (a 401 too), 403 for an origin the entry does not name, nothing without Origin', async () => {
    const dir = tempDir('hn-gwcors-');
    writeFileSync(join(dir, 'users'), `${await passwdLine('ann', 'pw', 4)}\n`);
    gw = await startGateway({ Cors: `orders=${APP}`, Routes: 'orders=echo', Users: join(dir, 'users') });
    const ann = `Basic ${Buffer.from('ann:pw').toString('base64')}`;
    const ok = await call(gw, 'POST', 'orders/new', {
      origin: APP,
      authorization: ann,
      'content-type': 'application/json',
    });
    expect(ok.status).to.equal(200);
    expect(ok.headers['access-control-allow-origin']).to.equal(APP);
    expect(String(ok.headers['access-control-expose-headers'])).to.contain('RateLimit');
    expect(ok.headers.vary).to.equal('Origin');
    const unauthorized = await call(gw, 'POST', 'orders/new', { origin: APP });
    expect(unauthorized.status).to.equal(401);
    expect(unauthorized.headers['access-control-allow-origin'], 'a page can read the 401').to.equal(APP);
    // a cross-site form post carries the browser's cached Basic credentials: refused before anything else
    const before = forbidden(gw);
    const forged = await call(gw, 'POST', 'orders/new', {
      origin: 'https://evil.example',
      authorization: ann,
      'content-type': 'text/plain',
    });
    expect(forged.status).to.equal(403);
    expect(forged.json.Message).to.equal("origin 'https://evil.example' is not allowed by Cors entry 'orders'");
    expect(forbidden(gw) - before).to.equal(1);
    const noOrigin = await call(gw, 'POST', 'orders/new', { authorization: ann });
    expect(noOrigin.status).to.equal(200);
    expect(noOrigin.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('DevMode keeps its meaning: every OPTIONS is 204 and every answer carries its open headers, Cors entries aside', async () => {
    gw = await startGateway({ Cors: `orders=${APP}`, Routes: 'orders=echo', DevMode: true });
    const pre = await call(gw, 'OPTIONS', 'orders/new', preflight('https://evil.example'));
    expect(pre.status).to.equal(204);
    const post = await call(gw, 'POST', 'orders/new', { origin: 'https://evil.example' });
    expect(post.status).to.equal(200);
    expect(post.headers['access-control-allow-origin']).to.equal('*');
    expect(gw.logs()).to.contain('DevMode is on: every control passes and CORS is wide open (Cors is not applied)');
  });

  it('the start refuses, in one line naming the entry, * with credentials, a bad origin, an unknown option', async () => {
    const refused: Array<[string, RegExp]> = [
      [
        'orders=*,credentials',
        /^Cors: entry 'orders=\*,credentials': '\*' with credentials is refused: .*name the origins$/,
      ],
      [
        'orders=https://app.example/path',
        /^Cors: entry '.*': 'https:\/\/app\.example\/path' is not an origin \(scheme:\/\/host\[:port\], no path; 'null' is never allowed\)$/,
      ],
      ['orders=null', /'null' is not an origin/],
      ['orders=* https://app.example', /'\*' allows every origin: write it alone/],
      ['orders=https://app.example,cookies', /'cookies' is not an option \(only 'credentials'\)/],
      ['orders=', /names no origin/],
    ];
    for (const [cors, message] of refused) {
      const error = await startError({ Cors: cors });
      expect(error?.name, cors).to.equal('ConfigError');
      expect(error?.message, cors).to.match(message);
    }
  });

  it('chromium: a page of an allowed origin calls the gateway with credentials and JSON (a preflight first); a page of another origin cannot', async function () {
    const browser = await launchChromium(this);
    const page = (port: number): Promise<{ server: ReturnType<typeof createServer>; origin: string }> =>
      new Promise((resolve) => {
        const server = createServer((_req, res) => res.end('<!doctype html><title>app</title>'));
        server.listen(port, '127.0.0.1', () =>
          resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
        );
      });
    const app = await page(0);
    const other = await page(0);
    try {
      const dir = tempDir('hn-gwcors-');
      writeFileSync(join(dir, 'users'), `${await passwdLine('ann', 'pw', 4)}\n`);
      gw = await startGateway({
        Cors: `orders=${app.origin},credentials`,
        Routes: 'orders=echo',
        Users: join(dir, 'users'),
      });
      const fetchFrom = async (origin: string): Promise<string> => {
        const tab = await browser.newPage();
        try {
          await tab.goto(`${origin}/`);
          return await tab.evaluate(async (url) => {
            try {
              const res = await fetch(url, {
                method: 'POST',
                headers: { authorization: `Basic ${btoa('ann:pw')}`, 'content-type': 'application/json' },
                body: '{"item":["book"]}',
              });
              return `${res.status} ${await res.text()}`;
            } catch (e) {
              return `failed: ${String(e)}`;
            }
          }, `${gw!.base}/orders/new`);
        } finally {
          await tab.close();
        }
      };
      expect(await fetchFrom(app.origin)).to.match(
        /^200 \{"Code":200,"Message":"Success","Data":\{"item":\["book"\]\}/,
      );
      expect(await fetchFrom(other.origin)).to.match(/^failed: TypeError: Failed to fetch/);
    } finally {
      await browser.close();
      app.server.close();
      other.server.close();
    }
  });
});
