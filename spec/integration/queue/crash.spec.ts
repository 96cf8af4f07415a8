import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { recorded, sleep, tempDir } from './helpers.js';

const BIN = new URL('../../../bin/hivenode.ts', import.meta.url).pathname;
const ENTRIES = Number(process.env.CRASH_ENTRIES ?? 2000);
const KILLS = Number(process.env.CRASH_KILLS ?? 5);

/** A node process: gateway (strict) → queue (durable) → echo (records every delivery). */
function startNode(file: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', BIN, 'run', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start: ${out}`)), 20_000);
    const poll = setInterval(() => {
      const m = /serves HTTP on port (\d+)/.exec(out);
      if (m) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]) });
      }
    }, 20);
  });
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe(`queue crash test: ${KILLS} SIGKILLs during delivery of ${ENTRIES} entries`, function () {
  this.timeout(180_000);

  it('delivers every acknowledged entry at least once and counts duplicates', async () => {
    const dir = tempDir('hn-crash-');
    const record = join(dir, 'delivered.jsonl');
    const file = join(dir, 'node.yaml');
    writeFileSync(
      file,
      [
        'services:',
        '  - {service: echo, NAME: target, Delay: 5ms, RecordFile: "' + record + '"}',
        '  - {service: queue, NAME: q, PersistPath: "' + join(dir, 'store') + '", DefaultChannel: target, DeliveryConcurrency: 4, StartPaused: true}',
        '  - {service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: q, ControlAllowList: command}',
        '',
      ].join('\n'),
    );
    let { child, port } = await startNode(file);
    // enqueue through the gateway; an entry counts only once its 200 (durable) answer came back
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 32 });
    const acknowledged = new Set<string>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < ENTRIES) {
          const i = String(next++);
          const res = await pool.request({ path: '/queue/action', method: 'POST', body: JSON.stringify({ i: [i] }) });
          const body = (await res.body.json()) as { Code: number };
          if (body.Code === 200) acknowledged.add(i);
        }
      }),
    );
    await pool.close();
    expect(acknowledged.size).to.equal(ENTRIES);

    // the queue starts paused (so every start is controlled): resume it, let it deliver a while, kill it
    const resume = async (): Promise<void> => {
      const res = await fetch(`http://127.0.0.1:${port}/queue/action`, { method: 'POST', headers: { command: 'resume' }, body: '{}' });
      expect(res.status).to.equal(200);
    };
    const killedMidway: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      await resume();
      await sleep(150 + Math.floor(Math.random() * 250));
      const before = new Set(recorded(record).map((r) => r.message.Data.i![0]!)).size;
      await kill(child);
      if (before > 0 && before < ENTRIES) killedMidway.push(before);
      ({ child, port } = await startNode(file));
    }
    await resume();
    expect(killedMidway.length, 'kills that hit the node while it was delivering').to.be.greaterThan(0);
    const deadline = Date.now() + 120_000;
    const delivered = (): Set<string> => new Set(recorded(record).map((r) => r.message.Data.i![0]!));
    while (delivered().size < acknowledged.size && Date.now() < deadline) await sleep(200);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));

    const all = recorded(record).map((r) => r.message.Data.i![0]!);
    const unique = new Set(all);
    const missing = [...acknowledged].filter((i) => !unique.has(i));
    console.log(`      crash test: ${ENTRIES} acknowledged, ${unique.size} delivered, ${all.length - unique.size} duplicate deliveries, ${missing.length} missing, ${KILLS} kills`);
    expect(missing).to.deep.equal([]);
  });
});
