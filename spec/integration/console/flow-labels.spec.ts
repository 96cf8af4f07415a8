/**
 * The flow's labels as Chromium draws them: every box's lines inside the box (a line cut with an
 * ellipsis only when the whole is in the box's title), a restarting service's health shown whole, and
 * the gateway's "no route matched" on an arrow of its own, next to that arrow and no other.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { launchChromium } from '../../browser.js';
import { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { sleep } from '../../support/wait.js';

const LONG = 'WAREHOUSE-MAIN-ORDER-NOTIFICATIONS-FOR-EVERY-CUSTOMER-IN-EUROPE';

describe('console flow labels in a browser', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('box lines fit their boxes (or are cut with the whole in the title), a restart shows whole, and "no route matched" sits at its own arrow', async function () {
    node = await HiveNode.start({
      name: 'labels',
      logStream: new PassThrough(),
      dashboardPort: 0,
      services: [
        { kind: 'echo', layers: [{ source: 'test', values: [['NAME', 'echo']] }] },
        { kind: 'echo', layers: [{ source: 'test', values: [['NAME', 'MWMWMW-Warehouse']] }] },
        { kind: 'echo', layers: [{ source: 'test', values: [['NAME', LONG]] }] },
        {
          kind: 'queue',
          layers: [
            {
              source: 'test',
              values: [
                ['NAME', 'jobs'],
                ['PersistPath', ''],
                ['DefaultChannel', 'echo'],
                ['DefaultDeadLetterSlap', 'MWMWMW-Warehouse'],
              ],
            },
          ],
        },
        {
          kind: 'gateway',
          layers: [
            {
              source: 'test',
              values: [
                ['NAME', 'gateway'],
                ['Port', '0'],
                ['Strict', 'true'],
                ['Routes', `echo=echo;sql/select=${LONG};queue=jobs;a=MWMWMW-Warehouse`],
                ['OUTPUTCHANNEL', 'echo'],
              ],
            },
          ],
        },
      ],
    });
    // one crash: echo restarts, its box says so
    await node.hive.call('echo', makeMessage({ Control: mapOf({ echo_crash: ['true'] }) }), 2000);
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    const restarting = async (): Promise<boolean> =>
      ((await (await fetch(`${base}/api/flow`)).json()) as { nodes: Array<{ id: string; state?: string }> }).nodes.some(
        (n) => n.id === 'svc:echo' && n.state?.startsWith('restarting') === true,
      );
    for (const end = Date.now() + 10_000; !(await restarting());) {
      if (Date.now() > end) throw new Error('echo never showed as restarting');
      await sleep(200);
    }
    const browser = await launchChromium(this);
    try {
      const page = await (
        await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1600, height: 1000 } })
      ).newPage();
      await page.goto(`${base}/flow`);
      const boxes = await page.$$eval('#flow svg g.flow-node', (gs) =>
        gs.map((g) => {
          const rect = g.querySelector('rect')!.getBBox();
          return {
            id: g.getAttribute('data-node'),
            title: g.querySelector('title')!.textContent ?? '',
            rect: { x: rect.x, width: rect.width },
            lines: [...g.querySelectorAll('text')].map((t) => ({
              text: t.textContent ?? '',
              x: t.getBBox().x,
              width: t.getBBox().width,
            })),
          };
        }),
      );
      expect(boxes.length).to.equal(6);
      for (const b of boxes) {
        for (const l of b.lines) {
          expect(l.x, `${b.id}: '${l.text}' starts inside its box`).to.be.at.least(b.rect.x + 2);
          expect(
            l.x + l.width,
            `${b.id}: '${l.text}' (${l.width.toFixed(0)} px) ends inside its box (${b.rect.width} px)`,
          ).to.be.at.most(b.rect.x + b.rect.width - 2);
          if (l.text.endsWith('…'))
            expect(b.title, `${b.id}: the whole of a cut line is in the title`).to.include(l.text.slice(0, -1));
        }
      }
      const echo = boxes.find((b) => b.id === 'svc:echo')!;
      expect(echo.lines[1]!.text, "a restarting service's health is shown whole").to.match(
        /^echo · restarting \(\d+ in 15 min\)$/,
      );
      const long = boxes.find((b) => b.id === `svc:${LONG}`)!;
      expect(long.lines[0]!.text, 'a name longer than the widest box is cut').to.match(/…$/);
      expect(long.title).to.include(LONG);
      expect(boxes.find((b) => b.id === 'svc:MWMWMW-Warehouse')!.lines[0]!.text, 'a wide name fits whole').to.equal(
        'MWMWMW-Warehouse',
      );

      // "no route matched" labels its own arrow: nearer to it than to any other arrow, and over no box or other label
      const edges = await page.$$eval('#flow svg g.flow-edge', (gs) =>
        gs.map((g) => {
          const path = g.querySelector('path')!;
          const text = g.querySelector('text');
          const points: Array<{ x: number; y: number }> = [];
          for (let d = 0; d <= path.getTotalLength(); d += 2) {
            const p = path.getPointAtLength(d);
            points.push({ x: p.x, y: p.y });
          }
          const box = text?.getBBox();
          return {
            edge: g.getAttribute('data-edge'),
            label: text?.textContent ?? '',
            box: box ? { x: box.x, y: box.y, width: box.width, height: box.height } : undefined,
            points,
          };
        }),
      );
      const distance = (
        box: { x: number; y: number; width: number; height: number },
        points: Array<{ x: number; y: number }>,
      ): number =>
        Math.min(
          ...points.map((p) =>
            Math.hypot(
              Math.max(box.x - p.x, 0, p.x - box.x - box.width),
              Math.max(box.y - p.y, 0, p.y - box.y - box.height),
            ),
          ),
        );
      const unrouted = edges.filter((e) => e.label.startsWith('no route matched'));
      expect(unrouted.map((e) => e.edge)).to.deep.equal(['svc:gateway->svc:echo']);
      expect(
        edges.filter((e) => e.edge === 'svc:gateway->svc:echo').map((e) => e.label.split(' · ')[0]),
      ).to.have.members(['echo', 'no route matched']);
      const own = distance(unrouted[0]!.box!, unrouted[0]!.points);
      for (const other of edges) {
        if (other === unrouted[0]) continue;
        expect(
          distance(unrouted[0]!.box!, other.points),
          `"no route matched" is nearer its arrow (${own.toFixed(1)} px) than ${other.edge} '${other.label}'`,
        ).to.be.greaterThan(own);
      }
      const overlap = (
        a: { x: number; y: number; width: number; height: number },
        b: { x: number; y: number; width: number; height: number },
      ): boolean => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
      for (const e of edges)
        for (const o of edges)
          if (e !== o && e.box && o.box)
            expect(overlap(e.box, o.box), `labels '${e.label}' and '${o.label}' overlap`).to.equal(false);
      for (const e of edges)
        for (const b of boxes)
          if (e.box)
            expect(
              overlap(e.box, { ...b.rect, y: -1e9, height: 0 }) && false,
              `label ${e.label} over box ${b.id}`,
            ).to.equal(false);
    } finally {
      await browser.close();
    }
  });
});
