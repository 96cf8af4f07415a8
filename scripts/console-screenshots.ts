/**
 * `make screenshots`: regenerates docs/console/*.png, the console pictures the README shows. Runs the
 * demo node (examples/demo.yaml on free ports, its console with the demo's users), gives it some
 * traffic, a dead queue entry, a schedule, entries delayed for later and a crash, and photographs
 * each page in Debian's chromium at 1280×800 (and the queue page on a narrow window). Then, when
 * nats-server is installed, two nodes on a private NATS hive on loopback: the flow of one with the
 * other's services as boxes (flow-hive.png).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM } from '../spec/browser.js';
import { startDemo } from '../spec/demo-node.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import type { Browser } from 'playwright-core';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../node/node.js';
import { natsServer, natsServerAvailable } from '../spec/adapters/nats/server.js';
import { createLogger } from '../actors/observe/logger.js';
import { describeError } from '../protocol/errors.js';

const log = createLogger({ level: 'info', stream: process.stdout });
const OUT = join(new URL('../', import.meta.url).pathname, 'docs', 'console');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const node = await startDemo({ access: true });
  const base = `http://127.0.0.1:${node.dashboard!.port}`;
  const call = (channel: string, control: Record<string, string[]>, data: Record<string, string[]>): Promise<unknown> =>
    node.hive.call(
      channel,
      makeMessage({ Class: 'demo', Operation: 'screenshot', Control: mapOf(control), Data: mapOf(data) }),
      5_000,
    );
  let loading = true;
  // the demo gateway's user (examples/demo.htpasswd): HTTP clients → gateway → echo and SQL, as the flow draws them
  const gateway = `http://127.0.0.1:${String(node.services.find((s) => s.name === 'gateway')!.running.status().port)}`;
  const post = (path: string, data: Record<string, string[]>): Promise<unknown> =>
    fetch(`${gateway}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('demo:hivenode-demo').toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(data),
    }).then((r) => r.text());
  // a steady trickle through the queue to echo and through the gateway to echo and SQL, so the charts have lines and the arrows rates
  const load = (async () => {
    for (let i = 0; loading; i++) {
      await call('queue', {}, { item: [`job-${i}`], customer: [i % 3 === 0 ? 'acme' : 'globex'] });
      if (i % 2 === 0) await post('/echo/hello', { n: [String(i)] });
      if (i % 5 === 0) await post('/sql/select', { name: ['%'] });
      await sleep(20);
    }
  })();
  await call(
    'queue',
    { channel: ['nobody-here'], requeue_count: ['0'] },
    { invoice: ['INV-1042'], customer: ['acme'] },
  );
  await call(
    'queue',
    { channel: ['nobody-here'], requeue_count: ['0'] },
    { invoice: ['INV-1043'], customer: ['globex'] },
  );
  await call(
    'queue',
    { command: ['schedule'], schedule_name: ['nightly-report'], cron: ['30 2 * * *'], tz: ['Europe/Berlin'] },
    { report: ['daily'] },
  );
  for (let i = 0; i < 4; i++) await call('queue', { delay: ['2h'] }, { item: [`later-${i}`], customer: ['acme'] });
  await call('echo', { echo_crash: ['true'] }, { item: ['bad input'], password: ['hunter2'] });
  await sleep(40_000);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      httpCredentials: { username: 'ops', password: 'hivenode-console' },
    });
    const page = await context.newPage();
    await page.goto(`${base}/login`);
    const shoot = async (path: string, file: string, prepare?: () => Promise<void>): Promise<void> => {
      await page.goto(`${base}${path}`);
      await sleep(300);
      await prepare?.();
      await page.screenshot({ path: join(OUT, file) });
      log.info(`docs/console/${file} ← ${path}`);
    };
    await shoot('/', 'live.png');
    await page.locator('[data-queue-charts]').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(OUT, 'live-queues.png') });
    log.info('docs/console/live-queues.png ← / (the queue charts)');
    await shoot('/flow', 'flow.png');
    // the dead list with its last errors, one entry checked for a bulk action
    await shoot('/queues/queue?state=dead', 'queue.png', () => page.check('#entries input.entry-key >> nth=0'));
    const key = await page.getAttribute('#entries tbody tr', 'data-key');
    await shoot(`/queues/queue/entries/${key}`, 'entry.png');
    await shoot('/journal?event=crash', 'journal.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await shoot('/queues/queue?state=dead', 'queue-narrow.png');
    if (natsServerAvailable()) await hiveFlow(browser);
    else log.info('nats-server is not installed: docs/console/flow-hive.png kept as it was');
  } finally {
    loading = false;
    await load;
    await browser.close();
    await node.stop(5_000);
  }
}

/** Two nodes on a NATS hive: 'intake' (console, a queue → billing) and 'billing' (echo billing, a queue → audit on intake). */
async function hiveFlow(browser: Browser): Promise<void> {
  const server = await natsServer();
  const hive = [
    ['SERVERHOST', server.url],
    ['SERVERAUTH', server.token],
  ] as const;
  const service = (
    kind: 'echo' | 'queue',
    values: Array<readonly [string, string]>,
  ): { kind: 'echo' | 'queue'; layers: Array<{ source: string; values: Array<readonly [string, string]> }> } => ({
    kind,
    layers: [{ source: 'screenshots', values: [...values, ...hive] }],
  });
  const intake = await HiveNode.start({
    name: 'intake',
    dashboardPort: 0,
    logStream: new PassThrough(),
    services: [
      service('echo', [['NAME', 'audit']]),
      service('queue', [
        ['NAME', 'orders'],
        ['PersistPath', ''],
        ['DefaultChannel', 'billing'],
        ['DefaultDeadLetterSlap', 'audit'],
      ]),
    ],
  });
  const billing = await HiveNode.start({
    name: 'billing',
    logStream: new PassThrough(),
    services: [
      service('echo', [['NAME', 'billing']]),
      service('queue', [
        ['NAME', 'refunds'],
        ['PersistPath', ''],
        ['DefaultChannel', 'audit'],
      ]),
    ],
  });
  let loading = true;
  const load = (async () => {
    for (let i = 0; loading; i++) {
      await intake.hive.call('orders', makeMessage({ Data: mapOf({ order: [String(i)] }) }), 5_000);
      if (i % 3 === 0) await billing.hive.call('refunds', makeMessage({ Data: mapOf({ order: [String(i)] }) }), 5_000);
      await sleep(50);
    }
  })();
  try {
    // three rounds of both rosters, each read by a sample of the console's history
    for (let i = 0; i < 3; i++) {
      await sleep(2_500);
      await billing.roster!.round();
      await intake.roster!.round();
    }
    await sleep(2_500);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`http://127.0.0.1:${intake.dashboard!.port}/flow`);
    await sleep(300);
    await page.screenshot({ path: join(OUT, 'flow-hive.png') });
    log.info('docs/console/flow-hive.png ← /flow of node intake on a NATS hive shared with node billing');
  } finally {
    loading = false;
    await load;
    await billing.stop(5_000);
    await intake.stop(5_000);
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    log.error(
      `screenshots failed: ${describeError(e)}`,
      e instanceof Error && e.stack ? { stack: e.stack } : undefined,
    );
    process.exit(1);
  },
);
