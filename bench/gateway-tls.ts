/**
 * The gateway over HTTPS against the same gateway over plain HTTP, in the same run: two strict
 * gateways (→ embedded hive → echo) in one node, one with TLSCert and TLSKey from `make certs`
 * (scripts/certs.sh, into a temporary directory), loaded by wrk with keep-alive connections (the way
 * clients and load balancers talk to it), in sliced rounds (bench/lib.ts, slicedRounds), the ratio the
 * median of the rounds' own. Target: HTTPS ≥ 0.7× plain
 * HTTP. Both gateways are checked first to answer 200 with the posted Data (the HTTPS one through a
 * client that verifies the certificate), and wrk's errors are reported, so failures never count as
 * throughput. The cost of new connections (a full handshake per request) is reported beside it, with
 * no target.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../node/node.js';
import { REPO, fmt, pairedRatio, report, slicedRounds } from './lib.js';
import type { WrkResult } from './support/wrk.js';
import { postScript, summarize, wrk, wrkInstalled } from './support/wrk.js';

// sliced rounds (bench/lib.ts, slicedRounds): 3 slices of 1 s a target a round, the time under load of one run of 3 s
const SLICE_SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const SLICES = Number(process.env.BENCH_SLICES ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TARGET = 0.7;

if (!wrkInstalled()) {
  console.log('wrk is not installed (apt-get install wrk): gateway TLS bench skipped');
  process.exit(0);
}

const PATH = '/test/op';
const BODY = '{"id":["42"],"name":["bench"]}';
const keepAlive = postScript(BODY);
// the same POST with `Connection: close`: every request a new TCP connection (and TLS handshake)
const closeScript = join(mkdtempSync(join(tmpdir(), 'hn-bench-wrk-')), 'close.lua');
writeFileSync(closeScript, `${readFileSync(keepAlive, 'utf8')}wrk.headers["Connection"] = "close"\n`);

const certs = mkdtempSync(join(tmpdir(), 'hn-bench-certs-'));
execFileSync('bash', [join(REPO, 'scripts', 'certs.sh'), '--force', certs], { stdio: 'ignore' });
const ca = readFileSync(join(certs, 'ca.pem'), 'utf8');

const gw = (name: string, params: Array<[string, string]>) => ({
  kind: 'gateway' as const,
  layers: [
    {
      source: 'bench',
      values: [
        ['NAME', name],
        ['Port', '0'],
        ['Strict', 'true'],
        ['OUTPUTCHANNEL', 'echo'],
        ['MaxInFlight', '100000'],
        ...params,
      ] as Array<readonly [string, string]>,
    },
  ],
});
const node = await HiveNode.start({
  logStream: new PassThrough(),
  services: [
    { kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'echo']] }] },
    gw('plain', []),
    gw('https', [
      ['TLSCert', `file://${join(certs, 'server.pem')}`],
      ['TLSKey', `file://${join(certs, 'server.key')}`],
    ]),
  ],
});
const port = (name: string): number => node.services.find((s) => s.name === name)!.running.status().port as number;
const urls = { plain: `http://127.0.0.1:${port('plain')}${PATH}`, https: `https://127.0.0.1:${port('https')}${PATH}` };

/** One POST must come back 200 with the posted Data; over HTTPS with the certificate verified against the CA. */
async function check(label: string, url: string): Promise<void> {
  const u = new URL(url);
  const text =
    u.protocol === 'http:'
      ? await (await fetch(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } })).text()
      : await new Promise<string>((resolve, reject) => {
          const req = request(
            {
              host: u.hostname,
              port: u.port,
              path: u.pathname,
              method: 'POST',
              servername: 'localhost',
              ca,
              agent: false,
              headers: { 'content-type': 'application/json' },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => resolve(Buffer.concat(chunks).toString()));
            },
          );
          req.on('error', reject);
          req.end(BODY);
        });
  const data = (JSON.parse(text) as { Data?: unknown }).Data;
  if (JSON.stringify(data) !== BODY) throw new Error(`${label} answered ${text}; expected Data ${BODY}`);
}
await check('the plain gateway', urls.plain);
await check('the HTTPS gateway', urls.https);

for (const url of Object.values(urls)) await wrk(url, { connections: CONNECTIONS, seconds: 1, script: keepAlive }); // warm-up, not counted

/** Sliced rounds of each (label, url, script): medians over the slices, and the median of the rounds' own ratios of the second to the first. */
async function measure(
  targets: [[string, string, string], [string, string, string]],
): Promise<{ first: WrkResult; second: WrkResult; ratio: number }> {
  const sliced = await slicedRounds(
    targets.map(([, url, script]) => ({
      load: (seconds: number) => wrk(url, { connections: CONNECTIONS, seconds, script }),
    })),
    { rounds: ROUNDS, slices: SLICES, sliceSeconds: SLICE_SECONDS },
  );
  const [first, second] = sliced.slices.map((r, k) => {
    const s = summarize(r);
    console.log(
      `${targets[k]![0].padEnd(44)} ${fmt(s.rps).padStart(8)} req/s  p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  errors ${s.errors}  (rounds ${sliced.rps[k]!.map(fmt).join(' / ')})`,
    );
    return s;
  }) as [WrkResult, WrkResult];
  return { first, second, ratio: pairedRatio(sliced.rps[1]!, sliced.rps[0]!) };
}

console.log(
  `wrk -t1, ${CONNECTIONS} connections, ${ROUNDS} rounds (median) of ${SLICES} slices of ${SLICE_SECONDS} s a target, each slice every target in turn (ratios: medians of the rounds' own); the node in this process, wrk a child; load average ${loadavg()[0]!.toFixed(2)} on 2 shared cores at start`,
);
const {
  first: plain,
  second: https,
  ratio,
} = await measure([
  ['gateway strict, plain HTTP, keep-alive', urls.plain, keepAlive],
  ['gateway strict, HTTPS, keep-alive', urls.https, keepAlive],
]);
console.log(
  `target HTTPS/plain HTTP (keep-alive) >= ${TARGET}: ${ratio.toFixed(2)} — ${ratio >= TARGET ? 'met' : 'NOT MET'}`,
);
if (plain.errors + https.errors > 0)
  console.log('WARNING: non-2xx responses or socket errors: the figures include failures');
report({
  figure: `gateway strict → hive → echo over HTTPS, keep-alive, ${CONNECTIONS} connections`,
  hivenode: https.rps,
  unit: 'req/s',
  baseline: 'the same gateway over plain HTTP',
  baselineValue: plain.rps,
  ratio,
  target: `≥ ${TARGET}`,
  met: ratio >= TARGET,
});
report({
  figure: `gateway strict over HTTPS, keep-alive, p99 latency`,
  hivenode: https.p99,
  unit: 'ms',
  lowerIsBetter: true,
  baseline: 'the same gateway over plain HTTP',
  baselineValue: plain.p99,
});

const fresh = await measure([
  ['gateway strict, plain HTTP, a connection each', urls.plain, closeScript],
  ['gateway strict, HTTPS, a handshake each', urls.https, closeScript],
]);
console.log(
  `a new connection per request (a full TLS handshake each): HTTPS/plain HTTP ${fresh.ratio.toFixed(2)} (no target)`,
);
report({
  figure: `gateway strict over HTTPS, a new connection (full handshake) per request, ${CONNECTIONS} connections`,
  hivenode: fresh.second.rps,
  unit: 'req/s',
  baseline: 'the same gateway over plain HTTP, a connection per request',
  baselineValue: fresh.first.rps,
  ratio: fresh.ratio,
});

await node.stop(2000);
rmSync(certs, { recursive: true, force: true });
