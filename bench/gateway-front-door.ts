/**
 * What the gateway's front-door checks cost, in the same run: strict gateways (→ embedded hive → echo)
 * in one node, loaded by wrk with keep-alive connections, interleaved rounds, medians.
 * - Schema validation: a gateway whose route has a JSON Schema (Schemas; ajv, five properties with
 *   patterns, a format and bounds) against the same gateway without one, in requests per CPU second of
 *   the node (the machine is shared: its CPU time per request holds where req/s follows the neighbours).
 *   Target ≥ 0.9×.
 * - A rate-limited route at its limit: the load far over the limit (most requests answered 429 before
 *   the hive), CPU time of the node per request against an unlimited route's (every request through
 *   the hive): refusing must cost no more than serving (ratio ≤ 1.1: the HTTP work is the same, the
 *   hive hop to an embedded echo is cheap, so the two measure about equal). And a limit never reached (every
 *   request takes a token) against no limit: requests per CPU second ≥ 0.9×.
 * Every target is checked first to answer as expected (200 with the posted Data, or 429), and wrk's
 * errors are reported where every request should succeed, so failures never count as throughput.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../node/node.js';
import { tempDir } from '../spec/temp.js';
import { fmt, median, report } from './lib.js';
import type { WrkResult } from './support/wrk.js';
import { postScript, summarize, wrk, wrkInstalled } from './support/wrk.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TARGET = 0.9;
const LIMIT = 200;
/** A 429 skips the hive but is HTTP all the same: it should cost no more than serving, within this run's noise (measured 1.01). */
const AT_LIMIT_TARGET = 1.1;

if (!wrkInstalled()) {
  console.log('wrk is not installed (apt-get install wrk): gateway front-door bench skipped');
  process.exit(0);
}

const PATH = '/orders/new';
const BODY =
  '{"order":["12","7"],"customer":["ann@example.com"],"priority":["high"],"note":["leave at the door"],"ref":["A-1234"]}';
const dir = tempDir('hn-bench-front-');
const schema = join(dir, 'order.json');
const list = (items: Record<string, unknown>, max = 10) => ({
  type: 'array',
  minItems: 1,
  maxItems: max,
  items: { type: 'string', ...items },
});
writeFileSync(
  schema,
  JSON.stringify({
    type: 'object',
    properties: {
      order: list({ pattern: '^[0-9]+$' }),
      customer: list({ format: 'email' }, 1),
      priority: list({ enum: ['low', 'high'] }, 1),
      note: list({ maxLength: 200 }, 1),
      ref: list({ pattern: '^[A-Z]-[0-9]{4}$' }, 1),
    },
    required: ['order', 'customer'],
    additionalProperties: false,
  }),
);

const gw = (name: string, params: Array<[string, string]> = []) => ({
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
    gw('plain'),
    gw('schema', [['Schemas', `orders/new=file://${schema}`]]),
    gw('atlimit', [['RateLimits', `orders=${LIMIT}/s`]]),
    gw('underlimit', [['RateLimits', 'orders=100000000/s']]),
  ],
});
const url = (name: string): string =>
  `http://127.0.0.1:${node.services.find((s) => s.name === name)!.running.status().port as number}${PATH}`;
const script = postScript(BODY);
const targets = ['plain', 'schema', 'underlimit', 'atlimit'];
for (const k of targets) {
  const res = await fetch(url(k), { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } });
  const text = await res.text();
  if (res.status !== 200 || JSON.stringify((JSON.parse(text) as { Data?: unknown }).Data) !== BODY)
    throw new Error(`${k} answered ${res.status} ${text}`);
}
const refusedBody = await fetch(url('schema'), {
  method: 'POST',
  body: '{"order":["x"]}',
  headers: { 'content-type': 'application/json' },
});
if (refusedBody.status !== 400)
  throw new Error(`the schema gateway answered ${refusedBody.status} to a body its schema refuses`);
await refusedBody.text();
for (const k of targets) await wrk(url(k), { connections: CONNECTIONS, seconds: 1, script }); // warm-up, not counted

