/**
 * /traces: the recent sampled traces of the node and one trace as a waterfall,
 * found by the trace id a log line carries. The node records (an in-memory exporter), a request
 * goes through the queue to the recording echo, and its trace is shown with every span under its parent.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { stopTracing, startTracing } from '../../../actors/observe/tracing.js';
import { DEFAULT_TRACING } from '../../../config/tracing.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { launchChromium } from '../../browser.js';
import type { ConsoleNode } from './helpers.js';
import { startConsoleNode } from './helpers.js';
import { sleep } from '../../support/wait.js';

const ARTIFACTS = join(new URL('../../../', import.meta.url).pathname, 'test-artifacts');
const TRACE = '0af7651916cd43dd8448eb211c80319c';

describe('console traces: recent traces and one trace as a waterfall', function () {
  this.timeout(60_000);
  let c: ConsoleNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
    await stopTracing();
  });

  it('lists a recorded trace, finds it by its id and draws its spans under their parents', async function () {
    await startTracing({ ...DEFAULT_TRACING }, { exporter: new InMemorySpanExporter() });
    c = await startConsoleNode();
    const added = await c.node.hive.call(
      'jobs',
      makeMessage({
        Class: 'order',
        Operation: 'add',
        Control: mapOf({ traceparent: [`00-${TRACE}-b7ad6b7169203331-01`] }),
        Data: mapOf({ item: ['a'] }),
      }),
      5000,
    );
    expect(added.Code).to.equal(200);
    type Trace = { traceId: string; spans: Array<{ spanId: string; parentSpanId?: string; service: string }> };
    let trace: Trace | undefined;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const r = await fetch(`${c.base}/api/traces/${TRACE}`);
      if (r.status === 200) {
        trace = (await r.json()) as Trace;
        if (trace.spans.some((s) => s.service === 'recorder')) break;
      }
      await sleep(100);
    }
    expect(trace?.spans.map((s) => s.service)).to.include.members(['jobs', 'recorder']);
    const list = (await (await fetch(`${c.base}/api/traces`)).json()) as {
      mode: string;
      traces: Array<{ traceId: string }>;
    };
    expect(list.mode).to.equal('record');
    expect(list.traces.map((t) => t.traceId)).to.include(TRACE);
    expect((await fetch(`${c.base}/api/traces/ffffffffffffffffffffffffffffffff`)).status).to.equal(404);

    const browser = await launchChromium(this);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${c.base}/traces`);
      expect(await page.locator(`#traces a[href="/traces/${TRACE}"]`).count()).to.equal(1);
      // the id from a log line, typed into the search, opens the trace
      await page.fill('input[name=id]', TRACE);
      await Promise.all([page.waitForURL(/\/traces\?id=/), page.click('form.search button[type=submit]')]);
      expect(await page.locator('h1').textContent()).to.contain(TRACE);
      expect(await page.locator('figure.waterfall svg rect').count()).to.equal(trace!.spans.length);
      // every span's row names its parent, and each parent's row comes before its children's
      const rows = await page
        .locator('#spans tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) => ({ span: tr.getAttribute('data-span'), parent: tr.getAttribute('data-parent') })),
        );
      const seen = new Set<string>();
      for (const r of rows) {
        if (r.parent && rows.some((o) => o.span === r.parent))
          expect(seen.has(r.parent), `parent ${r.parent} before ${r.span}`).to.equal(true);
        seen.add(r.span!);
      }
      await page.goto(`${c.base}/traces?id=ffffffffffffffffffffffffffffffff`);
      expect(await page.locator('p.warn[role=status]').textContent()).to.contain('No recent trace');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.goto(`${c.base}/traces/${TRACE}`);
      await page.screenshot({ path: join(ARTIFACTS, 'console-trace.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
