/**
 * HTTP client throughput: messages per second through the service (hive call → before interceptor →
 * outbound request → Result) against a raw undici Pool making the same requests to the same local
 * server, at concurrency 32, interleaved, median of rounds. The interceptor runs in-process
 * (module://), as the HTTP round trip to an interceptor service would otherwise be measured too;
 * the figure with an HTTP interceptor service is printed beside it (target >= 0.5 of raw).
 * When bench/peers is installed, got (a popular HTTP client library, keep-alive agent of 64 sockets)
 * makes the same requests as a peer.
 */
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Pool } from 'undici';
import { serveInterceptor } from '../actors/interceptor/server.js';
import { makeMessage, mapOf } from '../protocol/message.js';
import { HiveNode } from '../node/node.js';
import { REPO, drive, median, report } from './lib.js';
import { loadPeers, peerVersion } from './support/peers.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const CONCURRENCY = 32;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const passBefore = `${REPO}/examples/interceptors/data-body-before.mjs`;

const run = (op: () => Promise<void>): Promise<number> => drive(REQUESTS, CONCURRENCY, op);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(Buffer.concat(chunks).length ? Buffer.concat(chunks) : '{}'),
  );
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
const pool = new Pool(new URL(url).origin, { connections: 64 });
const body = JSON.stringify({ id: ['1'], name: ['bench'] });
const raw = async (): Promise<void> => {
  const res = await pool.request({
    path: '/echo',
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
  });
  await res.body.text();
};
const peers = await loadPeers();
const gotAgent = new Agent({ keepAlive: true, maxSockets: 64 });
const viaGot = async (): Promise<void> => {
  const res = await peers!.got.post(url, {
    body,
    headers: { 'content-type': 'application/json' },
    agent: { http: gotAgent },
    retry: { limit: 0 },
  });
  if (res.statusCode !== 200) throw new Error(`got: ${res.statusCode}`);
};
const kit = await serveInterceptor((await import(passBefore)).default, 0);
const start = (before: string) =>
  HiveNode.start({
    logStream: new PassThrough(),
    services: [
      {
        kind: 'httpclient',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', 'web'],
              ['URL', url],
              ['Method', 'POST'],
              ['InterceptBefore', before],
            ],
          },
        ],
      },
    ],
  });
const inProcess = await start(`module://${passBefore}`);
const overHttp = await start(`http://127.0.0.1:${kit.port}/`);
const message = makeMessage({ Data: mapOf({ id: ['1'], name: ['bench'] }) });
const via = (node: HiveNode) => async (): Promise<void> => {
  const r = await node.hive.call('web', message, 30_000);
  if (r.Code !== 200) throw new Error(`${r.Code} ${r.Message}`);
};

await run(raw);
await run(via(inProcess));
if (peers) await run(viaGot);
const rates = { raw: [] as number[], got: [] as number[], module: [] as number[], http: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  rates.raw.push(await run(raw));
  if (peers) rates.got.push(await run(viaGot));
  rates.module.push(await run(via(inProcess)));
  rates.http.push(await run(via(overHttp)));
}
const r = median(rates.raw);
console.log(`requests per round ${REQUESTS}, concurrency ${CONCURRENCY}, rounds ${ROUNDS} (median)`);
console.log(`raw undici Pool                         : ${Math.round(r).toLocaleString('en')} req/s`);
console.log(
  `httpclient, in-process interceptor      : ${Math.round(median(rates.module)).toLocaleString('en')} req/s  ratio ${(median(rates.module) / r).toFixed(2)} (target >= 0.60)`,
);
console.log(
  `httpclient, interceptor service (HTTP)  : ${Math.round(median(rates.http)).toLocaleString('en')} req/s  ratio ${(median(rates.http) / r).toFixed(2)} (target >= 0.50)`,
);
const inProcessRate = median(rates.module);
const figure = `httpclient POST via hive, in-process interceptor, concurrency ${CONCURRENCY}`;
report({
  figure,
  hivenode: inProcessRate,
  unit: 'req/s',
  baseline: 'raw undici Pool',
  baselineValue: r,
  target: '≥ 0.6',
  met: inProcessRate / r >= 0.6,
});
report({
  figure: `httpclient POST via hive, interceptor service (HTTP), concurrency ${CONCURRENCY}`,
  hivenode: median(rates.http),
  unit: 'req/s',
  baseline: 'raw undici Pool',
  baselineValue: r,
  target: '≥ 0.5',
  met: median(rates.http) / r >= 0.5,
});
if (peers) {
  const g = median(rates.got);
  console.log(
    `raw got ${peerVersion('got')} (keep-alive agent)     : ${Math.round(g).toLocaleString('en')} req/s  (httpclient in-process / got ${(inProcessRate / g).toFixed(2)})`,
  );
  report({
    figure,
    hivenode: inProcessRate,
    unit: 'req/s',
    baseline: `raw got ${peerVersion('got')}, keep-alive agent`,
    baselineValue: g,
    peer: true,
  });
}
gotAgent.destroy();
await inProcess.stop(2000);
await overHttp.stop(2000);
await kit.close();
await pool.close();
server.close();
