/**
 * Auth under a guessing flood (README, Authentication): a valid user's p50 latency through a gateway
 * with Users while 20 connections send wrong Basic passwords, against the same user's p50 with nobody
 * guessing, in the same run (target: within 5×). Before the sign-in throttle and the verification
 * workers every guess was a bcrypt comparison on the event loop: 2 ms quiet became 4,196 ms.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Agent, request } from 'undici';
import { passwdLine } from '../actors/auth/authenticate.js';
import { HiveNode } from '../node/node.js';
import { median, report } from './lib.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const GUESSERS = Number(process.env.BENCH_GUESSERS ?? 20);

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const dir = mkdtempSync(join(tmpdir(), 'hn-bench-auth-'));
try {
  const users = join(dir, 'users');
  writeFileSync(users, `${await passwdLine('alice', 'right-password')}\n`);
  const node = await HiveNode.start({
    logStream: new PassThrough(),
    services: [
      { kind: 'echo', layers: [{ source: 'bench', values: [['NAME', 'echo']] }] },
      {
        kind: 'gateway',
        layers: [
          {
            source: 'bench',
            values: [
              ['NAME', 'gw'],
              ['Port', '0'],
              ['Strict', 'true'],
              ['OUTPUTCHANNEL', 'echo'],
              ['Users', users],
            ],
          },
        ],
      },
    ],
  });
  const base = `http://127.0.0.1:${node.services.find((s) => s.name === 'gw')!.running.status().port as number}`;
  const valid = new Agent({ connections: 1 });
  const p50 = async (): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t = performance.now();
      const res = await request(`${base}/t/op`, {
        method: 'POST',
        body: '{}',
        dispatcher: valid,
        headers: { authorization: basic('alice', 'right-password') },
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`the valid user got ${res.statusCode}`);
      times.push(performance.now() - t);
    }
    return median(times);
  };
  await p50();
  const quiet = await p50();
  const guessAgent = new Agent({ connections: GUESSERS });
  let guessing = true;
  let guesses = 0;
  const guessers = Array.from({ length: GUESSERS }, async (_, g) => {
    for (let n = 0; guessing && n < 100_000; n++) {
      const res = await request(`${base}/t/op`, {
        method: 'POST',
        body: '{}',
        dispatcher: guessAgent,
        headers: { authorization: basic('alice', `guess-${g}-${n}`) },
      });
      await res.body.dump();
      guesses++;
    }
  });
  // the flood running before the measure: the throttle and the workers are what is measured, not the first second
  await new Promise((r) => setTimeout(r, 1000));
  const flooded = await p50();
  guessing = false;
  await Promise.all(guessers);
  await Promise.all([guessAgent.close(), valid.close()]);
  await node.stop(5000);
  const ratio = flooded / quiet;
  console.log(
    `valid user's p50: ${quiet.toFixed(2)} ms quiet, ${flooded.toFixed(2)} ms under ${GUESSERS} guessing connections (${guesses} guesses answered)`,
  );
  report({
    figure: `auth under a guessing flood: a valid user's p50 with ${GUESSERS} connections guessing wrong Basic passwords`,
    hivenode: flooded,
    unit: 'ms',
    baseline: 'the same user quiet',
    baselineValue: quiet,
    ratio,
    target: '≤ 5×',
    met: ratio <= 5,
    lowerIsBetter: true,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
