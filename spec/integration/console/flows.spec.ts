/**
 * The Flows pages in a real browser on a running node (README, Console): a failed run is found on
 * its flow's page, its run page shows every attempt and kept Result, an operator replays it with an
 * Input edit and it succeeds; a waiting run is cancelled; a read-only visitor sees no action and a
 * POST without the operator's checks is refused, the run left as it was.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { passwdLine } from '../../../actors/auth/authenticate.js';
import { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { tempDir } from '../../temp.js';
import { launchChromium } from '../../browser.js';
import { OPERATOR, basicHeader, csrfOf } from './helpers.js';
import { violations } from './axe.js';
import { until } from '../../support/wait.js';

/** insert (records) → ship (calls the carrier the Input names: 'refuser' answers 422, 'shipper' 200). */
const ORDERS = {
  steps: [
    { name: 'insert', call: 'db', data: { id: '{{index .Input.Data.id 0}}' } },
    { name: 'ship', call: '{{index .Input.Data.carrier 0}}', data: { id: '{{index .Steps.insert.Data.id 0}}' } },
  ],
};

async function flowConsole(readOnly = false): Promise<{ node: HiveNode; base: string }> {
  const dir = tempDir('hn-console-flows-');
  const users = join(dir, 'users');
  writeFileSync(users, `${await passwdLine(OPERATOR.user, OPERATOR.password, 4)}\n`);
  const node = await HiveNode.start({
    name: 'flows-test',
    services: [
      { kind: 'echo', layers: [{ source: 'test', values: [['NAME', 'db']] }] },
      {
        kind: 'echo',
        layers: [
          {
            source: 'test',
            values: [
              ['NAME', 'refuser'],
              ['ReplyCode', '422'],
            ],
          },
        ],
      },
      {
        kind: 'echo',
        layers: [
          {
            source: 'test',
            values: [
              ['NAME', 'shipper'],
              ['RecordFile', join(dir, 'shipped.jsonl')],
            ],
          },
        ],
      },
      {
        kind: 'flow',
        layers: [
          {
            source: 'test',
            values: [
              ['NAME', 'orders'],
              ['Definition', JSON.stringify(ORDERS)],
              ['AllowedChannels', 'db,refuser,shipper'],
              ['PersistPath', join(dir, 'orders')],
            ],
          },
        ],
      },
      {
        kind: 'flow',
        layers: [
          {
            source: 'test',
            values: [
              ['NAME', 'holder'],
              ['Definition', JSON.stringify({ steps: [{ name: 'hold', wait: '1h' }] })],
              ['PersistPath', join(dir, 'holder')],
            ],
          },
        ],
      },
    ],
    dashboardPort: 0,
    dashboardAccess: readOnly ? {} : { users },
    logStream: new PassThrough(),
  });
  return { node, base: `http://127.0.0.1:${node.dashboard!.port}` };
}

const command = (node: HiveNode, flow: string, name: string, control: Record<string, string[]> = {}) =>
  node.hive.call(flow, makeMessage({ Control: mapOf({ command: [name], ...control }) }), 5000);

