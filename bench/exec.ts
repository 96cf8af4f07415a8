/**
 * Exec throughput: `/bin/true` run through the exec service (hive call → template → spawn → Result)
 * against raw child_process.spawn of the same command in the same run, at concurrency 1 and 8,
 * interleaved, median of rounds. Target: >= 0.85 of raw.
 */
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { makeMessage } from '../protocol/message.js';
import { HiveNode } from '../node/node.js';
import { drive, fmt, interleaved, report } from './lib.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const raw = (): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn('/bin/true', [], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end();
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });

const node = await HiveNode.start({
  logStream: new PassThrough(),
  services: [
    {
      kind: 'exec',
      layers: [
        {
          source: 'bench',
          values: [
            ['NAME', 'cmd'],
            ['Template', '{{ setCmd "/bin/true" }}'],
            ['MaxConcurrent', '16'],
          ],
        },
      ],
    },
  ],
});
const message = makeMessage();
const service = async (): Promise<void> => {
  const r = await node.hive.call('cmd', message, 30_000);
  if (r.Code !== 200) throw new Error(`${r.Code} ${r.Message}`);
};
console.log(`runs per round ${RUNS}, rounds ${ROUNDS} (median), interleaved`);
for (const concurrency of [1, 8]) {
  await drive(100, concurrency, raw);
  await drive(100, concurrency, service);
  const m = await interleaved(
    ROUNDS,
    () => drive(RUNS, concurrency, raw),
    () => drive(RUNS, concurrency, service),
  );
  console.log(
    `concurrency ${concurrency}: raw spawn ${fmt(m.a)} runs/s, exec service ${fmt(m.b)} runs/s, ratio ${(m.b / m.a).toFixed(2)} (target >= 0.85)`,
  );
  report({
    figure: `exec service runs of /bin/true, concurrency ${concurrency}`,
    hivenode: m.b,
    unit: 'runs/s',
    baseline: 'raw child_process.spawn',
    baselineValue: m.a,
    target: '≥ 0.85',
    met: m.b / m.a >= 0.85,
  });
}
await node.stop(2000);
