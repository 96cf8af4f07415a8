import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../../browser.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { ConsoleNode } from './helpers.js';
import { startConsoleNode } from './helpers.js';

const ARTIFACTS = join(new URL('../../../', import.meta.url).pathname, 'test-artifacts');

describe('console journal: crashes with their error and the message that caused it (masked), filtered by service, event and time', function () {
  this.timeout(60_000);
  let c: ConsoleNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
  });

  it('shows the crash of the echo service with the masked message, and filters it in and out', async function () {
    c = await startConsoleNode();
    const crashed = await c.node.hive.call(
      'recorder',
      makeMessage({
        Class: 'demo',
        Operation: 'boom',
        Control: mapOf({ echo_crash: ['true'] }),
        Data: mapOf({ item: ['a'], password: ['hunter2'], note: ['Authorization: Basic b3BzOmh1bnRlcjI='] }),
      }),
      2000,
    );
    expect(crashed.Code).to.equal(500);
    const api = (await (await fetch(`${c.base}/api/journal?service=recorder&event=crash`)).json()) as Array<{
      path: string;
      error: { class: string };
      cause: string;
    }>;
    expect(api).to.have.length(1);
    expect(api[0]!.error.class).to.equal('CrashRequestedError');
    expect(api[0]!.cause).to.match(
      /^call on 'recorder': demo\/boom Control \{echo_crash=true\} Data \{item=a; password=\*\*\*;? note=Authorization: \*\*\*\}$/,
    );
    expect(JSON.stringify(api)).to.not.contain('hunter2').and.not.contain('b3BzOmh1bnRlcjI');
    expect(await (await fetch(`${c.base}/api/journal?service=jobs&event=crash`)).json()).to.deep.equal([]);
    expect(await (await fetch(`${c.base}/api/journal?service=recorder&event=crash&until=1h`)).json()).to.deep.equal([]);
    expect(((await (await fetch(`${c.base}/api/journal?event=crash&since=1h`)).json()) as unknown[]).length).to.equal(
      1,
    );
    const bad = await fetch(`${c.base}/api/journal?since=yesterday`);
    expect(bad.status).to.equal(400);
    expect(((await bad.json()) as { Message: string }).Message).to.contain("since 'yesterday' is neither a time");

    const browser = await launchChromium(this);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${c.base}/journal`);
      await page.selectOption('select[name=service]', 'recorder');
      await page.selectOption('select[name=event]', 'crash');
      await Promise.all([page.waitForURL(/service=recorder/), page.click('form.search button[type=submit]')]);
      const rows = page.locator('#journal-lines tbody tr');
      expect(await rows.count()).to.equal(1);
      expect(await rows.first().textContent())
        .to.contain('CrashRequestedError')
        .and.contain('password=***')
        .and.not.contain('hunter2');
      await page.goto(`${c.base}/journal?service=recorder`);
      expect(await page.locator('#journal-lines tbody tr[data-event="restart"]').count()).to.equal(1);
      expect(await page.locator('#journal-lines tbody tr[data-event="decision"]').count()).to.equal(1);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'console-journal.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
