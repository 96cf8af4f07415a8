/**
 * The cost of tracing on the gateway's hot path, wrk with 32 connections: gateway strict
 * → embedded hive → echo, each mode its own `hivenode run` process of the same node file (so one
 * mode's garbage and compiled code never weigh on another's), started side by side and measured
 * in interleaved rounds, medians:
 * - exported: OTEL_EXPORTER_OTLP_ENDPOINT set, OTEL_TRACES_SAMPLER=always_on: two spans a request
 *   (the gateway's and the echo's), exported over OTLP/HTTP (protobuf, the default) in batches to a receiver in this process
 *   (a collector runs elsewhere in practice);
 * - off: no OTEL_* variable: nothing exported, trace context still carried (a traceparent answered
 *   and passed to the echo, the trace scope entered per message for the log lines);
 * - bypassed: OTEL_PROPAGATORS=none: every trace code path returns at its first branch, the nearest
 *   thing to the build before tracing that one run can measure.
 * - control: a second bypassed process, measured the same way: control/bypassed is what the machine
 *   alone makes of two identical processes (on 2 shared cores its rounds spread ±0.15 about 1), the
 *   noise floor each target ratio is to be read against.
 * Targets: exported ≥ 0.85× off, judged on the server's CPU time per request
 * (utime + stime of its process, from /proc): on 2 shared cores other work takes the
 * cores at random and moves req/s by a factor of 2 or more between runs, while the CPU a request
 * costs the process stays what tracing adds; req/s ratios are printed beside. The other target, off ≥
 * 0.98× bypassed, is judged in instructions by gateway-tracing-instructions.ts; the CPU figure of
 * off/bypassed is still printed.
 * A round is SLICES slices of SLICE_SECONDS each (bench/lib.ts, slicedRounds), and in every slice each mode is loaded once, in an
 * order that turns from slice to slice; a mode's figure for the round is its CPU summed over its
 * slices over the requests answered in them. So the two sides of a ratio take turns every second and
 * meet the same load, where a round of one 4-second run per mode let the machine's other work fall
 * on one side more than the other: two identical processes (the control) spread with a standard
 * deviation of 0.067 a round on a quiet machine and 0.073 under a synthetic load (2 threads busy and
 * idle by turns, 0.3 to 3 s at random), and 0.009 and 0.015 with the slices; exported/off 0.032 and
 * 0.069, then 0.012 and 0.014 (8 rounds each). A run of 4 s per mode in the full `make bench` read
 * 0.83 where runs of the same build read 0.86 to 0.89. Each ratio is the median of the rounds' own
 * ratios (pairedRatio), and every round's ratio is printed, so the spread is seen. A raw node:http
 * JSON echo (its own process) is measured in the same rounds so the strict/raw ratio can be set
 * beside BENCHMARKS.md's gateway figure. The receiver counts what it is sent and decodes one batch to
 * check it holds spans.
 * bench-timeout: 600
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeOtlp } from '../spec/otlp-decode.js';
import { REPO, median, pairedRatio, report, slicedRounds } from './lib.js';
import type { WrkResult } from './support/wrk.js';
import { postScript, summarize, wrk, wrkInstalled } from './support/wrk.js';

// 4 slices of 1 s a mode a round: the same time under load as one run of 4 s, taken in turns
const SLICE_SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const SLICES = Number(process.env.BENCH_SLICES ?? 4);
const WARMUP_SLICES = 3;
// 11 rounds: with the slices a round's paired ratio spreads ~0.015 (standard deviation), so the
// median of 11 is within ~0.01 (one run of 4 s a mode a round spread ±0.15 under load)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const cli = `${REPO}/dist/bin/hivenode.js`;

if (!existsSync(cli) || !wrkInstalled()) {
  console.log('gateway tracing bench skipped: needs the build (make build) and wrk (apt-get install wrk)');
  process.exit(0);
}

const PATH = '/test/op';
const BODY = '{"id":["42"],"name":["bench"]}';
const script = postScript(BODY);

let exports = 0;
let exportedBytes = 0;
let checkedSpans = -1;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    exports++;
    const body = Buffer.concat(chunks);
    exportedBytes += body.length;
    if (checkedSpans < 0) {
      const doc = decodeOtlp(body, String(req.headers['content-type']));
      checkedSpans = (doc.resourceSpans ?? [])
        .flatMap((r) => r.scopeSpans ?? [])
        .reduce((n, s) => n + (s.spans?.length ?? 0), 0);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

type Mode = 'bypassed' | 'control' | 'off' | 'exported';
const SETTINGS: Record<Mode, NodeJS.ProcessEnv> = {
  bypassed: { OTEL_PROPAGATORS: 'none' },
  control: { OTEL_PROPAGATORS: 'none' },
  off: {},
  exported: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SERVICE_NAME: 'bench' },
};
const labels: Record<Mode | 'raw', string> = {
  raw: 'raw node:http JSON echo',
  bypassed: 'strict, trace code bypassed (OTEL_PROPAGATORS=none)',
  control: 'the same again, another process (control)',
  off: 'strict, tracing off (context carried, no export)',
  exported: 'strict, OTLP/HTTP export, 100% sampled',
};

/** One POST must come back 200 with the posted Data, and the traceparent header the mode says. */
async function check(label: string, url: string, traced: boolean | undefined): Promise<void> {
  const res = await fetch(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } });
  const text = await res.text();
  const data = res.status === 200 ? (JSON.parse(text) as { Data?: unknown }).Data : undefined;
  if (JSON.stringify(data) !== BODY)
    throw new Error(`${label} answered ${res.status} ${text}; expected 200 with Data ${BODY}`);
  if (traced !== undefined && (res.headers.get('traceparent') !== null) !== traced)
    throw new Error(`${label}: traceparent header ${traced ? 'missing' : 'present'}`);
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-tracing-'));
const file = join(dir, 'node.json');
writeFileSync(
  file,
  JSON.stringify({
    services: [
      { service: 'echo', NAME: 'echo' },
      { service: 'gateway', NAME: 'strict', Port: 0, Strict: true, OUTPUTCHANNEL: 'echo', MaxInFlight: 100000 },
    ],
  }),
);
const RAW = `const http = require('node:http');
const s = http.createServer((req, res) => { const c = []; req.on('data', (d) => c.push(d)); req.on('end', () => {
  const body = JSON.stringify({ Code: 200, Message: 'Success', Data: JSON.parse(Buffer.concat(c).toString() || '{}'), List: [] });
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body); }); });
s.listen(0, '127.0.0.1', () => console.log('serves HTTP on port ' + s.address().port));`;

