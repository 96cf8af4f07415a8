/**
 * Bearer-authenticated requests against Basic ones, in the same run: two strict gateways (→ embedded
 * hive → echo) in one node, one with a users file (Basic; verified credentials cached, as every client
 * after its first request sees them), one with a file:// JWKS (Bearer: each token's RS256 signature and
 * claims verified by jose on every request), loaded by wrk with keep-alive connections in sliced
 * rounds (bench/lib.ts, slicedRounds). Target: Bearer ≥ 0.9× Basic, the median of the rounds' own
 * ratios. Both are checked first to answer 200 with the posted Data, and wrk's errors are reported,
 * so failures never count as throughput.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { passwdLine } from '../actors/auth/authenticate.js';
import { HiveNode } from '../node/node.js';
import { tempDir } from '../spec/temp.js';
import { fmt, pairedRatio, report, slicedRounds } from './lib.js';
import type { WrkResult } from './support/wrk.js';
import { postScript, summarize, wrk, wrkInstalled } from './support/wrk.js';

// sliced rounds (bench/lib.ts, slicedRounds): 3 slices of 1 s a target a round, the time under load of one run of 3 s
const SLICE_SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const SLICES = Number(process.env.BENCH_SLICES ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TARGET = 0.9;

if (!wrkInstalled()) {
  console.log('wrk is not installed (apt-get install wrk): gateway auth bench skipped');
  process.exit(0);
}

const PATH = '/test/op';
const BODY = '{"id":["42"],"name":["bench"]}';
const dir = tempDir('hn-bench-auth-');
const users = join(dir, 'users');
writeFileSync(users, `${await passwdLine('bench', 'bench-password', 10)}\n`);
const { privateKey, publicKey } = await generateKeyPair('RS256');
writeFileSync(
  join(dir, 'jwks.json'),
  JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256' }] }),
);
const token = await new SignJWT({})
  .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
  .setSubject('bench')
  .setAudience('bench-api')
  .setExpirationTime('1h')
  .sign(privateKey);
const authorization: Record<string, string> = {
  basic: `Basic ${Buffer.from('bench:bench-password').toString('base64')}`,
  bearer: `Bearer ${token}`,
};
const scripts: Record<string, string> = {};
for (const k of Object.keys(authorization)) {
  const script = postScript(BODY);
  writeFileSync(script, `${readFileSync(script, 'utf8')}wrk.headers["Authorization"] = "${authorization[k]!}"\n`);
  scripts[k] = script;
}

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
    gw('basic', [['Users', users]]),
    gw('bearer', [
      ['JWKS', `file://${join(dir, 'jwks.json')}`],
      ['JWTAudience', 'bench-api'],
    ]),
  ],
});
const url = (name: string): string =>
  `http://127.0.0.1:${node.services.find((s) => s.name === name)!.running.status().port as number}${PATH}`;
const targets = ['basic', 'bearer'];
for (const k of targets) {
  const res = await fetch(url(k), {
    method: 'POST',
    body: BODY,
    headers: { 'content-type': 'application/json', authorization: authorization[k]! },
  });
  const text = await res.text();
  if (res.status !== 200 || JSON.stringify((JSON.parse(text) as { Data?: unknown }).Data) !== BODY)
    throw new Error(`${k} answered ${res.status} ${text}`);
  await wrk(url(k), { connections: CONNECTIONS, seconds: 1, script: scripts[k]! }); // warm-up, not counted
}

const load = loadavg()[0]!;
const sliced = await slicedRounds(
  targets.map((k) => ({
    load: (seconds: number) => wrk(url(k), { connections: CONNECTIONS, seconds, script: scripts[k]! }),
  })),
  { rounds: ROUNDS, slices: SLICES, sliceSeconds: SLICE_SECONDS },
);
const s = Object.fromEntries(targets.map((k, i) => [k, summarize(sliced.slices[i]!)])) as Record<string, WrkResult>;
console.log(
  `wrk -t1, ${CONNECTIONS} connections, ${ROUNDS} rounds (median) of ${SLICES} slices of ${SLICE_SECONDS} s a target, each slice every target in turn (the ratio: median of the rounds' own); load average ${load.toFixed(2)} on 2 shared cores at start`,
);
for (const [i, k] of targets.entries())
  console.log(
    `${k.padEnd(7)} ${fmt(s[k]!.rps)} req/s  p50 ${s[k]!.p50.toFixed(2)} ms  p99 ${s[k]!.p99.toFixed(2)} ms  errors ${s[k]!.errors}  (rounds ${sliced.rps[i]!.map(fmt).join(' / ')})`,
  );
const ratio = pairedRatio(sliced.rps[1]!, sliced.rps[0]!);
console.log(`target Bearer/Basic >= ${TARGET}: ${ratio.toFixed(2)} — ${ratio >= TARGET ? 'met' : 'NOT MET'}`);
report({
  figure: `gateway strict, Bearer (RS256 JWT, file:// JWKS), ${CONNECTIONS} connections`,
  hivenode: s.bearer!.rps,
  unit: 'req/s',
  baseline: 'the same gateway with Basic (cached credentials)',
  baselineValue: s.basic!.rps,
  ratio,
  target: `≥ ${TARGET}`,
  met: ratio >= TARGET,
});
await node.stop(2000);
