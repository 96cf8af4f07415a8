/**
 * Gateway HTTP load with wrk (Debian), 32 connections: strict mode → embedded hive → echo, against a
 * raw node:http JSON echo server, in the same run, interleaved, median of rounds; interceptor mode
 * (the JSON pass-through pair, in-process and as HTTP services) reported too. Prints req/s, p50/p99
 * and the ratios (targets: strict >= 0.6 of raw, p99 <= 5 ms), and whether each target is met. Every
 * target is checked to answer 200 with the posted Data first, and wrk's non-2xx and socket-error
 * counts are reported, so errors are never counted as throughput.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { loadInterceptor, serveInterceptor } from '../actors/interceptor/server.js';
import { HiveNode } from '../supervisors/node.js';
import { median } from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

if (spawnSync('wrk', ['--version']).error) {
  console.log('wrk is not installed (apt-get install wrk): gateway bench skipped');
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-gw-'));
const script = join(dir, 'post.lua');
const BODY = '{"id":["42"],"name":["bench"]}';
writeFileSync(script, `wrk.method = "POST"\nwrk.body = '${BODY}'\nwrk.headers["Content-Type"] = "application/json"\n`);

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx/3xx responses plus socket errors: must be 0 for the figures to mean anything. */
  errors: number;
}

function toMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

/** wrk runs as a child process; the servers run in this process (the same for every target). */
async function wrk(url: string, seconds = SECONDS): Promise<WrkResult> {
  // asynchronous on purpose: a spawnSync would block the event loop the servers answer on
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('wrk', ['-t', '1', '-c', String(CONNECTIONS), '-d', `${seconds}s`, '--latency', '-s', script, url]);
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}:\n${text}`))));
  });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  const result = { rps, p50: toMs(/\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? ''), p99: toMs(/\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? ''), errors };
  if (![result.rps, result.p50, result.p99].every(Number.isFinite)) throw new Error(`cannot read wrk's output:\n${out}`);
  return result;
}

/** One POST must come back 200 with the posted Data before a target is measured. */
async function check(label: string, url: string): Promise<void> {
  const res = await fetch(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } });
  const text = await res.text();
  const data = res.status === 200 ? (JSON.parse(text) as { Data?: unknown }).Data : undefined;
  if (JSON.stringify(data) !== BODY) throw new Error(`${label} answered ${res.status} ${text}; expected 200 with Data ${BODY}`);
}

const raw = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.stringify({ Code: 200, Message: 'Success', Data: JSON.parse(Buffer.concat(chunks).toString() || '{}') as unknown, List: [] });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
await new Promise<void>((r) => raw.listen(0, '127.0.0.1', () => r()));
const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/test/op`;

const examples = new URL('../examples/interceptors/', import.meta.url).pathname;
const before = await serveInterceptor(await loadInterceptor(`${examples}json-before.mjs`), 0);
const after = await serveInterceptor(await loadInterceptor(`${examples}json-after.mjs`), 0);
const gw = (name: string, params: Array<[string, string]>) => ({ kind: 'gateway' as const, layers: [{ source: 'bench', values: [['NAME', name], ['Port', '0'], ['OUTPUTCHANNEL', 'echo'], ['MaxInFlight', '100000'], ...params] as Array<readonly [string, string]> }] });
const node = await HiveNode.start({
  logStream: new PassThrough(),
  services: [
    { kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'echo']] }] },
    gw('strict', [['Strict', 'true']]),
    gw('module', [['InterceptBefore', `module://${examples}json-before.mjs`], ['InterceptAfter', `module://${examples}json-after.mjs`]]),
    gw('http', [['InterceptBefore', `http://127.0.0.1:${before.port}/`], ['InterceptAfter', `http://127.0.0.1:${after.port}/`]]),
  ],
});
const url = (name: string): string => `http://127.0.0.1:${node.services.find((s) => s.name === name)!.running.status().port as number}/test/op`;

const urls: Record<string, string> = { raw: rawUrl, strict: url('strict'), module: url('module'), http: url('http') };
for (const [k, u] of Object.entries(urls)) {
  await check(k, u);
  await wrk(u, 1); // warm-up (JIT, connection pools), not counted
}
const load = loadavg()[0]!;
const results: Record<string, WrkResult[]> = { raw: [], strict: [], module: [], http: [] };
for (let i = 0; i < ROUNDS; i++) {
  results.raw!.push(await wrk(rawUrl));
  results.strict!.push(await wrk(url('strict')));
  results.module!.push(await wrk(url('module')));
  results.http!.push(await wrk(url('http')));
}
const summary = (k: string): WrkResult => ({
  rps: median(results[k]!.map((r) => r.rps)),
  p50: median(results[k]!.map((r) => r.p50)),
  p99: median(results[k]!.map((r) => r.p99)),
  errors: results[k]!.reduce((a, r) => a + r.errors, 0),
});
const r = summary('raw');
console.log(`wrk -t1, ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} rounds (median), interleaved; servers in this process, wrk a child; load average ${load.toFixed(2)} on 2 shared cores at start`);
for (const [k, label] of [['raw', 'raw node:http JSON echo'], ['strict', 'gateway strict → hive → echo'], ['module', 'gateway + module:// interceptors'], ['http', 'gateway + HTTP interceptor services']] as const) {
  const s = summary(k);
  const spread = results[k]!.map((x) => Math.round(x.rps).toLocaleString('en')).join(' / ');
  console.log(`${label.padEnd(36)} ${Math.round(s.rps).toLocaleString('en').padStart(8)} req/s  p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  ratio ${(s.rps / r.rps).toFixed(2)}  errors ${s.errors}  (rounds ${spread})`);
}
const strict = summary('strict');
const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT MET');
console.log(`target strict/raw >= 0.60: ${(strict.rps / r.rps).toFixed(2)} — ${verdict(strict.rps / r.rps >= 0.6)}`);
console.log(`target strict p99 <= 5 ms at ${CONNECTIONS} connections: ${strict.p99.toFixed(2)} ms — ${verdict(strict.p99 <= 5)} (raw p99 in the same run: ${r.p99.toFixed(2)} ms)`);
console.log(`interceptor mode (HTTP interceptor services)/raw: ${(summary('http').rps / r.rps).toFixed(2)}, in-process module:// interceptors/raw: ${(summary('module').rps / r.rps).toFixed(2)} (no target)`);
const failed = Object.keys(results).filter((k) => summary(k).errors > 0);
if (failed.length > 0) console.log(`WARNING: non-2xx responses or socket errors in ${failed.join(', ')}: their figures include failures`);
await node.stop(2000);
await before.close();
await after.close();
raw.close();
