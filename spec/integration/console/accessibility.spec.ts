import { expect } from 'chai';
import { launchChromium } from '../../browser.js';
import { violations } from './axe.js';
import { queueCall } from '../queue/helpers.js';
import type { ConsoleNode } from './helpers.js';
import { OPERATOR, startConsoleNode } from './helpers.js';
import { sleep } from '../../support/wait.js';

describe('console HTML and accessibility: every page passes axe (landmarks, labels, contrast), fits 1280×800 and a narrow window, and asks nothing of another host', function () {
  this.timeout(90_000);
  let c: ConsoleNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
  });

  it('Live, Flow, Queues, a queue, an entry, a service and the Journal', async function () {
    c = await startConsoleNode();
    const dead = await queueCall(c.node, { channel: ['nobody-here'] }, { item: ['x'] }, 'jobs');
    await queueCall(
      c.node,
      { command: ['schedule'], schedule_name: ['tick'], cron: ['0 0 1 1 *'] },
      { item: ['tick'] },
      'jobs',
    );
    await sleep(300);
    const key = dead.Data.keys![0]!;
    const browser = await launchChromium(this);
    try {
      // axe is injected into the page: the console's CSP (scripts from itself only) is bypassed for the test's script
      const context = await browser.newContext({
        bypassCSP: true,
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.password },
      });
      const elsewhere: string[] = [];
      await context.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.protocol === 'data:' || url.origin === c!.base) return route.continue();
        elsewhere.push(url.href);
        return route.abort();
      });
      const page = await context.newPage();
      await page.goto(`${c.base}/login`);
      const paths = [
        '/',
        '/flow',
        '/queues',
        '/queues/jobs?state=dead',
        `/queues/jobs/entries/${key}`,
        '/services/recorder',
        '/journal',
        '/traces',
        '/queues/jobs?state=waiting&field=customer&value=none',
      ];
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 1280 ? 800 : 844 });
        for (const path of paths) {
          await page.goto(`${c.base}${path}`);
          expect(await violations(page), `${path} at ${width}px`).to.deep.equal([]);
          const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
          expect(overflow, `${path} scrolls sideways at ${width}px`).to.be.at.most(0);
          expect(await page.locator('main').count(), path).to.equal(1);
          expect(await page.locator('h1').count(), path).to.equal(1);
        }
      }
      expect(elsewhere).to.deep.equal([]);
    } finally {
      await browser.close();
    }
  });
});
