/**
 * A whole node as a user runs it: `node dist/bin/hivenode.js run <file>` with all six services (sql on
 * SQLite, queue, gateway in strict mode, exec, syslog, httpclient, plus the echo service the gateway
 * answers from). Each round measures the time from spawning the process until the gateway's health
 * check answers 200, the process RSS once idle, and the RSS and rate under wrk load (POSTs through
 * gateway → hive → echo). The baseline is a bare `node -e` process serving the same JSON echo with
 * node:http, started, polled and loaded the same way. The two alternate; medians of BENCH_ROUNDS.
 * Before the rounds, one start (timed apart) writes the bundle's code cache, as a user's first start after
 * an install does; its time is printed apart.
 * Needs the build (`make build`): it runs the compiled CLI, as a user would, not the TypeScript.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../spec/adapters/ports.js';
import { REPO, fmt, interleavedAll, median, report } from './lib.js';
import { postScript, wrk, wrkInstalled } from './support/wrk.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const IDLE_MS = 1_000;
const cli = `${REPO}/dist/bin/hivenode.js`;
const interceptor = `${REPO}/examples/interceptors/data-body-before.mjs`;
if (!existsSync(cli) || !wrkInstalled()) {
  console.log('start-up bench skipped: needs the build (make build) and wrk (apt-get install wrk)');
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-startup-'));
const initFile = join(dir, 'init.sql');
writeFileSync(initFile, 'CREATE TABLE IF NOT EXISTS kv (id INTEGER PRIMARY KEY, v TEXT);\n');
const script = postScript('{"id":["42"],"name":["bench"]}');

/** The node file: every service once; ports are chosen per round. */
function nodeFile(gatewayPort: number, syslogPort: number): string {
  const services = [
    { service: 'echo', NAME: 'echo' },
    // the table must exist: the service checks its configured names against the database at start
    {
      service: 'sql',
      NAME: 'sql',
      SQL_ENGINE: 'sqlite',
      SQL_DATABASE: join(dir, 'startup.db'),
      SQL_INITFILE: initFile,
      SQL_STATEMENT: 'select',
      SQL_TABLE: 'kv',
    },
    { service: 'queue', NAME: 'queue', PersistPath: join(dir, 'queue'), DefaultChannel: 'echo' },
    {
      service: 'gateway',
      NAME: 'gateway',
      Port: gatewayPort,
      Strict: true,
      OUTPUTCHANNEL: 'echo',
      MaxInFlight: 100_000,
    },
    { service: 'exec', NAME: 'exec', Template: '{{ setCmd "/bin/true" }}' },
    {
      service: 'syslog',
      NAME: 'syslog',
      IP: '127.0.0.1',
      Port: syslogPort,
      UDP: true,
      TCP: true,
      OUTPUTCHANNEL: 'echo',
    },
    {
      service: 'httpclient',
      NAME: 'web',
      Method: 'POST',
      URL: `http://127.0.0.1:${gatewayPort}/echo/from-http-client`,
      InterceptBefore: `module://${interceptor}`,
    },
  ];
  const file = join(dir, 'node.json');
  writeFileSync(file, JSON.stringify({ services }));
  return file;
}

/** The bare baseline: node:http answering every request with the JSON echo the gateway gives. */
const bareServer = `const http = require('node:http');
http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.stringify({ Code: 200, Message: 'Success', Data: JSON.parse(Buffer.concat(chunks).toString() || '{}'), List: [] });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
  });
}).listen(Number(process.argv[1]), '127.0.0.1');`;

const rssOf = (child: ChildProcess): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

interface Round {
  readySeconds: number;
  idleRss: number;
  loadRss: number;
  rps: number;
}

