/**
 * The Config page in Debian's chromium (playwright-core): an operator edits the node file, sees the
 * dry run's diff, applies it and restores the version before; a read-only visitor sees the file but
 * cannot act; a forged POST — from another origin, or without the CSRF token — is refused.
 */
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { makeMessage } from '../../../protocol/message.js';
import { launchChromium } from '../../browser.js';
import type { FileNode } from './config-helpers.js';
import { nodeText, startFileNode } from './config-helpers.js';
import { OPERATOR, startConsoleNode } from './helpers.js';
import { violations } from './axe.js';

const replyCode = async (c: FileNode): Promise<number> => (await c.node.hive.call('echo', makeMessage({}), 2_000)).Code;

describe('console Config page in a browser', function () {
  this.timeout(120_000);
  let c: FileNode | undefined;
  let evil: Server | undefined;
  afterEach(async () => {
    await c?.node.stop(2_000);
    c = undefined;
    await new Promise<void>((r) => (evil ? evil.close(() => r()) : r()));
    evil = undefined;
  });

  it('an operator edits, sees the dry run and the diff, applies, then restores the previous version', async function () {
    c = await startFileNode();
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
        viewport: { width: 1280, height: 800 },
      });
      const page = await context.newPage();
      page.on('dialog', (d) => void d.accept());
      await page.goto(`${c.base}/login?back=/config`);
      expect(new URL(page.url()).pathname).to.equal('/config');
      const shown = await page.inputValue('#config-text');
      expect(shown).to.contain('Headers: "********"').and.not.contain('very-secret-1');
      await page.fill('#config-text', shown.replace('ReplyCode: 200', 'ReplyCode: 201'));
      await Promise.all([page.waitForSelector('#config-check'), page.click('#config-dry-run')]);
      expect(await page.textContent('#config-valid')).to.contain('changed echo (ReplyCode)');
      expect(await page.locator('#config-diff .del').allTextContents()).to.deep.equal([
        '-   - {service: echo, NAME: echo, ReplyCode: 200}',
      ]);
      expect(await page.locator('#config-diff .add').allTextContents()).to.deep.equal([
        '+   - {service: echo, NAME: echo, ReplyCode: 201}',
      ]);
      // the edit is kept in the editor after the dry run; nothing applied yet
      expect(await page.inputValue('#config-text')).to.contain('ReplyCode: 201');
      expect(await replyCode(c)).to.equal(200);

      await Promise.all([page.waitForURL(/done=/), page.click('#config-apply')]);
      expect(await page.textContent('.notice[role=status]')).to.contain('applied: changed echo (ReplyCode)');
      expect(await replyCode(c)).to.equal(201);
      expect(readFileSync(c.file, 'utf8')).to.equal(nodeText(201));
      expect(await page.textContent('#config-history'))
        .to.contain('ops')
        .and.contain('applied: changed echo (ReplyCode)');
      expect(await page.inputValue('#config-text')).to.contain('ReplyCode: 201');

      // an invalid edit: refused with its line, the text kept to fix it, the node as it was
      await page.fill(
        '#config-text',
        (await page.inputValue('#config-text')).replace('ReplyCode: 201', 'ReplyCode: 201, Bogus: 1'),
      );
      await page.click('#config-apply');
      await page.waitForSelector('#config-refused');
      expect(await page.textContent('#config-refused')).to.contain("unknown parameter 'Bogus'");
      expect(await page.inputValue('#config-text')).to.contain('Bogus: 1');
      expect(await replyCode(c)).to.equal(201);

      await page.goto(`${c.base}/config/versions/1`);
      expect(await page.textContent('#version-diff')).to.contain('ReplyCode: 200');
      await Promise.all([page.waitForURL(/done=/), page.click('button:has-text("Restore .1")')]);
      expect(await page.textContent('.notice[role=status]')).to.contain('restored .1: changed echo (ReplyCode)');
      expect(await replyCode(c)).to.equal(200);
      expect(readFileSync(c.file, 'utf8')).to.equal(nodeText(200));
      expect(await page.textContent('#config-history')).to.contain('applied (restore of node.yaml.1)');
    } finally {
      await browser.close();
    }
  });

  it('a read-only visitor sees the file and the reloads but cannot dry-run, apply or restore (403 with a message); an anonymous one is asked to sign in (401)', async function () {
    c = await startFileNode({ readOnly: true });
    const browser = await launchChromium(this);
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${c.base}/config`);
      expect(await page.textContent('#config-text')).to.contain('Headers: "********"');
      expect(await page.locator('#config-apply, #config-dry-run, button:has-text("Restore")').count()).to.equal(0);
      const answers = (await page.evaluate(async () => {
        const token = ((await (await fetch('/api/csrf')).json()) as { token: string }).token;
        const out: Array<[number, string]> = [];
        for (const action of ['dry-run', 'apply', 'restore']) {
          const res = await fetch(`/api/config/${action}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-csrf-token': token },
            body: action === 'restore' ? '{"version":1}' : '{"text":"services: []"}',
          });
          out.push([res.status, ((await res.json()) as { Message: string }).Message]);
        }
        return out;
      })) as Array<[number, string]>;
      for (const [status, message] of answers) {
        expect(status).to.equal(403);
        expect(message).to.contain('the console is read-only');
      }
      await c.node.stop(2_000);

      c = await startFileNode();
      const anonymous = await (await browser.newContext()).newPage();
      anonymous.on('dialog', (d) => void d.accept());
      await anonymous.goto(`${c.base}/config`);
      const [refused] = await Promise.all([
        anonymous.waitForResponse((r) => r.url().endsWith('/api/config/apply')),
        anonymous.click('#config-apply'),
      ]);
      expect(refused.status()).to.equal(401);
      expect(await replyCode(c)).to.equal(200);
      expect(c.node.journal.entries().filter((e) => e.event === 'reload')).to.deep.equal([]);
    } finally {
      await browser.close();
    }
  });

  it('a forged POST is refused: from another origin (403, even signed in) and without the CSRF token (403); the node stays as it was', async function () {
    c = await startFileNode();
    const target = `${c.base}/api/config/apply`;
    // a page of another origin that posts an edited file to the console as soon as it loads
    evil = createServer((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<!doctype html><form id="f" method="post" action="${target}"><input type="hidden" name="text" value="${nodeText(299).replace(/"/g, '&quot;')}"></form><script>document.getElementById('f').submit()</script>`,
        );
    });
    await new Promise<void>((r) => evil!.listen(0, '127.0.0.1', () => r()));
    const evilBase = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
      });
      const page = await context.newPage();
      await page.goto(`${c.base}/login?back=/config`);
      const [cross] = await Promise.all([
        page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST' && r.status() !== 401),
        page.goto(`${evilBase}/`),
      ]);
      expect(cross.status()).to.equal(403);
      expect(await cross.text()).to.contain('cross-origin request refused');

      await page.goto(`${c.base}/config`);
      const noToken = (await page.evaluate(async () => {
        const res = await fetch('/api/config/apply', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'text=services%3A%20%5B%5D',
        });
        return [res.status, await res.text()];
      })) as [number, string];
      expect(noToken[0]).to.equal(403);
      expect(noToken[1]).to.contain('CSRF token is required');
      expect(await replyCode(c)).to.equal(200);
      expect(readFileSync(c.file, 'utf8')).to.equal(nodeText());
      expect(c.node.journal.entries().filter((e) => e.event === 'reload')).to.deep.equal([]);
    } finally {
      await browser.close();
    }
  });

  it('passes axe and fits 1280×800 and a narrow window: the file, a dry run with errors and a diff, a kept version; a node not run from a file says so', async function () {
    c = await startFileNode();
    const browser = await launchChromium(this);
    try {
      const context = await browser.newContext({
        bypassCSP: true,
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
      });
      const page = await context.newPage();
      page.on('dialog', (d) => void d.accept());
      await page.goto(`${c.base}/login?back=/config`);
      await page.fill(
        '#config-text',
        (await page.inputValue('#config-text')).replace('ReplyCode: 200', 'ReplyCode: 201'),
      );
      await Promise.all([page.waitForURL(/done=/), page.click('#config-apply')]);
      const check = async (what: string): Promise<void> => {
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: width === 1280 ? 800 : 844 });
          expect(await violations(page), `${what} at ${width}px`).to.deep.equal([]);
          expect(
            (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number,
            `${what} scrolls sideways at ${width}px`,
          ).to.be.at.most(0);
          expect(await page.locator('h1').count(), what).to.equal(1);
        }
      };
      await check('/config after an apply');
      await page.fill(
        '#config-text',
        (await page.inputValue('#config-text')).replace('ReplyCode: 201', 'ReplyCode: 202, Bogus: 1'),
      );
      await Promise.all([page.waitForSelector('#config-check'), page.click('#config-dry-run')]);
      expect(await page.locator('#config-errors li').count()).to.equal(1);
      await check('a dry run with an error');
      await page.goto(`${c.base}/config/versions/1`);
      await check('/config/versions/1');
      await c.node.stop(2_000);
      const plain = await startConsoleNode();
      try {
        await page.goto(`${plain.base}/config`);
        expect(await page.textContent('#config-none')).to.contain('not started from a node file');
      } finally {
        await plain.node.stop(2_000);
      }
    } finally {
      await browser.close();
    }
  });
});
