import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../../browser.js';
import { startDemo } from '../../demo-node.js';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { sleep } from '../../support/wait.js';

const ARTIFACTS = join(new URL('../../../', import.meta.url).pathname, 'test-artifacts');

describe('console live page: charts pushed over Server-Sent Events move while a load runs', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('shows the echo service go from idle to a chart with a rising request rate, figures with units, never JSON', async function () {
    node = await startDemo();
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    const browser = await launchChromium(this);
    let loading = true;
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${base}/`);
      expect(
        await page.locator('meta[http-equiv=refresh]').count(),
        'with the script the page does not refresh itself: the stream updates it',
      ).to.equal(0);
      expect(await page.textContent('#charts')).to.match(/Idle for 15 minutes: [^.]*\becho\b/);
      const before = await page.getAttribute('[data-stream]', 'data-updated');
      // the page is updated in place, never reloaded: a mark set now must still be there at the end
      await page.evaluate('window.keptAcrossUpdates = true');

      const load = (async () => {
        while (loading) await node!.hive.call('echo', makeMessage({ Data: mapOf({ n: ['1'] }) }), 2000);
      })();
      const chart = page.locator('#charts figure:has(figcaption:text("echo: requests and errors per second"))');
      await chart.waitFor({ timeout: 15_000 });
      // the stream keeps replacing the charts: the figure under the echo chart reads a rate above zero
      const end = Date.now() + 10_000;
      let now = 0;
      while (now === 0 && Date.now() < end) {
        await page.waitForTimeout(500);
        const text = (await chart.locator('.chart-now').textContent()) ?? '';
        now = Number(/requests ([\d.,]+)\/s/.exec(text)?.[1]?.replace(/,/g, '') ?? 0);
      }
      expect(now).to.be.greaterThan(0);
      expect(await page.getAttribute('[data-stream]', 'data-updated')).to.not.equal(before);
      expect(Number(await page.getAttribute('[data-stream]', 'data-updates'))).to.be.at.least(2);
      expect(await page.evaluate('window.keptAcrossUpdates'), 'the page was reloaded').to.equal(true);
      const d1 = await chart.locator('path').first().getAttribute('d');
      await page.waitForTimeout(2500);
      const d2 = await chart.locator('path').first().getAttribute('d');
      expect(d2, 'the line moves between two samples').to.not.equal(d1);
      // the queue's entries per state: paused, five entries wait, two of them scheduled for later
      await node.hive.call('queue', makeMessage({ Control: mapOf({ command: ['pause'] }) }), 2000);
      for (let i = 0; i < 5; i++)
        await node.hive.call(
          'queue',
          makeMessage({ Control: mapOf(i < 2 ? { delay: ['1h'] } : {}), Data: mapOf({ n: [String(i)] }) }),
          2000,
        );
      const toDeliver = page.locator(
        '[data-queue-charts="queue"] figure:has(figcaption:text("queue queue: entries to deliver"))',
      );
      await toDeliver.waitFor({ timeout: 10_000 });
      let depth = '';
      for (
        const end = Date.now() + 10_000;
        !/waiting 3 entries/.test(depth) && Date.now() < end;
        await page.waitForTimeout(300)
      )
        depth = (await toDeliver.locator('.chart-now').textContent()) ?? '';
      expect(depth).to.match(/━ waiting 3 entries\s+━ scheduled 2 entries\s+━ retrying 0 entries/);
      const kept = page.locator('[data-queue-charts="queue"] figure:has(figcaption:text("queue queue: entries kept"))');
      expect(await kept.locator('.chart-now').textContent()).to.match(/dead \d+ entr(y|ies)\s+┄ done \d+ entr(y|ies)/);
      expect(await toDeliver.locator('svg').getAttribute('aria-label')).to.match(
        /now waiting 3 entries, scheduled 2 entries, retrying 0 entries; scale up to \d+ entries/,
      );
      const text = (await page.textContent('main')) ?? '';
      expect(text).to.not.match(/\{"|":\s*\[/);
      // the demo's page at a glance: its queue in the first screen, the whole page a few screens, not ten
      const queues = (await page.locator('#queues-glance').boundingBox())!;
      expect(queues.y + queues.height, 'the queues within the first 800 px').to.be.at.most(800);
      expect(await page.evaluate('document.documentElement.scrollHeight'), 'the page height at 1280 px').to.be.at.most(
        3200,
      );
      expect(await chart.locator('svg').getAttribute('aria-label')).to.match(
        /now requests [\d.,]+\/s, errors [\d.]+\/s; scale up to/,
      );
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'console-live.png') });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(ARTIFACTS, 'console-live-narrow.png') });
      loading = false;
      await load;
    } finally {
      loading = false;
      await browser.close();
    }
  });

  it('figures that agree: a gateway taking requests is charted from what it accepted, not listed as idle; a service refusing bad input (400) is ok, not failing', async function () {
    node = await startDemo();
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    const gatewayPort = node.services.find((s) => s.kind === 'gateway')!.running.status().port as number;
    const auth = `Basic ${Buffer.from('demo:hivenode-demo').toString('base64')}`;
    const browser = await launchChromium(this);
    let loading = true;
    try {
      const load = (async () => {
        while (loading) {
          const res = await fetch(`http://127.0.0.1:${gatewayPort}/echo/hello`, {
            method: 'POST',
            headers: { authorization: auth, 'content-type': 'application/json' },
            body: '{"n":["1"]}',
          });
          await res.text();
          // the queue refuses a command it does not know: the caller's fault, 400
          const bad = await node!.hive.call(
            'queue',
            makeMessage({ Control: mapOf({ command: ['no-such-command'] }) }),
            2000,
          );
          expect(bad.Code).to.equal(400);
        }
      })();
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${base}/`);
      const chart = page.locator('#charts figure:has(figcaption:text("gateway: requests and errors per second"))');
      await chart.waitFor({ timeout: 15_000 });
      let now = 0;
      for (const end = Date.now() + 10_000; now === 0 && Date.now() < end; await page.waitForTimeout(500))
        now = Number(
          /requests ([\d.,]+)\/s/
            .exec((await chart.locator('.chart-now').textContent()) ?? '')?.[1]
            ?.replace(/,/g, '') ?? 0,
        );
      expect(now, 'the gateway chart reads its accepted requests').to.be.greaterThan(0);
      expect((await page.textContent('#charts')) ?? '').to.not.match(/Idle for 15 minutes: [^.]*\bgateway\b/);
      await page.goto(`${base}/services/queue`);
      expect(await page.textContent('#service-health')).to.equal('ok');
      loading = false;
      await load;
    } finally {
      loading = false;
      await browser.close();
    }
  });

  it('GET /api/live returns the sampled series, and the stream sends sections as JSON', async () => {
    node = await startDemo();
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    for (let i = 0; i < 20; i++) await node.hive.call('echo', makeMessage(), 2000);
    await sleep(2200);
    const live = (await (await fetch(`${base}/api/live`)).json()) as {
      intervalMs: number;
      times: number[];
      services: Array<{ name: string; rate: Array<number | null> }>;
      queues: Array<Record<string, unknown>>;
    };
    expect(live.intervalMs).to.equal(2000);
    expect(live.times.length).to.be.greaterThan(0);
    expect(live.services.find((s) => s.name === 'echo')!.rate.some((r) => r !== null && r > 0)).to.equal(true);
    expect(live.queues.map((q) => q.name)).to.deep.equal(['queue']);
    expect(Object.keys(live.queues[0]!)).to.have.members(['name', 'waiting', 'scheduled', 'retrying', 'dead', 'done']);
    for (const state of ['waiting', 'scheduled', 'retrying', 'dead', 'done'])
      expect(live.queues[0]![state]).to.have.length(live.times.length);
    const controller = new AbortController();
    const res = await fetch(`${base}/api/live/stream`, { signal: controller.signal });
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let received = '';
    while (!received.includes('\n\n', received.indexOf('event: sections')))
      received += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const data = JSON.parse(/event: sections\ndata: (.*)\n/.exec(received)![1]!) as Record<string, string>;
    expect(Object.keys(data)).to.have.members([
      'glance',
      'charts',
      'summary',
      'queues-glance-body',
      'services-body',
      'actors-summary',
      'actors-body',
      'journal-body',
    ]);
    expect(data['services-body']).to.contain('data-service="echo"');
  });
});
