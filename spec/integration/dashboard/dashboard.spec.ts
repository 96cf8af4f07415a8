import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { HiveNode } from '../../../node/node.js';
import { PassThrough } from 'node:stream';
import { execFile } from 'node:child_process';
import { launchChromium } from '../../browser.js';
import { startDemo } from '../../demo-node.js';
import { promisify } from 'node:util';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const ARTIFACTS = join(ROOT, 'test-artifacts');

/** Checks Prometheus text exposition format line by line (HELP, TYPE, samples). */
function assertPrometheusText(text: string): number {
  let samples = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) {
      expect(line).to.match(/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/);
      continue;
    }
    expect(line, line).to.match(
      /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? -?(\d+(\.\d+)?(e[+-]?\d+)?|NaN|\+Inf|-Inf)$/,
    );
    samples++;
  }
  return samples;
}

describe('supervision dashboard and metrics', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('serves /api/status with services and the actor tree, and /metrics in Prometheus text format', async () => {
    node = await startDemo();
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    await node.hive.call('echo', makeMessage({ Data: mapOf({ a: ['1'] }) }), 2000);
    const status = (await (await fetch(`${base}/api/status`)).json()) as {
      services: Array<{ name: string }>;
      actors: Array<{ path: string; children: unknown[] }>;
    };
    expect(status.services.map((s) => s.name)).to.include.members(['echo', 'queue', 'gateway', 'templates', 'web']);
    expect(status.actors[0]!.path).to.equal('/node');
    const res = await fetch(`${base}/metrics`);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    const text = await res.text();
    expect(assertPrometheusText(text)).to.be.greaterThan(10);
    expect(text).to.match(/hivenode_requests_total\{service="echo",kind="echo",code="200"\} 1/);
    expect(text).to.contain('hivenode_request_duration_seconds_bucket');
    expect(text).to.contain('hivenode_service_figure{service="queue",kind="queue",figure="size"} 0');
    expect(text).to.contain('hivenode_hive_operations{operation="calls"}');
  });

  it('names the node once (title, heading, `hivenode status`) and shows pool figures as readable text, not JSON', async () => {
    node = await startDemo();
    const base = `http://127.0.0.1:${node.dashboard!.port}`;
    // a SELECT through sqlsel opens its pool, so the pool has figures to show
    expect((await node.hive.call('sqlsel', makeMessage({ Data: mapOf({ name: ['%'] }) }), 5000)).Code).to.equal(200);
    const html = await (await fetch(`${base}/`)).text();
    expect(html).to.contain('<title>Live · hivenode — demo</title>');
    expect(html).to.match(/<span class="brand">hivenode \S* — demo<\/span>/);
    expect(html).to.match(/<h1>Live — demo <span class="muted">\(pid \d+\)<\/span><\/h1>/);
    const at = html.indexOf('<table id="services">');
    const services = html.slice(at, html.indexOf('</table>', at));
    const sqlRow = services.slice(services.indexOf('data-service="sqlsel"'));
    expect(sqlRow.slice(0, sqlRow.indexOf('</tr>'))).to.match(
      /<div>pool \d+ of \d+ connections? in use, \d+ idle, 0 requests waiting<\/div>/,
    );
    // eta escapes quotes, so raw JSON would show as {&quot; (or a literal {")
    expect(services).to.not.match(/\{&quot;|\{"/);

    const { stdout } = await promisify(execFile)(process.execPath, [...HIVENODE_ARGS, 'status', '--url', base], {
      timeout: 30_000,
    });
    expect(stdout).to.match(/^hivenode \S* — demo \(pid \d+\), up \d+ s/);
    const sqlLine = stdout.split('\n').find((l) => l.trimStart().startsWith('sqlsel '))!;
    expect(sqlLine).to.match(/pool \d+ of \d+ connections? in use, \d+ idle, 0 requests waiting/);
    expect(stdout).to.not.contain('{"');
  });

  it('a node without a name takes the name of its one service', async () => {
    node = await HiveNode.start({ services: [{ kind: 'echo', layers: [] }], logStream: new PassThrough() });
    expect(node.status().node.name).to.equal('echo-1');
  });

  it('the page lists the services and shows the restart count become 1 after a crash (headless chromium)', async function () {
    node = await startDemo();
    const browser = await launchChromium(this);
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${node.dashboard!.port}/`);
      for (const name of ['echo', 'queue', 'gateway', 'web', 'templates'])
        expect(await page.locator(`#services tr[data-service="${name}"]`).count()).to.equal(1);
      const restarts = page.locator('#actors tr[data-actor="/node/echo/worker"] td.restarts');
      expect((await restarts.textContent())?.trim()).to.equal('0');
      const crashed = await node.hive.call('echo', makeMessage({ Control: mapOf({ echo_crash: ['true'] }) }), 2000);
      expect(crashed.Code).to.equal(500);
      // the page refreshes itself every 2 s
      const end = Date.now() + 15_000;
      let shown = '0';
      while (shown !== '1' && Date.now() < end) {
        await page.waitForTimeout(250);
        shown = ((await restarts.textContent()) ?? '').trim();
      }
      expect(shown).to.equal('1');
      expect(await page.locator('#journal').textContent()).to.contain('CrashRequestedError');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