/** Spawns on a free port and waits for the health check: the process, its port and the seconds until it answered. */
async function startReady(
  start: (port: number) => ChildProcess,
): Promise<{ child: ChildProcess; port: number; readySeconds: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = start(port);
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const health = `http://127.0.0.1:${port}/healthcheck`;
  const deadline = started + 60_000;
  while (
    !(await fetch(health).then(
      (r) => r.status === 200,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || performance.now() > deadline)
      throw new Error(`the process did not answer ${health} (exit code ${child.exitCode}):\n${stderr}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return { child, port, readySeconds: (performance.now() - started) / 1000 };
}

/** Spawns, waits for the health check, measures idle and loaded, stops the process. */
async function round(start: (port: number) => ChildProcess): Promise<Round> {
  const { child, port, readySeconds } = await startReady(start);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idleRss = rssOf(child);
  let loadRss = idleRss;
  const sampler = setInterval(() => (loadRss = Math.max(loadRss, rssOf(child))), 100);
  const load = await wrk(`http://127.0.0.1:${port}/test/op`, { connections: CONNECTIONS, seconds: SECONDS, script });
  clearInterval(sampler);
  if (load.errors > 0) throw new Error(`${load.errors} failed requests under load`);
  await new Promise((r) => child.once('exit', r).kill('SIGTERM'));
  return { readySeconds, idleRss, loadRss, rps: load.rps };
}

// the bundle's code cache (bin/code-cache.ts) of this bench's own: written by the untimed start below,
// as by a user's first start after an install, and taken by every round's
const codeCache = join(dir, 'code-cache');
const hivenode = (port: number): ChildProcess =>
  spawn(process.execPath, [cli, 'run', nodeFile(port, 0)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, HIVENODE_CODE_CACHE: codeCache },
  });

/** The first start after a build, in ms: compiles the bundle and writes its code cache when it exits. */
async function firstStart(): Promise<number> {
  const { child, readySeconds } = await startReady(hivenode);
  await new Promise((r) => child.once('exit', r).kill('SIGTERM'));
  return readySeconds * 1000;
}
const bare = (port: number): ChildProcess =>
  spawn(process.execPath, ['-e', bareServer, String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });

try {
  const cold = await firstStart();
  const ours: Round[] = [];
  const base: Round[] = [];
  await interleavedAll(ROUNDS, [
    async () => (ours.push(await round(hivenode)), 0),
    async () => (base.push(await round(bare)), 0),
  ]);
  const med = (rs: Round[], k: keyof Round): number => median(rs.map((r) => r[k]));
  console.log(
    `rounds ${ROUNDS} (median), interleaved; load: wrk -t1, ${CONNECTIONS} connections, ${SECONDS} s; RSS idle ${IDLE_MS} ms after ready, under load the highest 100 ms sample`,
  );
  console.log(
    `start to ready : hivenode run (7 services) ${(med(ours, 'readySeconds') * 1000).toFixed(0)} ms, bare node -e http server ${(med(base, 'readySeconds') * 1000).toFixed(0)} ms`,
  );
  console.log(
    `first start    : hivenode run ${cold.toFixed(0)} ms (no code cache yet: written as it exits; one run, before the rounds)`,
  );
  console.log(`RSS idle       : hivenode ${fmt(med(ours, 'idleRss'))} MiB, bare ${fmt(med(base, 'idleRss'))} MiB`);
  console.log(
    `RSS under load : hivenode ${fmt(med(ours, 'loadRss'))} MiB (${fmt(med(ours, 'rps'))} req/s), bare ${fmt(med(base, 'loadRss'))} MiB (${fmt(med(base, 'rps'))} req/s)`,
  );
  const baseline = 'bare node -e process serving node:http';
  const node = 'node of all six services (+ echo)';
  // the targets, absolute: start to ready <= 250 ms, idle RSS <= 90 MiB
  const ready = med(ours, 'readySeconds') * 1000;
  const idle = med(ours, 'idleRss');
  report({
    figure: `${node}: start to ready (health check answers)`,
    hivenode: ready,
    unit: 'ms',
    lowerIsBetter: true,
    baseline,
    baselineValue: med(base, 'readySeconds') * 1000,
    target: '≤ 250 ms',
    met: ready <= 250,
  });
  report({
    figure: `${node}: first start after a build, before its code cache is written (one run)`,
    hivenode: cold,
    unit: 'ms',
    lowerIsBetter: true,
    baseline,
    baselineValue: med(base, 'readySeconds') * 1000,
  });
  report({
    figure: `${node}: RSS idle`,
    hivenode: idle,
    unit: 'MiB',
    lowerIsBetter: true,
    baseline,
    baselineValue: med(base, 'idleRss'),
    target: '≤ 90 MiB',
    met: idle <= 90,
  });
  report({
    figure: `${node}: RSS under load (gateway → hive → echo, ${CONNECTIONS} connections)`,
    hivenode: med(ours, 'loadRss'),
    unit: 'MiB',
    lowerIsBetter: true,
    baseline,
    baselineValue: med(base, 'loadRss'),
  });
  report({
    figure: `${node}: HTTP rate in that load`,
    hivenode: med(ours, 'rps'),
    unit: 'req/s',
    baseline,
    baselineValue: med(base, 'rps'),
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
