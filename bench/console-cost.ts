/**
 * What the operator console costs the gateway while someone watches it: a strict gateway (→ embedded
 * hive → echo) loaded by wrk, in interleaved rounds with Debian's chromium showing blank pages and
 * with it holding the live page (its Server-Sent Events stream: charts re-rendered and pushed every
 * 2 s) and the flow page (fetched again every 5 s) open, with an operator signed in.
 * Both in one node in this process, the console on its dashboard port. Target: with the console
 * open ≥ 0.95× without (it costs the gateway < 5%), judged by the median of the rounds' own ratios
 * (pairedRatio) of sliced rounds (bench/lib.ts, slicedRounds): on the shared 2-core machine a round's
 * rate swings by half with other work's load, so the ratio of the two sides' medians took them from
 * rounds under different load (0.83 to 1.19 in three runs of one commit), and with one side always
 * first a rising load fell on the other side of every pair. The gateway is checked to answer 200
 * first and wrk's errors are reported, so failures never count as throughput.
 */
import { writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';
import { passwdLine } from '../actors/auth/authenticate.js';
import { HiveNode } from '../node/node.js';
import { fmt, pairedRatio, report, slicedRounds } from './lib.js';
import { postScript, summarize, wrk, wrkInstalled } from './support/wrk.js';
import type { WrkResult } from './support/wrk.js';

// sliced rounds (bench/lib.ts, slicedRounds): 2 slices of 2 s a side a round, the time under load of
// one run of 4 s; a slice of the open console takes its 2 s push, each side's page is put up before
// its slice and left 1 s to settle (not counted)
const SLICE_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const SLICES = Number(process.env.BENCH_SLICES ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TARGET = 0.95;
const CHROMIUM = '/usr/bin/chromium';

if (!wrkInstalled()) {
  console.log('wrk is not installed (apt-get install wrk): console cost bench skipped');
  process.exit(0);
}

const BODY = '{"id":["42"],"name":["bench"]}';
const script = postScript(BODY);
const users = join(tmpdir(), `hn-bench-console-users-${process.pid}`);
writeFileSync(users, `${await passwdLine('ops', 'bench', 4)}\n`);

const node = await HiveNode.start({
  logStream: new PassThrough(),
  name: 'bench',
  services: [
    { kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'echo']] }] },
    {
      kind: 'gateway',
      layers: [
        {
          source: 'bench',
          values: [
            ['NAME', 'gateway'],
            ['Port', '0'],
            ['Strict', 'true'],
            ['OUTPUTCHANNEL', 'echo'],
            ['MaxInFlight', '100000'],
          ],
        },
      ],
    },
  ],
  dashboardPort: 0,
  dashboardAccess: { users },
});
const url = `http://127.0.0.1:${node.services.find((s) => s.name === 'gateway')!.running.status().port as number}/test/op`;
const consoleBase = `http://127.0.0.1:${node.dashboard!.port}`;
const answer = await (
  await fetch(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } })
).text();
if (JSON.stringify((JSON.parse(answer) as { Data?: unknown }).Data) !== BODY)
  throw new Error(`the gateway answered ${answer}`);

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

// one browser context, signed in, with two tabs; a round "with" shows the console in them, a round
// "without" blank pages: loading a page is not what is measured, so each round starts 1 s after it
const context: BrowserContext = await browser.newContext({
  viewport: { width: 1280, height: 800 },
  httpCredentials: { username: 'ops', password: 'bench' },
});
const live = await context.newPage();
const flow = await context.newPage();
await live.goto(`${consoleBase}/login`);

async function showConsole(): Promise<void> {
  await live.goto(`${consoleBase}/`);
  // a locator, not a string predicate: the console's CSP forbids eval, which a string needs when its first check fails
  await live.locator('[data-stream][data-updated]').waitFor({ state: 'attached', timeout: 10_000 });
  await flow.goto(`${consoleBase}/flow`);
  await new Promise((r) => setTimeout(r, 1000));
}

async function blank(): Promise<void> {
  await live.goto('about:blank');
  await flow.goto('about:blank');
  await new Promise((r) => setTimeout(r, 1000));
}

await wrk(url, { connections: CONNECTIONS, seconds: 1, script }); // warm-up, not counted
/** The live page's updates in each slice with the console open, in order. */
const updatesPerSlice: number[] = [];
console.log(
  `wrk -t1, ${CONNECTIONS} connections, ${ROUNDS} rounds (median) of ${SLICES} slices of ${SLICE_SECONDS} s a side, each slice both sides in turn; node in this process, wrk and chromium children; load average ${loadavg()[0]!.toFixed(2)} on 2 shared cores at start`,
);
const sliced = await slicedRounds<WrkResult>(
  [
    { prepare: blank, load: (seconds) => wrk(url, { connections: CONNECTIONS, seconds, script }) },
    {
      prepare: showConsole,
      load: async (seconds) => {
        const before = Number(await live.getAttribute('[data-stream]', 'data-updates'));
        const r = await wrk(url, { connections: CONNECTIONS, seconds, script });
        updatesPerSlice.push(Number(await live.getAttribute('[data-stream]', 'data-updates')) - before);
        return r;
      },
    },
  ],
  { rounds: ROUNDS, slices: SLICES, sliceSeconds: SLICE_SECONDS },
);
// the page must have kept receiving while the load ran, in every round: otherwise nothing was measured
for (let i = 0; i < ROUNDS; i++) {
  if (updatesPerSlice.slice(i * SLICES, (i + 1) * SLICES).reduce((a, b) => a + b, 0) <= 0)
    throw new Error(`the live page received no update during round ${i + 1}`);
}
const pushed = updatesPerSlice.reduce((a, b) => a + b, 0);
const [without, withConsole] = sliced.slices as [WrkResult[], WrkResult[]];
const a = summarize(without);
const b = summarize(withConsole);
for (const [label, s, rounds] of [
  ['gateway strict, chromium on blank pages', a, sliced.rps[0]!],
  ['gateway strict, console live + flow open in chromium', b, sliced.rps[1]!],
] as const) {
  console.log(
    `${label.padEnd(54)} ${fmt(s.rps).padStart(8)} req/s  p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  errors ${s.errors}  (rounds ${rounds.map(fmt).join(' / ')})`,
  );
}
const ratio = pairedRatio(sliced.rps[1]!, sliced.rps[0]!);
console.log(
  `the live page took ${pushed} pushed updates during the ${ROUNDS} rounds with it open; ratio of the two medians ${(b.rps / a.rps).toFixed(3)}`,
);
console.log(
  `target with console / without >= ${TARGET} (median of the ${ROUNDS} rounds' ratios): ${ratio.toFixed(3)} — ${ratio >= TARGET ? 'met' : 'NOT MET'}`,
);
if (a.errors + b.errors > 0) console.log('WARNING: non-2xx responses or socket errors: the figures include failures');
report({
  figure: `gateway strict → hive → echo, ${CONNECTIONS} connections, with the console's live and flow pages open in chromium`,
  hivenode: b.rps,
  unit: 'req/s',
  baseline: 'the same gateway, chromium on blank pages',
  baselineValue: a.rps,
  ratio,
  target: `≥ ${TARGET}`,
  met: ratio >= TARGET,
});

await browser.close();
await node.stop(2000);
