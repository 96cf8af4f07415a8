/**
 * The console at an operator's glance, read in Chromium from a running node: the strip of totals and
 * the compact live page (queues in the first screen, rates in and out, the actor tree folded), the
 * last error in the retrying and dead lists, bulk actions on the checked entries of a list (with the
 * keyboard, and without the script), and the journal's trace ids linked to their traces.
 */
import { expect } from 'chai';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Page } from 'playwright-core';
import { startTracing, stopTracing } from '../../../actors/observe/tracing.js';
import { DEFAULT_TRACING } from '../../../config/tracing.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { launchChromium } from '../../browser.js';
import { queueCall } from '../queue/helpers.js';
import type { ConsoleNode } from './helpers.js';
import { OPERATOR, basicHeader, csrfOf, postAction, startConsoleNode } from './helpers.js';
import { until } from '../../support/wait.js';

/** Reads `read` until it matches or 10 s pass, reloading the page between reads when `reload`. */
async function eventually(page: Page, read: () => Promise<string>, match: RegExp, reload = false): Promise<string> {
  let text = '';
  for (const end = Date.now() + 10_000; !match.test((text = await read()));) {
    if (Date.now() > end) throw new Error(`'${text}' never matched ${String(match)} on ${page.url()}`);
    await page.waitForTimeout(250);
    if (reload) await page.reload();
  }
  return text;
}

/** Adds `n` entries to a channel nobody serves: each dies at its first attempt (the test queue retries none). */
async function deadEntries(c: ConsoleNode, n: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < n; i++)
    keys.push((await queueCall(c.node, { channel: ['nobody-here'] }, { n: [String(i)] }, 'jobs')).Data.keys![0]!);
  return keys;
}

const deadCount = async (c: ConsoleNode): Promise<number> =>
  Number(
    (await c.node.hive.call('jobs', makeMessage({ Control: mapOf({ command: ['status'] }) }), 2000)).Data.dead?.[0] ??
      0,
  );

/** Waits until the queue holds `n` dead entries (each dies a moment after it was added). */
async function untilDead(c: ConsoleNode, n: number): Promise<void> {
  await until(async () => (await deadCount(c)) === n, {
    ms: 10_000,
    every: 100,
    what: `the queue to hold ${n} dead entries`,
  });
}

