/**
 * Flow throughput (README, Flows): runs per second of a 3-step flow (call, call, emit, on echo
 * services; every step's Result written and fsynced before the next step starts) against (a) the same
 * three messages sent in sequence by a client of the hive (no durability: the baseline of what the
 * steps cost on the hive alone; target ≥ 0.5) and (b) BullMQ's FlowProducer, a parent with two
 * children, on redis with appendfsync always (the peer; target ≥ 2), all from CONCURRENCY callers
 * waiting for their run's end, interleaved rounds, paired ratios. Then the memory of RUNS_WAITING
 * runs held in a durable wait: RSS above the same node with an empty store (target ≤ 200 MiB).
 *
 * A run writes its state four times, each fsynced before it goes on (its start, after each of the
 * first two steps, its end), so one caller's run waits for four commits in a row: with few callers
 * the flow's rate is callers / (4 × a commit's latency) whatever its CPU costs, and group commit
 * (one fsync for every write waiting) only pays off with many runs in flight. So the comparison with
 * the client is made at each of CALLERS (comma-separated; the first one is also the BullMQ
 * comparison's), and each side's CPU per run (the whole process: the store's threads included) is
 * printed beside its rate: on a shared machine that is the steadier figure. A client round lasts at
 * least MIN_ROUND_MS (its RUNS alone take a few tens of milliseconds).
 * bench-timeout: 600
 * bench-timeout: 600
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { makeMessage, mapOf } from '../protocol/message.js';
import { HiveNode } from '../node/node.js';
import { drive, fmt, interleavedSamples, median, pairedRatio, report, rssMiB } from './lib.js';
import { bullFlowRound } from './support/bull-flow-round.js';
import { loadPeers, peerVersion } from './support/peers.js';
import type { Redis } from './support/redis.js';
import { redisInstalled, startRedis } from './support/redis.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5_000);
const CALLERS = (process.env.BENCH_CONCURRENCY ?? '64,1000').split(',').map(Number);
const CONCURRENCY = CALLERS[0]!;
const MIN_ROUND_MS = Number(process.env.BENCH_MIN_ROUND_MS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RUNS_WAITING = Number(process.env.BENCH_RUNS_WAITING ?? 100_000);

const STEPS = {
  steps: [
    { name: 'one', call: 'a', data: { id: '{{index .Input.Data.id 0}}' } },
    { name: 'two', call: 'b', data: { id: '{{index .Steps.one.Data.id 0}}' } },
    { name: 'three', emit: 'c', data: { id: '{{index .Steps.two.Data.id 0}}' } },
  ],
};
const WAITING = {
  steps: [
    { name: 'hold', wait: '24h' },
    { name: 'after', call: 'a' },
  ],
};

const message = (i: number) =>
  makeMessage({
    Class: 'bench',
    Operation: 'run',
    Data: mapOf({ id: [String(i)], payload: ['some payload of a typical job'] }),
  });

async function startNode(dir: string, definition: unknown, extra: Array<[string, string]> = []): Promise<HiveNode> {
  const echo = (name: string) => ({
    kind: 'echo' as const,
    layers: [{ source: 'bench', values: [['NAME', name]] as Array<[string, string]> }],
  });
  return HiveNode.start({
    logStream: new PassThrough(),
    services: [
      echo('a'),
      echo('b'),
      echo('c'),
      {
        kind: 'flow',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', 'flow'],
              ['PersistPath', dir],
              ['MaxRuns', '1000'],
              ['Definition', JSON.stringify(definition)],
              ...extra,
            ],
          },
        ],
      },
    ],
  });
}

/** One round's rate and the process's CPU time per run (user + system, every thread). */
interface Round {
  rate: number;
  cpuUs: number;
}

/** RUNS runs (again until MIN_ROUND_MS passed) from `callers` closed-loop callers. */
async function measure(callers: number, op: (i: number) => Promise<void>): Promise<Round> {
  let i = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  do await drive(RUNS, callers, () => op(i++));
  while (performance.now() - started < MIN_ROUND_MS);
  const used = process.cpuUsage(cpu);
  return { rate: i / ((performance.now() - started) / 1000), cpuUs: (used.user + used.system) / i };
}

/** Runs per second: calls of the flow, each answered when its run ended. */
async function flowRound(dir: string, callers: number): Promise<Round> {
  const node = await startNode(join(dir, `f${Date.now()}`), STEPS, [['RunRetention', '0']]);
  const round = await measure(callers, async (i) => {
    const r = await node.hive.call('flow', message(i), 30_000);
    if (r.Code !== 200) throw new Error(`run failed: ${r.Code} ${r.Message}`);
  });
  await node.stop(5_000);
  return round;
}

/** The baseline: the same three messages per "run", sent in sequence by a client of the hive. */
async function clientRound(dir: string, callers: number): Promise<Round> {
  const node = await startNode(join(dir, `c${Date.now()}`), STEPS);
  const round = await measure(callers, async (i) => {
    const m = message(i);
    const one = await node.hive.call('a', makeMessage({ Data: mapOf({ id: m.Data.id! }) }), 30_000);
    const two = await node.hive.call('b', makeMessage({ Data: mapOf({ id: one.Data.id! }) }), 30_000);
    if (!(await node.hive.emit('c', makeMessage({ Data: mapOf({ id: two.Data.id! }) }))))
      throw new Error('emit dropped');
  });
  await node.stop(5_000);
  return round;
}

