/**
 * Embedded-hive call round trips per second (caller → bridge actor → memory transport → echo worker
 * actor → reply) against bare nact dispatch-and-reply to one actor, measured in the same run,
 * interleaved, median of several rounds. Prints both rates and the ratio (target ≥ 0.6, ≥ 150,000/s).
 * When nats-server is installed: NATS-hive call round trips through the bridge against bare nats.js
 * request/respond on the same server, 1 and 64 in flight (target ≥ 0.85).
 */
import nact from 'nact';
import { PassThrough } from 'node:stream';
import { makeMessage, mapOf } from '../protocol/message.js';
import { HiveNode } from '../node/node.js';
import { drive, median, report } from './lib.js';
import { connect } from '@nats-io/transport-node';
import { natsServer, natsServerAvailable } from '../spec/adapters/nats/server.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 200_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

type Ping = { n: number; reply: (n: number) => void };

async function main(): Promise<void> {
  // bare nact: one actor that answers through the reply function in the message
  const system = nact.start();
  const bare = nact.spawn(
    system,
    (state: number, msg: Ping) => {
      msg.reply(msg.n);
      return state;
    },
    'bare',
  );
  let n = 0;
  const bareCall = (): Promise<number> => new Promise((resolve) => nact.dispatch(bare, { n: n++, reply: resolve }));

  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [{ kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'echo']] }] }],
  });
  const message = makeMessage({ Class: 'bench', Operation: 'ping', Data: mapOf({ n: ['1'] }) });
  const hiveCall = async (): Promise<void> => {
    const r = await node.hive.call('echo', message, 30_000);
    if (r.Code !== 200) throw new Error(`call failed: ${r.Code} ${r.Message}`);
  };

  await drive(20_000, IN_FLIGHT, bareCall);
  await drive(20_000, IN_FLIGHT, hiveCall);
  const bareRates: number[] = [];
  const hiveRates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    bareRates.push(await drive(CALLS, IN_FLIGHT, bareCall));
    hiveRates.push(await drive(CALLS, IN_FLIGHT, hiveCall));
  }
  const b = median(bareRates);
  const h = median(hiveRates);
  console.log(`calls per round ${CALLS}, in flight ${IN_FLIGHT}, rounds ${ROUNDS} (median)`);
  console.log(`bare nact dispatch-and-reply : ${Math.round(b).toLocaleString('en')} calls/s`);
  console.log(`embedded hive call via bridge: ${Math.round(h).toLocaleString('en')} calls/s`);
  console.log(
    `ratio hive/bare              : ${(h / b).toFixed(2)} (target >= 0.60; absolute target >= 150,000 calls/s)`,
  );
  const figure = `embedded hive call via bridge, ${IN_FLIGHT} in flight`;
  report({
    figure,
    hivenode: h,
    unit: 'calls/s',
    baseline: 'bare nact dispatch-and-reply',
    baselineValue: b,
    target: '≥ 0.6',
    met: h / b >= 0.6,
  });
  report({
    figure: `${figure} (absolute)`,
    hivenode: h,
    unit: 'calls/s',
    target: '≥ 150,000 calls/s',
    met: h >= 150_000,
  });
  await node.stop(1000);
  nact.stop(system);
  if (natsServerAvailable()) await natsBench();
  else console.log('nats-server is not installed: NATS figures skipped');
}

async function natsBench(): Promise<void> {
  const server = await natsServer();
  const hive = [
    ['SERVERHOST', server.url],
    ['SERVERAUTH', server.token],
  ] as const;
  const listener = await HiveNode.start({
    logStream: new PassThrough(),
    services: [{ kind: 'echo', layers: [{ source: 'bench', values: [...hive, ['NAME', 'echo']] }] }],
  });
  const caller = await HiveNode.start({
    logStream: new PassThrough(),
    services: [{ kind: 'echo', layers: [{ source: 'bench', values: [...hive, ['NAME', 'caller']] }] }],
  });
  const nc = await connect({ servers: server.url, token: server.token });
  // stricter baseline: nats.js tuned not to build an Error per request for its async stack traces
  const tuned = await connect({ servers: server.url, token: server.token, noAsyncTraces: true });
  const responder = await connect({ servers: server.url, token: server.token });
  responder.subscribe('bare.echo', { queue: 'bare', callback: (_e, m) => void m.respond(m.data) });
  await responder.flush();
  const message = makeMessage({ Class: 'bench', Operation: 'ping', Data: mapOf({ n: ['1'] }) });
  const payload = new TextEncoder().encode(JSON.stringify(message));
  const bare = async (): Promise<void> => {
    await nc.request('bare.echo', payload, { timeout: 30_000 });
  };
  const bareTuned = async (): Promise<void> => {
    await tuned.request('bare.echo', payload, { timeout: 30_000 });
  };
  const viaHive = async (): Promise<void> => {
    const r = await caller.hive.call('echo', message, 30_000);
    if (r.Code !== 200) throw new Error(`${r.Code} ${r.Message}`);
  };
  const calls = Number(process.env.BENCH_NATS_CALLS ?? 20_000);
  for (const inFlight of [1, 64]) {
    const n = inFlight === 1 ? calls / 4 : calls;
    await drive(2_000, inFlight, bare);
    await drive(2_000, inFlight, bareTuned);
    await drive(2_000, inFlight, viaHive);
    const b: number[] = [];
    const t: number[] = [];
    const h: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      b.push(await drive(n, inFlight, bare));
      t.push(await drive(n, inFlight, bareTuned));
      h.push(await drive(n, inFlight, viaHive));
    }
    const ratio = median(h) / median(b);
    console.log(
      `NATS, ${String(inFlight).padStart(2)} in flight: bare nats.js ${Math.round(median(b)).toLocaleString('en')} req/s (noAsyncTraces ${Math.round(median(t)).toLocaleString('en')}), hive via bridge ${Math.round(median(h)).toLocaleString('en')} calls/s, ratio ${ratio.toFixed(2)} (target >= 0.85; ${(median(h) / median(t)).toFixed(2)} of the tuned)`,
    );
    report({
      figure: `NATS hive call via bridge, ${inFlight} in flight`,
      hivenode: median(h),
      unit: 'calls/s',
      baseline: 'bare nats.js request/respond',
      baselineValue: median(b),
      target: '≥ 0.85',
      met: ratio >= 0.85,
    });
    report({
      figure: `NATS hive call via bridge, ${inFlight} in flight`,
      hivenode: median(h),
      unit: 'calls/s',
      baseline: 'bare nats.js request/respond, noAsyncTraces',
      baselineValue: median(t),
    });
  }
  await nc.close();
  await tuned.close();
  await responder.close();
  await caller.stop(1000);
  await listener.stop(1000);
  await server.stop();
}

await main();
