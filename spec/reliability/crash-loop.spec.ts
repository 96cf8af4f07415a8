/**
 * Crash loops: a node running gateway → durable queue → echo (recording every delivery) is SIGKILLed
 * at random points while the queue delivers, then started again on the same store. Every entry whose
 * enqueue was acknowledged must be delivered in the end; deliveries repeated because a kill hit
 * between the hand-over and the store update are counted, not hidden.
 * Scaled: 5 kills × 2,000 entries; full (HIVENODE_CHAOS=full): 20 kills × 10,000 entries.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { Pool } from 'undici';
import { prng } from '../prng.js';
import { recorded, sleep, tempDir } from '../integration/queue/helpers.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';

const ENTRIES = byScale(2_000, 10_000);
const KILLS = byScale(5, 20);
const SEED = 0xc0ffee;

describe('reliability: crash loops (queue under SIGKILL)', function () {
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill();
  });

  reliabilityTest(
    `${KILLS} SIGKILLs during delivery of ${ENTRIES} entries: every acknowledged entry is delivered, duplicates counted`,
    { suite: 'crash loops', load: `${ENTRIES} entries enqueued through the gateway (32 connections), delivered 4 at a time to a recording echo`, faults: `${KILLS} × SIGKILL of the node at a random point 150–400 ms into delivery, restart on the same store` },
    byScale(240_000, 1_500_000),
    async (figures) => {
      const rnd = prng(SEED);
      const dir = tempDir('hn-crash-');
      const record = join(dir, 'delivered.jsonl');
      const file = writeNodeFile(dir, 'node', [
        `{service: echo, NAME: target, Delay: 5ms, RecordFile: "${record}"}`,
        `{service: queue, NAME: q, PersistPath: "${join(dir, 'store')}", DefaultChannel: target, DeliveryConcurrency: 4, StartPaused: true}`,
        '{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: q, ControlAllowList: command}',
      ]);
      node = await startNodeProcess(file);
      // an entry counts only once its 200 (stored and fsynced) answer came back
      const pool = new Pool(`http://127.0.0.1:${node.port}`, { connections: 32 });
      const acknowledged = new Set<string>();
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < ENTRIES) {
            const i = String(next++);
            const res = await pool.request({ path: '/queue/action', method: 'POST', body: JSON.stringify({ i: [i] }) });
            if (((await res.body.json()) as { Code: number }).Code === 200) acknowledged.add(i);
          }
        }),
      );
      await pool.close();
      figures['entries acknowledged'] = acknowledged.size;
      expect(acknowledged.size).to.equal(ENTRIES);

      const delivered = (): string[] => recorded(record).map((r) => r.message.Data.i![0]!);
      // the queue starts paused, so every start is controlled: resume, let it deliver a while, kill
      const resume = async (port: number): Promise<void> => {
        const res = await fetch(`http://127.0.0.1:${port}/queue/action`, { method: 'POST', headers: { command: 'resume' }, body: '{}' });
        expect(res.status).to.equal(200);
      };
      const killedMidway: number[] = [];
      for (let k = 0; k < KILLS; k++) {
        await resume(node.port);
        await sleep(150 + Math.floor(rnd() * 250));
        const before = new Set(delivered()).size;
        await node.kill('SIGKILL');
        if (before > 0 && before < ENTRIES) killedMidway.push(before);
        node = await startNodeProcess(file);
      }
      await resume(node.port);
      figures['kills that hit delivery midway'] = killedMidway.length;
      expect(killedMidway.length, 'kills that hit the node while it was delivering').to.be.greaterThan(0);
      const drainBegan = Date.now();
      const deadline = drainBegan + byScale(120_000, 600_000);
      while (new Set(delivered()).size < acknowledged.size && Date.now() < deadline) await sleep(200);
      figures['drain after the last restart (s)'] = Math.round((Date.now() - drainBegan) / 100) / 10;
      await node.kill('SIGTERM');
      node = undefined;

      const all = delivered();
      const unique = new Set(all);
      const missing = [...acknowledged].filter((i) => !unique.has(i));
      figures['delivered (unique)'] = unique.size;
      figures['duplicate deliveries'] = all.length - unique.size;
      figures['missing'] = missing.length;
      expect(missing).to.deep.equal([]);
    },
  );
});
