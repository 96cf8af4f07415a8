import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../../browser.js';
import { startDemo } from '../../demo-node.js';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { sleep } from '../../support/wait.js';

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
    const flow = (await (await fetch(`http://127.0.0.1:${node.dashboard!.port}/api/flow`)).json()) as {
      nodes: Array<{ id: string; kind: string; health?: string }>;
      edges: Array<{ from: string; to: string; label: string; channel?: string }>;
    };
    for (const s of node.services)
      expect(
        flow.nodes.find((n) => n.id === `svc:${s.name}`),
        JSON.stringify(flow.nodes.find((n) => n.id === `svc:${s.name}`)),
      ).to.include({ kind: 'service', health: 'ok' });
    const edge = (from: string, to: string): string[] =>
      flow.edges.filter((e) => e.from === from && e.to === to).map((e) => e.label);
    expect(edge('svc:gateway', 'svc:sqlsel')).to.deep.equal(['sql/select']);
    // a route and OUTPUTCHANNEL to one channel are two arrows: what no route matched is counted apart (unrouted)
    expect(edge('svc:gateway', 'svc:echo')).to.deep.equal(['echo', 'no route matched']);
    expect(edge('svc:queue', 'svc:echo')).to.deep.equal(['delivers']);
    expect(edge('svc:queue', 'svc:dead-letters')).to.deep.equal(['dead letters']);
    expect(flow.edges.some((e) => e.from.startsWith('src:syslog:') && e.to === 'svc:syslog')).to.equal(true);
    expect(edge('svc:syslog', 'svc:syslog-received')).to.deep.equal(['messages']);
    expect(flow.edges.some((e) => e.from === 'svc:web' && e.to.startsWith('ext:http:'))).to.equal(true);
  });

  it("each arrow is labelled with what its sender sent along it: the queue to echo, the syslog receiver to its OUTPUTCHANNEL, the gateway none; a source's arrow with what its service counted", async () => {
    node = await startDemo();
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    for (let i = 0; i < 20; i++) await node.hive.call('queue', makeMessage({ Data: mapOf({ n: [String(i)] }) }), 2000);
    // messages straight to echo travel along no drawn arrow: they change no arrow's rate
    for (let i = 0; i < 20; i++) await node.hive.call('echo', makeMessage(), 2000);
    const syslog = node.services.find((s) => s.name === 'syslog')!.running.status() as { udpPort: number };
    const socket = createSocket('udp4');
    for (let i = 0; i < 10; i++)
      await new Promise<void>((resolve, reject) =>
        socket.send(`<14>1 2026-01-01T00:00:00Z host app - - - message ${i}`, syslog.udpPort, '127.0.0.1', (e) =>
          e ? reject(e) : resolve(),
        ),
      );
    socket.close();
    await sleep(2300);
    const flow = (await (await fetch(`${base}/api/flow`)).json()) as {
      edges: Array<{ from: string; to: string; rate?: number; sender?: { service: string; channel: string } }>;
    };
    const rate = (from: string, to: string): number | undefined =>
      flow.edges.find((e) => e.from === from && e.to === to)?.rate;
    // 20 and 10 messages sent within the last samples, over the 2 s between two samples: about 10/s and 5/s
    expect(rate('svc:queue', 'svc:echo')).to.be.within(4, 20);
    expect(rate('svc:syslog', 'svc:syslog-received')).to.be.within(2, 10);
    expect(rate('svc:gateway', 'svc:echo')).to.equal(0);
    expect(rate('svc:queue', 'svc:dead-letters')).to.equal(0);
    expect(flow.edges.find((e) => e.from === 'svc:queue' && e.to === 'svc:echo')!.sender).to.deep.equal({
      node: '',
      service: 'queue',
      channel: 'echo',
      label: 'delivers',
    });
    // an arrow from a source or to an outside server is counted by its service: datagrams received, requests accepted and made
    expect(rate('src:syslog:syslog', 'svc:syslog')).to.be.within(2, 10);
    expect(rate('src:http:gateway', 'svc:gateway')).to.equal(0);
    const upstream = flow.edges.find((e) => e.from === 'svc:web' && e.to.startsWith('ext:http:'));
    expect(upstream?.rate).to.equal(0);
  });

  it('the page draws every service of the demo as SVG without JavaScript, labels edges with rates, and opens a service on click', async function () {
    node = await startDemo();
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    const browser = await launchChromium(this);
    try {
      const plain = await (
        await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } })
      ).newPage();
      await plain.goto(`${base}/flow`);
      for (const s of node.services)
        expect(await plain.locator(`#flow svg g.flow-node[data-node="svc:${s.name}"]`).count(), s.name).to.equal(1);
      expect(await plain.locator('#flow svg g.flow-edge').count()).to.be.greaterThan(15);
      // 30 entries through the queue reach echo along the queue's arrow, none along the gateway's
      for (let i = 0; i < 30; i++) await node.hive.call('queue', makeMessage({ Data: mapOf({ a: ['1'] }) }), 2000);
      await plain.waitForTimeout(2500);
      await plain.reload();
      const rate = async (edge: string): Promise<number> => {
        const label = await plain.locator(`#flow svg g.flow-edge[data-edge="${edge}"] text`).textContent();
        expect(label).to.match(/ · \d+(\.\d+)?\/s$/);
        return Number(/· ([\d.]+)\/s$/.exec(label!)![1]);
      };
      expect(await plain.locator('#flow svg g.flow-edge[data-edge="svc:queue->svc:echo"] text').textContent()).to.match(
        /^delivers · /,
      );
      expect(await rate('svc:queue->svc:echo')).to.be.greaterThan(0);
      expect(
        await rate('svc:gateway->svc:echo"][data-label="echo'),
        'arrows into echo, each with its own rate',
      ).to.equal(0);
      expect(
        await plain.locator('#flow-edges-body tr:has(td:text-is("queue")):has(td:text-is("echo"))').textContent(),
      ).to.match(/delivers · [1-9][\d.]*\/s/);
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