describe('console at a glance (in Chromium)', function () {
  this.timeout(90_000);
  let c: ConsoleNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
    await stopTracing();
  });

  it('the live page opens with a strip of totals and the queues with their rates in and out in the first screen; the actor tree is folded', async function () {
    c = await startConsoleNode();
    await deadEntries(c, 2);
    await untilDead(c, 2);
    const browser = await launchChromium(this);
    let loading = true;
    const load = (async () => {
      while (loading) await queueCall(c!.node, {}, { n: ['1'] }, 'jobs');
    })();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${c.base}/`);
      const tile = (id: string): Promise<string> => page.locator(`#glance [data-tile="${id}"] .tile-value`).innerText();
      expect(await tile('dead')).to.equal('2');
      expect(await tile('services')).to.equal('2 of 2');
      expect(
        await page.locator('#glance [data-tile="dead"] a').getAttribute('href'),
        'one queue: the tile opens its dead list',
      ).to.equal('/queues/jobs?state=dead');
      // the stream keeps the rates and counts current: entries flow in and out of jobs
      const row = page.locator('#queues-glance tr[data-queue="jobs"]');
      const rate = async (which: string): Promise<string> => row.locator(`td[data-rate="${which}"]`).innerText();
      expect(
        Number((await eventually(page, () => rate('in'), /^[1-9][\d.,]*\/s$/)).replace(/[,/s]/g, '')),
      ).to.be.greaterThan(0);
      expect(await eventually(page, () => rate('out'), /^[1-9][\d.,]*\/s$/)).to.match(/\/s$/);
      expect(await row.locator('td[data-state="dead"]').innerText()).to.equal('2');
      // at a glance: the strip and the queues are in the first screen, above the services and charts
      for (const selector of ['#glance', '#queues-glance']) {
        const box = (await page.locator(selector).boundingBox())!;
        expect(box.y + box.height, `${selector} ends within the first 800 px`).to.be.at.most(800);
      }
      const services = (await page.locator('#services').boundingBox())!;
      const charts = (await page.locator('#charts').boundingBox())!;
      expect(Math.abs(services.y - charts.y), 'the services and the charts side by side').to.be.below(60);
      expect(charts.x).to.be.greaterThan(services.x + services.width - 1);
      // the actor tree is folded: its rows are hidden until its summary is opened from the keyboard
      expect(await page.locator('#actors-body tr').first().isVisible()).to.equal(false);
      expect(await page.locator('#actors-summary').innerText()).to.match(/^Actor tree \(\d+ restarts? since start\)$/);
      await page.focus('details.actors summary');
      await page.keyboard.press('Enter');
      expect(await page.locator('#actors-body tr').first().isVisible()).to.equal(true);
      // the queues page shows the same rates, and the queue's page its own
      await page.goto(`${c.base}/queues`);
      expect(await page.locator('#queues tr[data-queue="jobs"] td[data-rate="in"]').innerText()).to.match(/\/s$/);
      await page.goto(`${c.base}/queues/jobs`);
      expect(await page.locator('#queue-rates').innerText()).to.match(/^in [\d.,]+\/s, out [\d.,]+\/s$/);
    } finally {
      loading = false;
      await load;
      await browser.close();
    }
  });

  it('the retrying and dead lists show what the last attempt answered', async function () {
    c = await startConsoleNode();
    await deadEntries(c, 1);
    await untilDead(c, 1);
    // one retry, a minute away: retrying with its first failure
    await queueCall(
      c.node,
      { channel: ['nobody-either'], requeue_count: ['1'], requeue_timer: ['60'] },
      { n: ['r'] },
      'jobs',
    );
    const browser = await launchChromium(this);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      for (const [state, channel] of [
        ['dead', 'nobody-here'],
        ['retrying', 'nobody-either'],
      ] as const) {
        await page.goto(`${c.base}/queues/jobs?state=${state}`);
        const header = await page.locator('#entries thead th').allInnerTexts();
        expect(header, state).to.include('last error');
        const cell = page.locator(`#entries tbody tr td.last-error`).first();
        const text = await eventually(page, () => cell.innerText(), /^\d{3} /, true);
        expect(text, `${state}: the Code and Message of the last attempt`).to.match(
          new RegExp(`^[45]\\d\\d .*${channel}`),
        );
      }
      // the reason beside it still says how many attempts there were
      await page.goto(`${c.base}/queues/jobs?state=dead`);
      expect(await page.locator('#entries tbody tr td:has-text("no success after 1 attempt")').count()).to.equal(1);
    } finally {
      await browser.close();
    }
  });

  it('bulk: entries checked with the keyboard are replayed and purged at once, each journalled; without the script the boxes alone work', async function () {
    c = await startConsoleNode();
    const keys = await deadEntries(c, 4);
    await untilDead(c, 4);
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
        viewport: { width: 1280, height: 800 },
      });
      const page = await context.newPage();
      const asked: string[] = [];
      page.on('dialog', (d) => {
        asked.push(d.message());
        void d.accept();
      });
      await page.goto(`${c.base}/queues/jobs?state=dead`);
      // "select all" from the keyboard, then one unchecked: three of four are replayed
      await page.focus('#select-all');
      await page.keyboard.press('Space');
      expect(await page.locator('input.entry-key:checked').count()).to.equal(4);
      await page.focus(`input.entry-key[value="${keys[3]}"]`);
      await page.keyboard.press('Space');
      expect(
        await page.locator('#select-all').evaluate((e) => (e as unknown as { indeterminate: boolean }).indeterminate),
      ).to.equal(true);
      await Promise.all([page.waitForURL(/done=|failed=/), page.click('#bulk-form button[data-action="replay"]')]);
      expect(asked).to.deep.equal(['Replay the selected dead entries?']);
      expect(await page.textContent('[role=status]')).to.contain('replay of 3 entries: 3 done');
      expect(new URL(page.url()).pathname + new URL(page.url()).searchParams.get('state')).to.equal('/queues/jobsdead');
      const replays = c.node.journal.entries().filter((e) => e.event === 'action' && e.action?.startsWith('replay '));
      expect(replays.map((e) => /key=(\S+)/.exec(e.action!)![1]).sort()).to.deep.equal(keys.slice(0, 3).sort());
      expect(replays.every((e) => e.user === OPERATOR.user)).to.equal(true);

      // the replayed ones die again (their channel is still unserved): then all four are purged at once
      await eventually(page, async () => String(await page.locator('input.entry-key').count()), /^4$/, true);
      await page.check('#select-all');
      await Promise.all([page.waitForURL(/done=|failed=/), page.click('#bulk-form button[data-action="purge"]')]);
      expect(asked[1]).to.equal('Remove the selected dead entries for good?');
      expect(await page.textContent('[role=status]')).to.contain('purge of 4 entries: 4 done');
      expect(await deadCount(c)).to.equal(0);

      // without the script: no "select all", the boxes and buttons alone
      const more = await deadEntries(c, 2);
      await untilDead(c, 2);
      const plain = await (
        await browser.newContext({
          javaScriptEnabled: false,
          httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
        })
      ).newPage();
      await plain.goto(`${c.base}/queues/jobs?state=dead`);
      expect(await plain.locator('#select-all').isVisible()).to.equal(false);
      await plain.check(`input.entry-key[value="${more[0]}"]`);
      await Promise.all([plain.waitForURL(/done=/), plain.click('#bulk-form button[data-action="purge"]')]);
      expect(await plain.locator('#entries tbody tr').count()).to.equal(1);
      expect(await plain.locator(`#entries tr[data-key="${more[1]}"]`).count()).to.equal(1);
    } finally {
      await browser.close();
    }
  });

  it('bulk actions pass the same checks as every action: no token, another origin or no operator is refused and nothing changes; a back leading elsewhere lands on the queue', async () => {
    c = await startConsoleNode();
    const keys = await deadEntries(c, 2);
    await untilDead(c, 2);
    const { cookie, token } = await csrfOf(c.base);
    const form = (extra: Record<string, string>): string =>
      new URLSearchParams([
        ...keys.map((k): [string, string] => ['key', k]),
        ['state', 'dead'],
        ...Object.entries(extra),
      ]).toString();
    const post = (body: string, headers: Record<string, string>): Promise<Response> =>
      fetch(`${c!.base}/api/queues/jobs/purge`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    expect(
      (await post(form({}), { cookie, authorization: basicHeader(), origin: c.base })).status,
      'no token',
    ).to.equal(403);
    expect(
      (await post(form({ csrf: token }), { cookie, authorization: basicHeader(), origin: 'http://evil.example' }))
        .status,
      'another origin',
    ).to.equal(403);
    expect((await post(form({ csrf: token }), { cookie, origin: c.base })).status, 'no operator').to.equal(401);
    expect(await deadCount(c)).to.equal(2);
    // more keys than a bulk takes, or one twice: 400 naming it
    const many = new URLSearchParams([
      ...Array.from({ length: 101 }, (_, i): [string, string] => ['key', `k${i}`]),
      ['csrf', token],
    ]).toString();
    const tooMany = await post(many, {
      cookie,
      authorization: basicHeader(),
      origin: c.base,
      accept: 'application/json',
    });
    expect(tooMany.status).to.equal(400);
    expect(((await tooMany.json()) as { Message: string }).Message).to.contain('at most 100 keys at once');
    const twice = await post(
      new URLSearchParams([
        ['key', keys[0]!],
        ['key', keys[0]!],
        ['state', 'dead'],
        ['csrf', token],
      ]).toString(),
      { cookie, authorization: basicHeader(), origin: c.base },
    );
    expect(twice.status).to.equal(400);
    expect(await deadCount(c)).to.equal(2);
    for (const back of ['//evil.example/x', '/\\evil.example/b', 'https://evil.example/']) {
      const res = await post(form({ csrf: token, back }), { cookie, authorization: basicHeader(), origin: c.base });
      expect(res.status, back).to.equal(303);
      expect(res.headers.get('location'), back).to.match(/^\/queues\/jobs\?(done|failed)=/);
    }
    const res = await post(form({ csrf: token, back: '/queues/jobs?state=dead' }), {
      cookie,
      authorization: basicHeader(),
      origin: c.base,
    });
    expect(res.headers.get('location')).to.match(/^\/queues\/jobs\?state=dead&(done|failed)=/);
    // a script sends the keys as one JSON list: a key already gone is refused (its Code) beside those done
    const more = await deadEntries(c, 2);
    await untilDead(c, 2);
    const json = await postAction(
      c.base,
      'purge',
      { Control: { key: [...more, 'no-such-key'], state: ['dead'] } },
      { cookie, 'x-csrf-token': token, authorization: basicHeader(), origin: c.base },
    );
    expect(json.status).to.equal(404);
    expect(json.json.Message).to.equal('purge of 3 entries: 2 done, 1 refused');
    expect(json.json.Data?.done).to.deep.equal(more);
    expect(json.json.Data?.refused?.[0]).to.match(/^no-such-key \(404 /);
    expect(await deadCount(c)).to.equal(0);
  });

  it("a journal line's trace id links to its trace", async function () {
    await startTracing({ ...DEFAULT_TRACING }, { exporter: new InMemorySpanExporter() });
    c = await startConsoleNode();
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const crashed = await c.node.hive.call(
      'recorder',
      makeMessage({ Control: mapOf({ echo_crash: ['true'], traceparent: [`00-${trace}-00f067aa0ba902b7-01`] }) }),
      2000,
    );
    expect(crashed.Code).to.equal(500);
    const browser = await launchChromium(this);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${c.base}/journal?event=crash`);
      const link = page.locator('#journal-lines tr[data-event="crash"] a.trace');
      expect(await link.getAttribute('aria-label')).to.equal(`trace ${trace}`);
      await eventually(page, async () => String((await fetch(`${c!.base}/api/traces/${trace}`)).status), /^200$/);
      await Promise.all([page.waitForURL(/\/traces/), link.click()]);
      expect(await page.textContent('h1')).to.contain(trace);
      // the live page's journal lines link it too
      await page.goto(`${c.base}/`);
      expect(await page.locator('#journal-body a.trace').first().getAttribute('href')).to.equal(`/traces?id=${trace}`);
    } finally {
      await browser.close();
    }
  });
});
