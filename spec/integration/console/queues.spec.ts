import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../browser.js';
import { recorded, queueCall } from '../queue/helpers.js';
import type { ConsoleNode } from './helpers.js';
import { OPERATOR, startConsoleNode } from './helpers.js';
import { until } from '../../support/wait.js';

const ARTIFACTS = join(new URL('../../../', import.meta.url).pathname, 'test-artifacts');

/** Reloads until the selector matches (the queue page is server-rendered: a reload shows the change). */
async function reloadUntil(page: Page, selector: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while ((await page.locator(selector).count()) === 0) {
    if (Date.now() > end) throw new Error(`${selector} did not appear on ${page.url()}`);
    await page.waitForTimeout(200);
    await page.reload();
  }
}

describe('console queues in a browser: dead entry, edit and replay, delivered; actions need a login', function () {
  this.timeout(60_000);
  let c: ConsoleNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
  });

  it('a replay from the entry page of a queue that keeps no delivered entries lands on a page saying where it went, with the notice (not a bare 404)', async function () {
    c = await startConsoleNode({ keepDone: false });
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
        viewport: { width: 1280, height: 800 },
      });
      const page = await context.newPage();
      const added = await queueCall(c.node, { channel: ['nobody-here'] }, { item: ['broken'] }, 'jobs');
      const key = added.Data.keys![0]!;
      await page.goto(`${c.base}/queues/jobs?state=dead`);
      await reloadUntil(page, `#entries tr[data-key="${key}"][data-state="dead"]`);
      await page.goto(`${c.base}/queues/jobs/entries/${key}`);
      await page.fill('#replay-form input[name=channel]', 'recorder');
      await Promise.all([page.waitForURL(/done=/), page.click('#replay-form button[type=submit]')]);
      // delivered and gone by the time the page is read (or soon after): the page says so, with the notice
      const end = Date.now() + 10_000;
      while ((await page.locator('#entry-gone').count()) === 0 && Date.now() < end) {
        await page.waitForTimeout(200);
        await page.reload();
      }
      expect(await page.textContent('#entry-gone')).to.contain('no longer in queue jobs');
      expect(await page.textContent('[role=status]')).to.contain('replay: done');
      expect(await page.locator('nav').count(), 'the console layout, not a bare error page').to.be.greaterThan(0);
    } finally {
      await browser.close();
    }
  });

  it("shows an entry's priority: a priority column on a page where an entry has one, and on the entry page", async () => {
    c = await startConsoleNode({ keepDone: false });
    const urgent = (
      await queueCall(c.node, { channel: ['nobody-here'], priority: ['7'] }, { item: ['urgent'] }, 'jobs')
    ).Data.keys![0]!;
    const plain = (await queueCall(c.node, { channel: ['nobody-here'] }, { item: ['plain'] }, 'jobs')).Data.keys![0]!;
    const auth = { authorization: `Basic ${Buffer.from(`${OPERATOR.user}:${OPERATOR.password}`).toString('base64')}` };
    const page = async (path: string): Promise<string> => (await fetch(`${c!.base}${path}`, { headers: auth })).text();
    let list = '';
    await until(async () => (list = await page('/queues/jobs?state=dead')).includes(plain) && list.includes(urgent), {
      ms: 10_000,
      what: 'both entries dead',
    });
    expect(list).to.match(/<th scope="col" class="num">priority<\/th>/);
    const row = (key: string): string =>
      list.slice(list.indexOf(`data-key="${key}"`), list.indexOf('</tr>', list.indexOf(`data-key="${key}"`)));
    expect(row(urgent)).to.match(/<td class="num">7<\/td>/);
    expect(row(plain)).to.match(/<td class="num">0<\/td>/);
    expect(await page(`/queues/jobs/entries/${urgent}`)).to.match(/id="entry-priority">7</);
  });

  it('an entry to a failing target reaches dead, is edited and replayed to the echo service, and is delivered', async function () {
    c = await startConsoleNode();
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
        viewport: { width: 1280, height: 800 },
      });
      const page = await context.newPage();
      const added = await queueCall(
        c.node,
        { channel: ['nobody-here'] },
        { item: ['broken'], customer: ['acme'] },
        'jobs',
      );
      expect(added.Code).to.equal(200);
      const key = added.Data.keys![0]!;

      await page.goto(`${c.base}/queues/jobs?state=dead`);
      await reloadUntil(page, `#entries tr[data-key="${key}"][data-state="dead"]`);
      expect(await page.locator('#entries tr').count()).to.equal(2);
      // the reasons of the dead entries are listed; one picks the entries with that reason
      await Promise.all([
        page.waitForURL(/reason=/),
        page.click('#dead-reasons a:has-text("no success after 1 attempt(s)")'),
      ]);
      expect(await page.locator(`#entries tr[data-key="${key}"]`).count()).to.equal(1);
      expect(await page.inputValue('input[name=reason]')).to.equal('no success after 1 attempt(s)');
      // the search by Data field finds it; another value does not
      await page.fill('input[name=field]', 'customer');
      await page.fill('input[name=value]', 'acme');
      await page.click('form.search button[type=submit]');
      expect(await page.locator(`#entries tr[data-key="${key}"]`).count()).to.equal(1);
      await page.goto(`${c.base}/queues/jobs?state=dead&field=customer&value=other`);
      expect(await page.locator(`#entries tbody tr`).count()).to.equal(0);

      await page.goto(`${c.base}/queues/jobs/entries/${key}`);
      expect((await page.textContent('#entry-state'))?.trim()).to.equal('dead');
      expect(await page.textContent('#attempts')).to.contain('404');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'console-entry.png'), fullPage: true });

      await page.fill('#replay-data', JSON.stringify({ item: ['fixed'] }));
      await page.fill('#replay-form input[name=channel]', 'recorder');
      await Promise.all([page.waitForURL(/done=/), page.click('#replay-form button[type=submit]')]);
      expect(await page.textContent('[role=status]')).to.contain('replay: done');

      const end = Date.now() + 10_000;
      while (!recorded(c.record).some((r) => r.message.Data.item?.[0] === 'fixed') && Date.now() < end)
        await page.waitForTimeout(100);
      const delivered = recorded(c.record).find((r) => r.message.Data.item?.[0] === 'fixed');
      expect(delivered?.message.Data).to.deep.equal({ item: ['fixed'], customer: ['acme'] });

      await page.goto(`${c.base}/queues/jobs?state=done`);
      await reloadUntil(page, `#entries tr[data-key="${key}"][data-state="done"]`);
      await page.screenshot({ path: join(ARTIFACTS, 'console-queue.png'), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(ARTIFACTS, 'console-queue-narrow.png'), fullPage: true });
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow as number, 'the page scrolls sideways on a narrow window').to.be.at.most(0);

      const journal = c.node.journal.entries().filter((e) => e.event === 'action');
      expect(journal.map((e) => e.user)).to.deep.equal(['ops']);
      expect(journal[0]!.action).to.match(new RegExp(`^replay key=${key} channel=recorder Data fields item → 200`));
    } finally {
      await browser.close();
    }
  });

  it('without a login the action is refused (401) and the queue stays as it was; with one it pauses and resumes', async function () {
    c = await startConsoleNode();
    const browser = await launchChromium(this);
    try {
      const anonymous = await (await browser.newContext()).newPage();
      await anonymous.goto(`${c.base}/queues/jobs`);
      expect(await anonymous.textContent('header .who')).to.contain('Sign in');
      const [refused] = await Promise.all([
        anonymous.waitForResponse((r) => r.url().endsWith('/api/queues/jobs/pause')),
        anonymous.click('button:has-text("Pause")'),
      ]);
      expect(refused.status()).to.equal(401);
      const status = await queueCall(c.node, { command: ['status'] }, {}, 'jobs');
      expect(status.Data.status).to.deep.equal(['running']);

      const operator = await (
        await browser.newContext({ httpCredentials: { username: OPERATOR.user, password: OPERATOR.password } })
      ).newPage();
      await operator.goto(`${c.base}/login?back=/queues/jobs`);
      expect(new URL(operator.url()).pathname).to.equal('/queues/jobs');
      expect(await operator.textContent('header .who')).to.contain('signed in as ops');
      await Promise.all([operator.waitForURL(/done=/), operator.click('button:has-text("Pause")')]);
      expect((await operator.textContent('#queue-status'))?.trim()).to.equal('paused');
      await Promise.all([operator.waitForURL(/done=/), operator.click('button:has-text("Resume")')]);
      expect((await operator.textContent('#queue-status'))?.trim()).to.equal('running');
    } finally {
      await browser.close();
    }
  });
});
