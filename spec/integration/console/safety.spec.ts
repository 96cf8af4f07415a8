import { expect } from 'chai';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { ConsoleNode } from './helpers.js';
import { OPERATOR, basicHeader, csrfOf, postAction, startConsoleNode } from './helpers.js';
import { request as httpRequest } from 'node:http';
import { hostname } from 'node:os';
import { launchChromium } from '../../browser.js';

describe('console safety: operators, same origin, CSRF, read-only, the journal of actions', function () {
  this.timeout(30_000);
  let c: ConsoleNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
  });

  it('binds 127.0.0.1 unless dashboard.Host says otherwise', async () => {
    c = await startConsoleNode();
    expect(c.node.dashboard!.address).to.equal('127.0.0.1');
    await c.node.stop(2000);
    c = await startConsoleNode({ host: '0.0.0.0' });
    expect(c.node.dashboard!.address).to.equal('0.0.0.0');
  });

  it('answers only to its own names (dashboard.Hosts): another Host header is 421 before anything is read (DNS rebinding)', async () => {
    c = await startConsoleNode();
    const port = c.node.dashboard!.port;
    const get = (host: string, path = '/api/status'): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: c!.node.dashboard!.port, path, headers: { host } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await get('evil.example')).to.equal(421);
    expect(await get(`evil.example:${port}`, '/')).to.equal(421);
    for (const own of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${hostname()}:${port}`])
      expect(await get(own), own).to.equal(200);
    await c.node.stop(2000);
    c = await startConsoleNode({ hosts: 'console.example.org' });
    expect(await get('console.example.org')).to.equal(200);
    expect(await get(`127.0.0.1:${c.node.dashboard!.port}`)).to.equal(421);
  });

  it('after sign-in, /login?back= goes back only to a path of the console: /\\evil.example and /\t/evil.example resolve elsewhere and go to / (in Chromium too)', async function () {
    c = await startConsoleNode();
    const login = async (back: string): Promise<string | null> => {
      const res = await fetch(`${c!.base}/login?back=${encodeURIComponent(back)}`, {
        headers: { authorization: basicHeader() },
        redirect: 'manual',
      });
      await res.text();
      return res.headers.get('location');
    };
    expect(await login('/\\evil.example/b')).to.equal('/');
    expect(await login('/\t/evil.example/c')).to.equal('/');
    expect(await login('//evil.example/d')).to.equal('/');
    expect(await login('https://evil.example/e')).to.equal('/');
    expect(await login('/queues/jobs?state=dead#x')).to.equal('/queues/jobs?state=dead#x');
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
      });
      const page = await context.newPage();
      for (const back of ['/%5Cevil.example/b', '/%09/evil.example/c']) {
        await page.goto(`${c.base}/login?back=${back}`);
        expect(new URL(page.url()).host, back).to.equal(new URL(c.base).host);
      }
    } finally {
      await browser.close();
    }
  });

  it('an action needs an operator: 401 with a Basic challenge without credentials or with wrong ones', async () => {
    c = await startConsoleNode();
    const { cookie, token } = await csrfOf(c.base);
    const none = await postAction(c.base, 'pause', {}, { cookie, 'x-csrf-token': token });
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.match(/^Basic realm="hivenode console"/);
    expect(none.json.Message).to.contain('credentials are required');
    const wrong = await postAction(
      c.base,
      'pause',
      {},
      { cookie, 'x-csrf-token': token, authorization: basicHeader('ops', 'nope') },
    );
    expect(wrong.status).to.equal(401);
    const status = await c.node.hive.call('jobs', makeMessage({ Control: mapOf({ command: ['status'] }) }), 2000);
    expect(status.Data.status).to.deep.equal(['running']);
  });

  it('refuses another origin and a missing or wrong CSRF token (403), and acts with all three, writing the operator to the journal', async () => {
    c = await startConsoleNode();
    const { cookie, token } = await csrfOf(c.base);
    const auth = basicHeader();
    const cross = await postAction(
      c.base,
      'pause',
      {},
      { cookie, 'x-csrf-token': token, authorization: auth, origin: 'http://evil.example' },
    );
    expect(cross.status).to.equal(403);
    expect(cross.json.Message).to.contain('cross-origin request refused');
    const noToken = await postAction(c.base, 'pause', {}, { cookie, authorization: auth });
    expect(noToken.status).to.equal(403);
    expect(noToken.json.Message).to.contain('CSRF token is required');
    const wrongToken = await postAction(
      c.base,
      'pause',
      {},
      { cookie, 'x-csrf-token': `${token.slice(0, -2)}xx`, authorization: auth },
    );
    expect(wrongToken.status).to.equal(403);
    expect(wrongToken.json.Message).to.contain('does not match');
    const otherCookie = await postAction(
      c.base,
      'pause',
      {},
      { cookie: 'hn_csrf=someone-else', 'x-csrf-token': token, authorization: auth },
    );
    expect(otherCookie.status).to.equal(403);
    const journalBefore = c.node.journal.entries().filter((e) => e.event === 'action').length;
    expect(journalBefore).to.equal(0);

    const ok = await postAction(
      c.base,
      'pause',
      {},
      { cookie, 'x-csrf-token': token, authorization: auth, origin: c.base },
    );
    expect(ok.status).to.equal(200);
    expect(ok.json.Data?.status).to.deep.equal(['paused']);
    const status = await c.node.hive.call('jobs', makeMessage({ Control: mapOf({ command: ['status'] }) }), 2000);
    expect(status.Data.status).to.deep.equal(['paused']);
    const actions = c.node.journal.entries().filter((e) => e.event === 'action');
    expect(actions).to.have.length(1);
    expect(actions[0]).to.include({ user: 'ops', path: '/node/jobs' });
    expect(actions[0]!.action).to.match(/^pause → 200/);
    const journal = (await (await fetch(`${c.base}/api/journal?event=action&service=jobs`)).json()) as Array<{
      user: string;
    }>;
    expect(journal.map((e) => e.user)).to.deep.equal(['ops']);
  });

  it('takes only the controls an action reads (400 naming the control), needs a key to delete, and answers 404 for an unknown queue or action', async () => {
    c = await startConsoleNode();
    const { cookie, token } = await csrfOf(c.base);
    const h = { cookie, 'x-csrf-token': token, authorization: basicHeader() };
    const extra = await postAction(c.base, 'pause', { Control: { command: ['clear'] } }, h);
    expect(extra.status).to.equal(400);
    expect(extra.json.Message).to.contain("pause does not take control 'command'");
    const del = await postAction(c.base, 'delete', {}, h);
    expect(del.status).to.equal(400);
    expect(del.json.Message).to.contain("delete needs control 'key'");
    const data = await postAction(c.base, 'purge', { Data: { a: ['1'] } }, h);
    expect(data.status).to.equal(400);
    const badShape = await postAction(c.base, 'replay', { Control: { key: 'k' } }, h);
    expect(badShape.status).to.equal(400);
    expect(badShape.json.Message).to.contain('Control.key must be a list of strings');
    const unknown = await postAction(c.base, 'explode', {}, h);
    expect(unknown.status).to.equal(404);
    const res = await fetch(`${c.base}/api/queues/nope/pause`, {
      method: 'POST',
      headers: { ...h, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).to.equal(404);
    expect(((await res.json()) as { Message: string }).Message).to.contain("no queue named 'nope'");
  });

  it('without Users the console is read-only, says so on every page, and refuses actions with 403', async () => {
    c = await startConsoleNode({ readOnly: true });
    const page = await (await fetch(`${c.base}/queues/jobs`)).text();
    expect(page).to.contain('This console is read-only');
    expect(page).to.not.contain('method="post"');
    const { cookie, token } = await csrfOf(c.base);
    const r = await postAction(c.base, 'pause', {}, { cookie, 'x-csrf-token': token, authorization: basicHeader() });
    expect(r.status).to.equal(403);
    expect(r.json.Message).to.contain('the console is read-only: set dashboard.Users');
  });

  it('answers a browser with a page and a script with JSON when refusing, and a malformed path with 400', async () => {
    c = await startConsoleNode();
    const browserPost = await fetch(`${c.base}/api/queues/jobs/pause`, {
      method: 'POST',
      headers: { accept: 'text/html,application/xhtml+xml', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=x',
    });
    expect(browserPost.status).to.equal(401);
    expect(browserPost.headers.get('www-authenticate')).to.match(/^Basic /);
    expect(browserPost.headers.get('content-type')).to.match(/^text\/html/);
    expect(await browserPost.text()).to.contain('<h1>401</h1>');
    const unknownPage = await fetch(`${c.base}/queues/nope`, { headers: { accept: 'text/html' } });
    expect(unknownPage.status).to.equal(404);
    expect(await unknownPage.text()).to.contain('no queue named &#39;nope&#39;');
    const malformed = await fetch(`${c.base}/queues/%E0%A4%A`);
    expect(malformed.status).to.equal(400);
    expect(((await malformed.json()) as { Message: string }).Message).to.contain('not valid percent-encoding');
  });

  it('answers every page with security headers and no asset from elsewhere', async () => {
    c = await startConsoleNode();
    const res = await fetch(`${c.base}/queues`);
    expect(res.headers.get('content-security-policy')).to.contain("default-src 'self'");
    expect(res.headers.get('x-frame-options')).to.equal('DENY');
    expect(res.headers.get('set-cookie')).to.match(/^hn_csrf=[\w-]+; Path=\/; HttpOnly; SameSite=Strict/);
    const text = await res.text();
    expect(text).to.not.match(/(src|href)="(https?:)?\/\//);
  });
});