const load = loadavg()[0]!;
const rounds: Record<string, WrkResult[]> = Object.fromEntries(targets.map((k) => [k, []]));
/** CPU microseconds of this process (the node) per request answered, per round. */
const cpu: Record<string, number[]> = Object.fromEntries(targets.map((k) => [k, []]));
for (let i = 0; i < ROUNDS; i++) {
  for (const k of targets) {
    const before = process.cpuUsage();
    const r = await wrk(url(k), { connections: CONNECTIONS, seconds: SECONDS, script });
    const spent = process.cpuUsage(before);
    rounds[k]!.push(r);
    cpu[k]!.push((spent.user + spent.system) / r.requests);
  }
}
const s = Object.fromEntries(targets.map((k) => [k, summarize(rounds[k]!)])) as Record<string, WrkResult>;
// at its limit the route must have refused most of the load (429s are wrk's non-2xx), or the figure would be of another thing
if (s.atlimit!.errors < s.atlimit!.requests / 2)
  throw new Error(
    `the limited route refused only ${s.atlimit!.errors} of ${s.atlimit!.requests} requests: not at its limit`,
  );
const us = Object.fromEntries(targets.map((k) => [k, median(cpu[k]!)])) as Record<string, number>;
console.log(
  `wrk -t1, ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} rounds (median), interleaved; load average ${load.toFixed(2)} on 2 shared cores at start`,
);
for (const k of targets)
  console.log(
    `${k.padEnd(10)} ${fmt(s[k]!.rps)} req/s  p50 ${s[k]!.p50.toFixed(2)} ms  p99 ${s[k]!.p99.toFixed(2)} ms  CPU ${us[k]!.toFixed(1)} µs/request  non-2xx ${s[k]!.errors}`,
  );

// on a shared machine throughput follows the other processes; the node's CPU time per request does
// not: requests per CPU second are the figure, the req/s beside them for reading
const perCpuS = (k: string): number => 1e6 / us[k]!;
const schemaRatio = perCpuS('schema') / perCpuS('plain');
console.log(
  `target schema on/off >= ${TARGET} (requests per CPU second): ${schemaRatio.toFixed(2)} — ${schemaRatio >= TARGET ? 'met' : 'NOT MET'}`,
);
report({
  figure: `gateway strict, request validation (Schemas, ajv, 5 fields), ${CONNECTIONS} connections`,
  hivenode: perCpuS('schema'),
  unit: 'req per CPU s',
  baseline: 'the same gateway without a schema',
  baselineValue: perCpuS('plain'),
  target: `≥ ${TARGET}`,
  met: schemaRatio >= TARGET && s.schema!.errors === 0,
});

const underRatio = perCpuS('underlimit') / perCpuS('plain');
console.log(
  `target rate limit never reached/none >= ${TARGET} (requests per CPU second): ${underRatio.toFixed(2)} — ${underRatio >= TARGET ? 'met' : 'NOT MET'}`,
);
report({
  figure: `gateway strict, a rate-limited route under its limit (a token per request), ${CONNECTIONS} connections`,
  hivenode: perCpuS('underlimit'),
  unit: 'req per CPU s',
  baseline: 'the same gateway without RateLimits',
  baselineValue: perCpuS('plain'),
  target: `≥ ${TARGET}`,
  met: underRatio >= TARGET && s.underlimit!.errors === 0,
});

// at its limit most answers are 429s: CPU per request, lower is better, so the ratio is limited / unlimited
const cpuRatio = us.atlimit! / us.plain!;
const admitted = s.atlimit!.requests - s.atlimit!.errors;
console.log(
  `rate-limited route at its limit (${LIMIT}/s): ${fmt(s.atlimit!.requests)} requests, ${fmt(admitted)} admitted; CPU ${us.atlimit!.toFixed(1)} µs/request vs ${us.plain!.toFixed(1)} unlimited — ratio ${cpuRatio.toFixed(2)}, target <= ${AT_LIMIT_TARGET}: ${cpuRatio <= AT_LIMIT_TARGET ? 'met' : 'NOT MET'}`,
);
report({
  figure: `gateway strict, a route at its rate limit (${LIMIT}/s, load far over it: mostly 429), CPU per request`,
  hivenode: us.atlimit!,
  unit: 'µs CPU/request',
  baseline: 'an unlimited route (every request through the hive)',
  baselineValue: us.plain!,
  ratio: cpuRatio,
  lowerIsBetter: true,
  target: `≤ ${AT_LIMIT_TARGET}`,
  met: cpuRatio <= AT_LIMIT_TARGET,
});
await node.stop(2000);
