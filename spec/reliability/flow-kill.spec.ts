/**
 * Flow runs under SIGKILL (docs/ARCHITECTURE.md, The life of a run): runs of a 3-step flow are
 * started through the gateway (Platform-Procedure: Execution, acknowledged once the run is stored),
 * then the node is SIGKILLed at a random point while the runs step, again and again on the same store.
 * Every acknowledged run must end succeeded with each of its steps' effects present at least once
 * (by its idempotency key `<run key>:<step>`), in step order: none skipped, none lost.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { Pool } from 'undici';
import { prng } from '../prng.js';
import { tempDir } from '../temp.js';
import { recorded } from '../integration/queue/helpers.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { sleep } from '../support/wait.js';

const RUNS = byScale(300, 2_000);
const KILLS = byScale(4, 20);
const SEED = 0xf10f;
const STEPS = ['a', 'b', 'c'] as const;

/** Starts `runs` runs through the gateway from 16 connections; the key of each acknowledged (200) one. */
async function startRuns(port: number, runs: number): Promise<string[]> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 16 });
  const keys: string[] = [];
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < runs) {
          const n = next++;
          const res = await pool.request({
            path: '/order/new',
            method: 'POST',
            headers: { 'platform-procedure': 'Execution' },
            body: JSON.stringify({ n: [String(n)] }),
          });
          const answer = (await res.body.json()) as { Code: number; Data: { key?: string[] } };
          if (answer.Code === 200 && answer.Data.key?.[0]) keys.push(answer.Data.key[0]);
        }
      }),
    );
  } finally {
    await pool.close();
  }
  return keys;
}

/** The flow's status through the gateway (the command control from a header). */
async function status(port: number): Promise<Record<string, string[]>> {
  const res = await fetch(`http://127.0.0.1:${port}/flow/status`, {
    method: 'POST',
    headers: { command: 'status' },
    body: '{}',
  });
  return ((await res.json()) as { Data: Record<string, string[]> }).Data;
}

describe('reliability: flow runs under SIGKILL', function () {
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill();
  });

  reliabilityTest(
    `${KILLS} SIGKILLs during ${RUNS} runs of a 3-step flow: every acknowledged run succeeds with every step's effect, none skipped, none lost`,
    {
      suite: 'crash loops',
      load: `${RUNS} runs of call a → call b → call c (recording echoes, 10 ms each) started through the gateway, 8 at a time (MaxRuns)`,
      faults: `${KILLS} × SIGKILL of the node at a random point 150–400 ms into the runs, restart on the same store`,
    },
    byScale(240_000, 1_500_000),
    async (figures) => {
      const rnd = prng(SEED);
      const dir = tempDir('hn-flow-kill-');
      const definition = JSON.stringify({
        steps: STEPS.map((s) => ({ name: s, call: s, data: { n: '{{index .Input.Data.n 0}}' } })),
      });
      const file = writeNodeFile(dir, 'node', [
        ...STEPS.map((s) => `{service: echo, NAME: ${s}, Delay: 10ms, RecordFile: "${join(dir, `${s}.jsonl`)}"}`),
        `{service: flow, NAME: flow, PersistPath: "${join(dir, 'store')}", MaxRuns: 8, Definition: '${definition}'}`,
        '{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: flow, ControlAllowList: command}',
      ]);
      node = await startNodeProcess(file);
      const acknowledged = await startRuns(node.port, RUNS);
      figures['runs acknowledged'] = acknowledged.length;
      expect(acknowledged.length).to.equal(RUNS);

      const done = (): Set<string> =>
        new Set(recorded(join(dir, 'c.jsonl')).map((r) => r.message.Control['idempotency-key']![0]!));
      let killedMidway = 0;
      for (let k = 0; k < KILLS; k++) {
        await sleep(150 + Math.floor(rnd() * 250));
        const before = done().size;
        await node.kill('SIGKILL');
        if (before < RUNS) killedMidway++;
        node = await startNodeProcess(file);
      }
      figures['kills that hit runs midway'] = killedMidway;
      expect(killedMidway, 'kills that hit the node while runs were stepping').to.be.greaterThan(0);

      const began = Date.now();
      const deadline = began + byScale(120_000, 600_000);
      let s = await status(node.port);
      while ((s.queuesize?.[0] !== '0' || done().size < RUNS) && Date.now() < deadline) {
        await sleep(200);
        s = await status(node.port);
      }
      figures['drain after the last restart (s)'] = Math.round((Date.now() - began) / 100) / 10;
      await node.kill('SIGTERM');
      node = undefined;

      expect(s.failed).to.deep.equal(['0']);
      expect(Number(s.succeeded![0])).to.be.at.least(RUNS);
      let repeats = 0;
      for (const step of STEPS) {
        const keys = recorded(join(dir, `${step}.jsonl`)).map((r) => r.message.Control['idempotency-key']![0]!);
        const unique = new Set(keys);
        repeats += keys.length - unique.size;
        const missing = acknowledged.filter((run) => !unique.has(`${run}:${step}`));
        figures[`missing at step ${step}`] = missing.length;
        expect(missing, `runs without an effect of step ${step}`).to.deep.equal([]);
      }
      figures['repeated step effects (at least once)'] = repeats;
      // in step order: a run's first effect of a step comes after the first of the step before it
      const first = (step: string): Map<string, number> => {
        const m = new Map<string, number>();
        for (const r of recorded(join(dir, `${step}.jsonl`))) {
          const key = r.message.Control['idempotency-key']![0]!;
          if (!m.has(key)) m.set(key, Date.parse(r.time));
        }
        return m;
      };
      const [fa, fb, fc] = [first('a'), first('b'), first('c')];
      const outOfOrder = acknowledged.filter(
        (run) => fa.get(`${run}:a`)! > fb.get(`${run}:b`)! || fb.get(`${run}:b`)! > fc.get(`${run}:c`)!,
      );
      expect(outOfOrder).to.deep.equal([]);
    },
  );
});