describe('console: the Flows pages', function () {
  this.timeout(60_000);
  let c: { node: HiveNode; base: string } | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
  });

  it('an operator finds a failed run, sees its attempts and Results, replays it with an Input edit and it succeeds; cancels a waiting run', async function () {
    c = await flowConsole();
    const started = await c.node.hive.call(
      'orders',
      makeMessage({ Data: mapOf({ id: ['o-7'], carrier: ['refuser'] }) }),
      5000,
    );
    expect(started.Code).to.equal(422);
    const holding = (await c.node.hive.execute('holder', makeMessage({}), 5000)).Data.key![0]!;
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
        viewport: { width: 1280, height: 900 },
      });
      const page = await context.newPage();
      const asked: string[] = [];
      page.on('dialog', (d) => {
        asked.push(d.message());
        void d.accept();
      });
      await page.goto(`${c.base}/flows`);
      expect(
        await page
          .locator('#flows tr[data-flow="orders"] td')
          .nth(2 + 3)
          .innerText(),
      ).to.equal('1'); // failed
      expect(
        await page
          .locator('#flows tr[data-flow="holder"] td')
          .nth(2 + 1)
          .innerText(),
      ).to.equal('1'); // waiting
      await page.click('#flows tr[data-flow="orders"] a >> text=orders');
      // the flow page opens on the failed runs, searchable by step and Code as the queue pages are
      const row = page.locator('#runs tbody tr');
      expect(await row.count()).to.equal(1);
      expect(await row.locator('.last-error').innerText()).to.match(/^422 ship: /);
      await page.fill('input[name=step]', 'insert');
      await page.click('form[role=search] button');
      expect(await page.locator('#runs tbody tr').count()).to.equal(0);
      await page.fill('input[name=step]', 'ship');
      await page.fill('input[name=code]', '422');
      await page.click('form[role=search] button');
      expect(await page.locator('#runs tbody tr').count()).to.equal(1);
      const key = (await page.locator('#runs tbody tr').getAttribute('data-key'))!;
      await page.click(`#runs tr[data-key="${key}"] a`);

      // the run page: failed at ship, the waterfall with both attempts, insert's kept Result
      expect(await page.locator('#run-state').innerText()).to.equal('failed');
      expect(await page.locator('#run-failed-step').innerText()).to.equal('ship');
      expect(
        await page
          .locator('#waterfall tbody tr')
          .evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-step')} ${r.getAttribute('data-code')}`)),
      ).to.deep.equal(['insert 200', 'ship 422']);
      expect(await page.locator('#waterfall svg rect').count()).to.equal(4);
      expect(await page.locator('#results tr[data-step="insert"]').innerText()).to.contain('id=o-7');
      expect(await page.locator('#cancel-form').count()).to.equal(0);

      // replay with the Input's carrier edited: it goes on from ship and succeeds
      await page.fill('#replay-data', JSON.stringify({ carrier: ['shipper'] }));
      await Promise.all([page.waitForURL(/done=|failed=/), page.click('#replay-form button[type=submit]')]);
      expect(await page.textContent('[role=status]')).to.contain('replay: done');
      expect(new URL(page.url()).pathname).to.equal(`/flows/orders/runs/${key}`);
      await until(
        async () => (await command(c!.node, 'orders', 'fetch', { key: [key] })).Data.state?.[0] === 'succeeded',
      );
      await page.reload();
      expect(await page.locator('#run-state').innerText()).to.equal('succeeded');
      expect(
        await page
          .locator('#waterfall tbody tr')
          .evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-step')} ${r.getAttribute('data-code')}`)),
      ).to.deep.equal(['insert 200', 'ship 422', 'ship 200']);
      expect(JSON.parse(await page.locator('#run-data').innerText())).to.deep.equal({
        id: ['o-7'],
        carrier: ['shipper'],
      });
      expect(await page.locator('#replay-form').count()).to.equal(0);
      const journalled = c.node.journal.entries().find((e) => e.event === 'action' && e.path === '/node/orders');
      expect(journalled?.user).to.equal(OPERATOR.user);
      expect(journalled?.action).to.match(/^replay key=\S+ Data fields carrier → 200/);

      // a waiting run: cancel, confirmed first
      await page.goto(`${c.base}/flows/holder/runs/${holding}`);
      expect(await page.locator('#run-state').innerText()).to.equal('waiting');
      await Promise.all([page.waitForURL(/done=|failed=/), page.click('#cancel-form button')]);
      expect(asked).to.deep.equal([`Cancel run ${holding}? Its on_cancel step runs, if the flow has one.`]);
      await until(
        async () => (await command(c!.node, 'holder', 'fetch', { key: [holding] })).Data.state?.[0] === 'cancelled',
      );
    } finally {
      await browser.close();
    }
  });

  it('a read-only visitor sees runs but no action; an action without the operator checks is refused and the run stays failed', async function () {
    c = await flowConsole(true);
    await c.node.hive.call('orders', makeMessage({ Data: mapOf({ id: ['o-8'], carrier: ['refuser'] }) }), 5000);
    const key = (await command(c.node, 'orders', 'list', { state: ['failed'] })).Data.objects![0]!;
    const browser = await launchChromium(this);
    try {
      const page = await browser.newPage();
      await page.goto(`${c.base}/flows/orders/runs/${key}`);
      expect(await page.locator('#run-state').innerText()).to.equal('failed');
      expect(await page.locator('#replay-form, #cancel-form, form[method=post]').count()).to.equal(0);
      expect(await page.locator('.notice.readonly').count()).to.equal(1);
    } finally {
      await browser.close();
    }
    // a read-only console takes no action at all, whatever is sent
    const { cookie, token } = await csrfOf(c.base);
    const res = await fetch(`${c.base}/api/flows/orders/replay`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie,
        'x-csrf-token': token,
        origin: c.base,
        authorization: basicHeader(),
      },
      body: JSON.stringify({ Control: { key: [key] }, Data: { carrier: ['shipper'] } }),
    });
    expect(res.status).to.equal(403);
    expect((await command(c.node, 'orders', 'fetch', { key: [key] })).Data.state).to.deep.equal(['failed']);
  });

  it('with users: no credentials 401, a foreign origin or no CSRF token 403, an unknown action 404, a stray control 400; back leads only to the console', async () => {
    c = await flowConsole();
    await c.node.hive.call('orders', makeMessage({ Data: mapOf({ id: ['o-9'], carrier: ['refuser'] }) }), 5000);
    const key = (await command(c.node, 'orders', 'list', { state: ['failed'] })).Data.objects![0]!;
    const { cookie, token } = await csrfOf(c.base);
    const post = (action: string, body: unknown, headers: Record<string, string>) =>
      fetch(`${c!.base}/api/flows/orders/${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const good = { cookie, 'x-csrf-token': token, origin: c.base, authorization: basicHeader() };
    expect((await post('replay', { Control: { key: [key] } }, { ...good, authorization: '' })).status).to.equal(401);
    expect(
      (await post('replay', { Control: { key: [key] } }, { ...good, origin: 'http://evil.example' })).status,
    ).to.equal(403);
    expect((await post('replay', { Control: { key: [key] } }, { ...good, 'x-csrf-token': 'forged' })).status).to.equal(
      403,
    );
    expect((await post('purge', { Control: { key: [key] } }, good)).status).to.equal(404);
    const stray = await post('replay', { Control: { key: [key], command: ['purge'] } }, good);
    expect(stray.status).to.equal(400);
    expect(((await stray.json()) as { Message: string }).Message).to.contain("does not take control 'command'");
    expect((await post('cancel', { Control: { key: [key] } }, good)).status).to.equal(409);
    expect((await command(c.node, 'orders', 'fetch', { key: [key] })).Data.state).to.deep.equal(['failed']);
    // a form's back that leads elsewhere goes to the flow's page instead
    const form = new URLSearchParams({
      csrf: token,
      back: '//evil.example/x',
      key,
      Data: JSON.stringify({ carrier: ['shipper'] }),
    });
    const res = await fetch(`${c.base}/api/flows/orders/replay`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie,
        origin: c.base,
        authorization: basicHeader(),
      },
      body: form.toString(),
    });
    expect(res.status).to.equal(303);
    expect(res.headers.get('location')).to.match(/^\/flows\/orders\?done=/);
    // and the JSON of the pages, for scripts
    await until(
      async () =>
        ((await (await fetch(`${c!.base}/api/flows/orders?state=succeeded`)).json()) as { total: number }).total === 1,
    );
    const run = (await (await fetch(`${c.base}/api/flows/orders/runs/${encodeURIComponent(key)}`)).json()) as {
      state: string;
      attempts: unknown[];
    };
    expect(run.state).to.equal('succeeded');
    expect(run.attempts).to.have.length(3);
  });

  it('the runs are paged 20 at a time in list order and found by an Input Data field; a bad search is 400 naming it', async () => {
    c = await flowConsole();
    for (let i = 0; i < 25; i++)
      await c.node.hive.call('orders', makeMessage({ Data: mapOf({ id: [`p-${i}`], carrier: ['refuser'] }) }), 5000);
    const page = async (
      q: string,
    ): Promise<{ total: number; pages: number; runs: Array<{ input: { Data: Record<string, string[]> } }> }> =>
      (await (await fetch(`${c!.base}/api/flows/orders?${q}`)).json()) as never;
    const second = await page('state=failed&page=2');
    expect([second.total, second.pages]).to.deep.equal([25, 2]);
    expect(second.runs.map((r) => r.input.Data.id![0])).to.deep.equal(['p-20', 'p-21', 'p-22', 'p-23', 'p-24']);
    const one = await page('state=failed&field=id&value=p-7');
    expect(one.runs.map((r) => r.input.Data.id![0])).to.deep.equal(['p-7']);
    const html = await (await fetch(`${c.base}/flows/orders?state=failed`)).text();
    expect(html).to.contain('25 failed runs · page 1 of 2');
    expect(html).to.contain('href="/flows/orders?state=failed&amp;page=2" rel="next"');
    const bad = await fetch(`${c.base}/api/flows/orders?state=lost`);
    expect(bad.status).to.equal(400);
    expect(((await bad.json()) as { Message: string }).Message).to.contain(
      "state must be one of running, waiting, succeeded, failed, cancelled, got 'lost'",
    );
    expect((await fetch(`${c.base}/api/flows/nope`)).status).to.equal(404);
  });

  it('the Flows pages pass axe and fit 1280×800 and a narrow window, the run page with its forms', async function () {
    c = await flowConsole();
    await c.node.hive.call('orders', makeMessage({ Data: mapOf({ id: ['o-10'], carrier: ['refuser'] }) }), 5000);
    const key = (await command(c.node, 'orders', 'list', { state: ['failed'] })).Data.objects![0]!;
    const holding = (await c.node.hive.execute('holder', makeMessage({}), 5000)).Data.key![0]!;
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        bypassCSP: true,
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
      });
      const page = await context.newPage();
      await page.goto(`${c.base}/login`);
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 1280 ? 800 : 844 });
        for (const path of [
          '/flows',
          '/flows/orders',
          '/flows/orders?state=succeeded&field=id&value=none',
          `/flows/orders/runs/${key}`,
          `/flows/holder/runs/${holding}`,
        ]) {
          await page.goto(`${c.base}${path}`);
          expect(await violations(page), `${path} at ${width}px`).to.deep.equal([]);
          expect(
            (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number,
            `${path} scrolls sideways at ${width}px`,
          ).to.be.at.most(0);
          expect(await page.locator('h1').count(), path).to.equal(1);
        }
      }
    } finally {
      await browser.close();
    }
  });
});
