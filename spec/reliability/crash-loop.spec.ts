/**
 * Crash loops: a node running gateway → durable queue → echo (recording every delivery) is SIGKILLed
 * at random points while the queue delivers, then started again on the same store. Every entry whose
 * enqueue was acknowledged must be delivered in the end; deliveries repeated because a kill hit
 * between the hand-over and the store update are counted, not hidden.
 * Scaled: 5 kills × 2,000 entries; full (HIVENODE_CHAOS=full): 20 kills × 10,000 entries.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { prng } from '../prng.js';
import { recorded, tempDir } from '../integration/queue/helpers.js';
import { awaitDrain, enqueueAll, expectNoneMissing, killWhileDelivering } from './kill-loop.js';
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
    {
      suite: 'crash loops',
      load: `${ENTRIES} entries enqueued through the gateway (32 connections), delivered 4 at a time to a recording echo`,
      faults: `${KILLS} × SIGKILL of the node at a random point 150–400 ms into delivery, restart on the same store`,
    },
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
      const acknowledged = new Set<string>();
      await enqueueAll(
        node.port,
        ENTRIES,
        (n) => ({ data: { i: [String(n)] } }),
        (n) => acknowledged.add(String(n)),
      );
      figures['entries acknowledged'] = acknowledged.size;
      expect(acknowledged.size).to.equal(ENTRIES);

      const delivered = (): string[] => recorded(record).map((r) => r.message.Data.i![0]!);
      // the queue starts paused, so every start is controlled: resume, let it deliver a while, kill
      const resume = async (port: number): Promise<void> => {
        const res = await fetch(`http://127.0.0.1:${port}/queue/action`, {
          method: 'POST',
          headers: { command: 'resume' },
          body: '{}',
        });
        expect(res.status).to.equal(200);
      };
      node = await killWhileDelivering(
        node,
        { file, kills: KILLS, entries: ENTRIES, rnd, delivered, resume, started: (n) => (node = n) },
        figures,
      );
      await awaitDrain(delivered, acknowledged.size, figures);
      await node.kill('SIGTERM');
      node = undefined;
      expectNoneMissing(delivered(), acknowledged, figures);
    },
  );
});