const dir = mkdtempSync(join(tmpdir(), 'hn-bench-flow-'));
const peers = await loadPeers();
let redis: Redis | undefined;
if (peers && redisInstalled()) redis = await startRedis('always');
else
  console.log(
    'BullMQ FlowProducer skipped: needs bench/peers installed and redis-server (apt-get install redis-server)',
  );
try {
  // first, in a process whose heap no throughput round has grown yet: measured after those rounds, the
  // empty store's figure held their garbage and the 100,000 runs came out below it (a negative figure)
  if (RUNS_WAITING > 0) {
    const store = join(dir, 'waiting');
    let node = await startNode(store, WAITING);
    const empty = rssMiB();
    let i = 0;
    await drive(RUNS_WAITING, CONCURRENCY, async () => {
      const r = await node.hive.execute('flow', message(i++), 30_000);
      if (r.Code !== 200) throw new Error(`start failed: ${r.Code} ${r.Message}`);
    });
    const starting = rssMiB() - empty;
    await node.stop(10_000);
    // a fresh start reads them back: what a node holding them costs, without the start-up's garbage
    node = await startNode(store, WAITING);
    const status = await node.hive.call('flow', makeMessage({ Control: mapOf({ command: ['status'] }) }), 60_000);
    if (status.Data.waiting?.[0] !== String(RUNS_WAITING))
      throw new Error(`status counts ${status.Data.waiting?.[0]} runs waiting, not ${RUNS_WAITING}`);
    const held = rssMiB() - empty;
    console.log(
      `${fmt(RUNS_WAITING)} runs waiting: ${held.toFixed(0)} MiB above an empty store after a restart (target <= 200); ${starting.toFixed(0)} MiB in the process that started them`,
    );
    report({
      figure: `RSS of ${fmt(RUNS_WAITING)} flow runs waiting (durable wait)`,
      hivenode: held,
      unit: 'MiB',
      target: '≤ 200 MiB',
      met: held <= 200,
      lowerIsBetter: true,
    });
    await node.stop(10_000);
  }

  for (const callers of CALLERS) {
    const flowRounds: Round[] = [];
    const clientRounds: Round[] = [];
    await interleavedSamples(ROUNDS, [
      async () => (flowRounds.push(await flowRound(dir, callers)), 0),
      async () => (clientRounds.push(await clientRound(dir, callers)), 0),
    ]);
    const flow = flowRounds.map((r) => r.rate);
    const client = clientRounds.map((r) => r.rate);
    const ratio = pairedRatio(flow, client);
    const flowCpu = median(flowRounds.map((r) => r.cpuUs));
    const clientCpu = median(clientRounds.map((r) => r.cpuUs));
    console.log(
      `runs ${RUNS} (a client round: at least ${MIN_ROUND_MS} ms), callers ${callers}, rounds ${ROUNDS} (median), interleaved`,
    );
    console.log(
      `flow call → call → emit, durable        : ${fmt(median(flow))} runs/s, ${flowCpu.toFixed(1)} µs CPU a run  (rounds: ${flow.map(fmt).join(', ')})`,
    );
    console.log(
      `client: the same three, in sequence     : ${fmt(median(client))} runs/s, ${clientCpu.toFixed(1)} µs CPU a run  ratio ${ratio.toFixed(2)} (target >= 0.50; rounds: ${flow.map((f, i) => (f / client[i]!).toFixed(2)).join(', ')}; CPU a run client/flow ${(clientCpu / flowCpu).toFixed(2)})`,
    );
    report({
      figure: `flow of 3 steps (call, call, emit) on echo services, ${callers} callers`,
      hivenode: median(flow),
      unit: 'runs/s',
      baseline: 'the same three calls in sequence by a client of the hive',
      baselineValue: median(client),
      ratio,
      target: '≥ 0.5',
      met: ratio >= 0.5,
    });
    report({
      figure: `CPU time of one flow run of 3 steps (the whole process), ${callers} callers`,
      hivenode: flowCpu,
      unit: 'µs',
      baseline: 'the same three calls in sequence by a client of the hive',
      baselineValue: clientCpu,
      lowerIsBetter: true,
    });
  }
  if (redis) {
    // warm-up: JIT, redis' scripts loaded
    await bullFlowRound(peers!, redis, Math.min(RUNS, 2_000), CONCURRENCY);
    const flow: number[] = [];
    const bull: number[] = [];
    // the flow's rounds at the first CALLERS, each paired with a BullMQ round run right after it
    for (let r = 0; r < ROUNDS; r++) {
      flow.push((await flowRound(dir, CONCURRENCY)).rate);
      bull.push(await bullFlowRound(peers!, redis, RUNS, CONCURRENCY));
    }
    const peerRatio = pairedRatio(flow, bull);
    const name = `BullMQ ${peerVersion('bullmq')} FlowProducer (a parent, two children) on ${redis.name}`;
    console.log(
      `${name}, ${CONCURRENCY} callers: ${fmt(median(bull))} flows/s  flow ${fmt(median(flow))} runs/s  ratio ${peerRatio.toFixed(2)} (target >= 2; rounds: ${flow.map((f, i) => (f / bull[i]!).toFixed(2)).join(', ')})`,
    );
    report({
      figure: `flow of 3 steps against a BullMQ flow of 3 jobs, ${CONCURRENCY} callers waiting for the end`,
      hivenode: median(flow),
      unit: 'runs/s',
      baseline: name,
      baselineValue: median(bull),
      peer: true,
      ratio: peerRatio,
      target: '≥ 2',
      met: peerRatio >= 2,
    });
  }
} finally {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
}