const children: ChildProcess[] = [];
const pids: Record<string, number> = {};
/** Starts a process and resolves with the URL of the port it prints. */
function started(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_PROPAGATORS: '', OTEL_TRACES_SAMPLER: '', ...env },
  });
  children.push(child);
  pids[args[0] === '-e' ? 'raw' : String(env.mode)] = child.pid!;
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      const port = /serves HTTP on port (\d+)/.exec(out)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}${PATH}`);
      else if (child.exitCode !== null) reject(new Error(`the process exited: ${out}`));
      else return;
      clearInterval(poll);
    }, 20);
  });
}

// in this order (turned each slice) the pairs the ratios take run back to back: control-bypassed, bypassed-off, off-exported
const targets: Array<Mode | 'raw'> = ['raw', 'control', 'bypassed', 'off', 'exported'];
const urls: Record<string, string> = { raw: await started(['-e', RAW], {}) };
for (const mode of ['bypassed', 'off', 'exported', 'control'] as const)
  urls[mode] = await started([cli, 'run', file], { ...SETTINGS[mode], mode });
for (const t of targets) await check(t, urls[t]!, t === 'raw' ? undefined : t !== 'bypassed' && t !== 'control');
const load = loadavg()[0]!;
// the warm-up, not counted: 3 s of load for each mode, in slices as the rounds take them. After 1 s
// the first rounds still paid for V8 compiling the hot paths (on its own threads, counted in the
// process's CPU) and read exported/off 0.87, where the rounds after settled at 0.90 to 0.93
const sliced = await slicedRounds(
  targets.map((t) => ({
    pid: pids[t]!,
    load: (seconds: number) => wrk(urls[t]!, { connections: CONNECTIONS, seconds, script }),
  })),
  { rounds: ROUNDS, slices: SLICES, sliceSeconds: SLICE_SECONDS, warmupSlices: WARMUP_SLICES },
);
/** Every slice's wrk result, requests a second per round, and microseconds of the server process's CPU per request per round, per target. */
const slices: Record<string, WrkResult[]> = Object.fromEntries(targets.map((k, i) => [k, sliced.slices[i]!]));
const roundRps: Record<string, number[]> = Object.fromEntries(targets.map((k, i) => [k, sliced.rps[i]!]));
const cpu: Record<string, number[]> = Object.fromEntries(targets.map((k, i) => [k, sliced.cpuPerRequest[i]!]));
for (const c of children) c.kill('SIGTERM');
const s: Record<string, WrkResult> = Object.fromEntries(targets.map((k) => [k, summarize(slices[k]!)]));
console.log(
  `wrk -t1, ${CONNECTIONS} connections, ${ROUNDS} rounds (median) of ${SLICES} slices of ${SLICE_SECONDS} s a mode, each slice every mode in turn (req/s and latencies: medians over the slices); each mode its own hivenode run process, the OTLP receiver in this one; load average ${load.toFixed(2)} on 2 shared cores at start`,
);
for (const k of targets) {
  const spread = roundRps[k]!.map((x) => Math.round(x).toLocaleString('en')).join(' / ');
  console.log(
    `${labels[k].padEnd(52)} ${Math.round(s[k]!.rps).toLocaleString('en').padStart(8)} req/s  CPU ${median(cpu[k]!).toFixed(1)} µs/req  p50 ${s[k]!.p50.toFixed(2)} ms  p99 ${s[k]!.p99.toFixed(2)} ms  errors ${s[k]!.errors}  (rounds ${spread})`,
  );
}
const failed = targets.filter((k) => s[k]!.errors > 0);
if (failed.length > 0)
  console.log(`WARNING: non-2xx responses or socket errors in ${failed.join(', ')}: their figures include failures`);
console.log(
  `exported: ${exports} OTLP requests, ${(exportedBytes / 1048576).toFixed(1)} MiB; the first batch held ${checkedSpans} spans`,
);
if (exports === 0 || checkedSpans <= 0)
  throw new Error('the exported mode exported no spans: its figure would measure nothing');

// the throughput one core of CPU would give: requests per CPU second, per round
const perCpu = (k: string): number[] => cpu[k]!.map((us) => 1e6 / us);
const exported = pairedRatio(perCpu('exported'), perCpu('off'));
const off = pairedRatio(perCpu('off'), perCpu('bypassed'));
const rounds2 = (a: string, b: string): string =>
  perCpu(a)
    .map((x, i) => (x / perCpu(b)[i]!).toFixed(2))
    .join(' / ');
const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT MET');
console.log(
  `target exported/off >= 0.85 (requests per CPU second, median of paired rounds): ${exported.toFixed(2)} — ${verdict(exported >= 0.85)}  (rounds ${rounds2('exported', 'off')}; req/s ratio ${(s.exported!.rps / s.off!.rps).toFixed(2)})`,
);
// the 2% target is judged in instructions (gateway-tracing-instructions.ts): read against the noise floor below, CPU time cannot show it
console.log(
  `off/bypassed (requests per CPU second, median of paired rounds; the target, >= 0.98, is judged in instructions): ${off.toFixed(2)}  (rounds ${rounds2('off', 'bypassed')}; req/s ratio ${(s.off!.rps / s.bypassed!.rps).toFixed(2)})`,
);
const control = pairedRatio(perCpu('control'), perCpu('bypassed'));
console.log(
  `noise floor, control/bypassed (two identical processes, requests per CPU second, median of paired rounds): ${control.toFixed(2)}  (rounds ${rounds2('control', 'bypassed')})`,
);
console.log(
  `strict/raw with tracing off: ${(s.off!.rps / s.raw!.rps).toFixed(2)}, bypassed: ${(s.bypassed!.rps / s.raw!.rps).toFixed(2)} (BENCHMARKS.md's gateway bench before tracing: 0.96)`,
);
const figure = `gateway strict → hive → echo, ${CONNECTIONS} connections`;
report({
  figure: `${figure}, OTLP export at 100% sampling: requests per CPU second`,
  hivenode: median(perCpu('exported')),
  unit: 'req/CPU s',
  baseline: 'the same gateway, tracing off',
  baselineValue: median(perCpu('off')),
  ratio: exported,
  target: '≥ 0.85',
  met: exported >= 0.85,
});
report({
  figure: `${figure}, tracing off: requests per CPU second (target judged in instructions, below)`,
  hivenode: median(perCpu('off')),
  unit: 'req/CPU s',
  baseline: 'the same gateway, trace code bypassed (OTEL_PROPAGATORS=none)',
  baselineValue: median(perCpu('bypassed')),
  ratio: off,
});
report({
  figure: `${figure}, OTLP export at 100% sampling`,
  hivenode: s.exported!.rps,
  unit: 'req/s',
  baseline: 'the same gateway, tracing off',
  baselineValue: s.off!.rps,
});
report({
  figure: `${figure}, tracing off`,
  hivenode: s.off!.rps,
  unit: 'req/s',
  baseline: 'the same gateway, trace code bypassed (OTEL_PROPAGATORS=none)',
  baselineValue: s.bypassed!.rps,
});
report({
  figure: `${figure}, noise floor: a second trace-code-bypassed process, requests per CPU second`,
  hivenode: median(perCpu('control')),
  unit: 'req/CPU s',
  baseline: 'the same gateway, trace code bypassed (OTEL_PROPAGATORS=none)',
  baselineValue: median(perCpu('bypassed')),
  ratio: control,
});
report({
  figure: `${figure}, OTLP export at 100% sampling, p99 latency`,
  hivenode: s.exported!.p99,
  unit: 'ms',
  lowerIsBetter: true,
  baseline: 'the same gateway, tracing off',
  baselineValue: s.off!.p99,
});
report({
  figure: `${figure}, tracing off`,
  hivenode: s.off!.rps,
  unit: 'req/s',
  baseline: 'raw node:http JSON echo',
  baselineValue: s.raw!.rps,
});

receiver.close();
rmSync(dir, { recursive: true, force: true });
