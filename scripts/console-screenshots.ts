/**
 * `make screenshots`: regenerates docs/console/*.png, the console pictures the README shows. Runs the
 * demo node (examples/demo.yaml on free ports, its console with the demo's users), gives it some
 * traffic, a dead queue entry, a schedule and a crash, and photographs each page in Debian's
 * chromium at 1280×800 (and the queue page on a narrow window).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM } from '../spec/browser.js';
import { startDemo } from '../spec/demo-node.js';
import { makeMessage, mapOf } from '../protocol/message.js';

const OUT = join(new URL('../', import.meta.url).pathname, 'docs', 'console');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const node = await startDemo({ access: true });
  const base = `http://127.0.0.1:${node.dashboard!.port}`;
  const call = (channel: string, control: Record<string, string[]>, data: Record<string, string[]>): Promise<unknown> => node.hive.call(channel, makeMessage({ Class: 'demo', Operation: 'screenshot', Control: mapOf(control), Data: mapOf(data) }), 5_000);
  let loading = true;
  // a steady trickle through the queue to echo and straight to echo and SQL, so the charts have lines
  const load = (async () => {
    for (let i = 0; loading; i++) {
      await call('queue', {}, { item: [`job-${i}`], customer: [i % 3 === 0 ? 'acme' : 'globex'] });
      await call('echo', {}, { n: [String(i)] });
      if (i % 5 === 0) await call('sqlsel', {}, { name: ['%'] });
      await sleep(20);
    }
  })();
  await call('queue', { channel: ['billing'], requeue_count: ['0'] }, { invoice: ['INV-1042'], customer: ['acme'] });
  await call('queue', { channel: ['billing'], requeue_count: ['0'] }, { invoice: ['INV-1043'], customer: ['globex'] });
  await call('queue', { command: ['schedule'], schedule_name: ['nightly-report'], cron: ['30 2 * * *'], tz: ['Europe/Berlin'] }, { report: ['daily'] });
  await call('echo', { echo_crash: ['true'] }, { item: ['bad input'], password: ['hunter2'] });
  await sleep(40_000);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, httpCredentials: { username: 'ops', password: 'hivenode-console' } });
    const page = await context.newPage();
    await page.goto(`${base}/login`);
    const shoot = async (path: string, file: string): Promise<void> => {
      await page.goto(`${base}${path}`);
      await sleep(300);
      await page.screenshot({ path: join(OUT, file) });
      console.log(`docs/console/${file} ← ${path}`);
    };
    await shoot('/', 'live.png');
    await shoot('/flow', 'flow.png');
    await shoot('/queues/queue?state=dead', 'queue.png');
    const key = await page.getAttribute('#entries tbody tr', 'data-key');
    await shoot(`/queues/queue/entries/${key}`, 'entry.png');
    await shoot('/journal?event=crash', 'journal.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await shoot('/queues/queue?state=dead', 'queue-narrow.png');
  } finally {
    loading = false;
    await load;
    await browser.close();
    await node.stop(5_000);
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
