/**
 * Latency while a node reloads (README, Changing a running node): one `hivenode run` process (compiled,
 * as users run it) with a gateway and an echo; a closed loop of POSTs at 32 keep-alive connections
 * (undici) through the gateway to the echo. A round with reloads sends SIGHUP every RELOAD_EVERY_MS,
 * each time with a file that changes the gateway's ResponseHeaders and the echo's ReplyCode (so the
 * gateway hands its socket over and the echo starts beside the old one); the baseline round is the
 * same load on the same process without reloads. The two alternate; p99 and rate are medians of
 * BENCH_ROUNDS. Any failed request (socket error or non-2xx) fails the bench.
 * Needs the build (`make build`).
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { freePort } from '../spec/adapters/ports.js';
import { REPO, fmt, interleavedSamples, median, report } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const RELOAD_EVERY_MS = 400;
const cli = `${REPO}/dist/bin/hivenode.js`;
if (!existsSync(cli)) {
  console.log('reload bench skipped: needs the build (make build)');
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-reload-'));
const file = join(dir, 'node.yaml');
const port = await freePort();
let version = 0;
function writeFile(): void {
  version++;
  writeFileSync(
    file,
    [
      'services:',
      `  - {service: echo, NAME: echo, ReplyCode: ${200 + (version % 2)}}`,
      `  - {service: gateway, NAME: gw, Port: ${port}, Strict: true, Routes: "a=echo", ResponseHeaders: "X-Config: v${version}", MaxInFlight: 100000}`,
      '',
    ].join('\n'),
  );
}

interface Round {
  p99: number;
  rps: number;
  reloads: number;
}

/** The load for SECONDS, reloading every RELOAD_EVERY_MS when asked: p99 latency (ms) and rate. */
async function round(child: ChildProcess, reloading: boolean): Promise<Round> {
  const agent = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  let failed = 0;
  let stop = false;
  let reloads = 0;
  const timer = reloading
    ? setInterval(() => {
        writeFile();
        child.kill('SIGHUP');
        reloads++;
      }, RELOAD_EVERY_MS)
    : undefined;
  const began = performance.now();
  const end = began + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (!stop) {
        const t = performance.now();
        try {
          const res = await request(`http://127.0.0.1:${port}/a/x`, { method: 'POST', body: '{}', dispatcher: agent });
          await res.body.dump();
          if (res.statusCode < 200 || res.statusCode > 299) failed++;
        } catch {
          failed++;
        }
        latencies.push(performance.now() - t);
        if (performance.now() >= end) stop = true;
      }
    }),
  );
  clearInterval(timer);
  await agent.close();
  if (failed > 0) throw new Error(`${failed} failed requests ${reloading ? 'during reloads' : 'without reloads'}`);
  latencies.sort((a, b) => a - b);
  return {
    p99: latencies[Math.floor(latencies.length * 0.99)]!,
    rps: latencies.length / ((performance.now() - began) / 1000),
    reloads,
  };
}

writeFile();
const child = spawn(process.execPath, [cli, 'run', file], { stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
try {
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}/healthcheck`).then(
      (r) => r.status === 200,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the node did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const rounds: Round[][] = [[], []];
  await interleavedSamples(ROUNDS, [
    async () => (rounds[0]!.push(await round(child, true)), 0),
    async () => (rounds[1]!.push(await round(child, false)), 0),
  ]);
  const [during, without] = rounds as [Round[], Round[]];
  const med = (rs: Round[], k: keyof Round): number => median(rs.map((r) => r[k]));
  if (/reload refused/.test(output)) throw new Error(`a reload was refused:\n${output}`);
  console.log(
    `rounds ${ROUNDS} (median), interleaved; load: undici, ${CONNECTIONS} keep-alive connections, ${SECONDS} s; a reload (SIGHUP, the gateway's ResponseHeaders and the echo's ReplyCode changed) every ${RELOAD_EVERY_MS} ms: ${med(during, 'reloads')} a round`,
  );
  console.log(
    `p99 latency : during reloads ${med(during, 'p99').toFixed(1)} ms, without ${med(without, 'p99').toFixed(1)} ms`,
  );
  console.log(
    `rate        : during reloads ${fmt(med(during, 'rps'))} req/s, without ${fmt(med(without, 'rps'))} req/s; 0 failed requests`,
  );
  const baseline = 'the same load on the same node without reloads';
  report({
    figure: `gateway → hive → echo, ${CONNECTIONS} connections: p99 latency during reloads (one every ${RELOAD_EVERY_MS} ms)`,
    hivenode: med(during, 'p99'),
    unit: 'ms',
    lowerIsBetter: true,
    baseline,
    baselineValue: med(without, 'p99'),
  });
  report({
    figure: `gateway → hive → echo, ${CONNECTIONS} connections: rate during reloads`,
    hivenode: med(during, 'rps'),
    unit: 'req/s',
    baseline,
    baselineValue: med(without, 'rps'),
  });
} finally {
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
