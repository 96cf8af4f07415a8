import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../../browser.js';
import { startDemo } from '../../demo-node.js';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';

const ARTIFACTS = join(new URL('../../../', import.meta.url).pathname, 'test-artifacts');

describe('console flow: the demo node drawn from its running configuration', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('GET /api/flow has every service, the gateway routes, the queue target and the syslog source, with health', async () => {
    node = await startDemo();
    const flow = (await (await fetch(`http://127.0.0.1:${node.dashboard!.port}/api/flow`)).json()) as { nodes: Array<{ id: string; kind: string; health?: string }>; edges: Array<{ from: string; to: string; label: string; channel?: string }> };
    for (const s of node.services) expect(flow.nodes.find((n) => n.id === `svc:${s.name}`), JSON.stringify(flow.nodes.find((n) => n.id === `svc:${s.name}`))).to.include({ kind: 'service', health: 'ok' });
    const edge = (from: string, to: string): string[] => flow.edges.filter((e) => e.from === from && e.to === to).map((e) => e.label);
    expect(edge('svc:gateway', 'svc:sqlsel')).to.deep.equal(['sql/select']);
    expect(edge('svc:gateway', 'svc:echo')).to.have.members(['echo', 'no route matched']);
    expect(edge('svc:queue', 'svc:echo')).to.deep.equal(['delivers']);
    expect(edge('svc:queue', 'ch:dead-letters')).to.deep.equal(['dead letters']);
    expect(flow.edges.some((e) => e.from.startsWith('src:syslog:') && e.to === 'svc:syslog')).to.equal(true);
    expect(edge('svc:syslog', 'svc:syslog-received')).to.deep.equal(['messages']);
    expect(flow.edges.some((e) => e.from === 'svc:web' && e.to.startsWith('ext:http:'))).to.equal(true);
  });

  it('the page draws every service of the demo as SVG without JavaScript, labels edges with rates, and opens a service on click', async function () {
    node = await startDemo();
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    const browser = await launchChromium(this);
    try {
      const plain = await (await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } })).newPage();
      await plain.goto(`${base}/flow`);
      for (const s of node.services) expect(await plain.locator(`#flow svg g.flow-node[data-node="svc:${s.name}"]`).count(), s.name).to.equal(1);
      expect(await plain.locator('#flow svg g.flow-edge').count()).to.be.greaterThan(15);
      // traffic on the echo channel shows as a rate on the edges into echo once sampled
      for (let i = 0; i < 50; i++) await node.hive.call('echo', makeMessage({ Data: mapOf({ a: ['1'] }) }), 2000);
      await plain.waitForTimeout(2500);
      await plain.reload();
      const label = await plain.locator('#flow svg g.flow-edge[data-edge="svc:queue->svc:echo"] text').textContent();
      expect(label).to.match(/^delivers · \d+(\.\d+)?\/s$/);
      expect(Number(/· ([\d.]+)\/s/.exec(label!)![1])).to.be.greaterThan(0);
      mkdirSync(ARTIFACTS, { recursive: true });
      await plain.screenshot({ path: join(ARTIFACTS, 'console-flow.png'), fullPage: true });
      await plain.setViewportSize({ width: 390, height: 844 });
      await plain.screenshot({ path: join(ARTIFACTS, 'console-flow-narrow.png'), fullPage: true });

      const page = await browser.newPage();
      await page.goto(`${base}/flow`);
      await Promise.all([page.waitForURL(/\/services\/echo$/), page.click('#flow svg a[aria-label^="echo:"]')]);
      expect(await page.textContent('h1')).to.contain('Service echo');
      await page.goto(`${base}/flow`);
      await Promise.all([page.waitForURL(/\/queues\/queue$/), page.click('#flow svg a[aria-label^="queue:"]')]);
      expect(await page.textContent('h1')).to.contain('Queue queue');
    } finally {
      await browser.close();
    }
  });
});
