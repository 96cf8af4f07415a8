/**
 * nats-server restarted under gateway and queue load: one node process (gateway, durable queue, echo)
 * on a NATS hive served by a private nats-server (spec/adapters/nats/server.ts). The server is
 * killed and started again on the same port while clients call through the gateway and enqueue.
 * Expected: 503/504 while the hive is gone (requests in flight at the moment of the loss wait for
 * RequestTimeout, 5 s here, and get 504; never a hang, never a crash), the same node process
 * serving 200 again once NATS is back, and every enqueue that was acknowledged delivered in the end.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsServer } from '../adapters/nats/server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from '../adapters/nats/server.js';
import { recorded, tempDir } from '../integration/queue/helpers.js';
import { closedLoop, describeCodes, lastSent } from './load.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { sleep } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

const CYCLES = byScale(1, 3);
const UP_MS = byScale(2_000, 10_000);
const DOWN_MS = byScale(2_000, 10_000);
const RECOVERY_LIMIT_MS = 20_000;

/** POSTs to the gateway; a connection failure counts as code 0. */
async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  try {
    const res = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

describe('reliability: nats-server restarted under gateway and queue load', function () {
  let nats: NatsServer | undefined;
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill();
    await nats?.stop();
  });

  reliabilityTest(
    `${CYCLES} kill/start cycle(s) of nats-server: 503 while it is gone, 200 again after, every acknowledged entry delivered`,
    {
      suite: 'dependencies',
      load: '8 workers calling echo through the gateway + 4 workers enqueueing through the gateway, all over the NATS hive',
      faults: `nats-server SIGKILLed for ${DOWN_MS / 1000} s, then started again on the same port, ${CYCLES} time(s)`,
    },
    byScale(120_000, 300_000),
    async (figures, skip) => {
      requireInstalled(natsServerAvailable(), NATS_MISSING, skip);
      nats = await natsServer();
      const dir = tempDir('hn-natsload-');
      writeFileSync(join(dir, 'token'), `${nats.token}\n`);
      const record = join(dir, 'delivered.jsonl');
      const file = writeNodeFile(
        dir,
        'node',
        [
          '{service: echo, NAME: echo}',
          `{service: echo, NAME: target, RecordFile: "${record}"}`,
          `{service: queue, NAME: q, PersistPath: "${join(dir, 'store')}", DefaultChannel: target, DeliveryConcurrency: 4, DefaultRequeueTime: 1, DefaultRequeueCount: 1000, CallTimeout: 5s}`,
          '{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: echo, Routes: "queue=q", RequestTimeout: 5s}',
        ],
        `{SERVERHOST: "${nats.url}", SERVERAUTH: "file://${join(dir, 'token')}"}`,
      );
      node = await startNodeProcess(file);
      const base = `http://127.0.0.1:${node.port}`;
      const pid = node.child.pid;

      let stop = false;
      const acknowledged = new Set<string>();
      const calls = closedLoop({ workers: 8, stop: () => stop }, () => post(`${base}/load/op`, '{"x":["1"]}'));
      const enqueues = closedLoop({ workers: 4, stop: () => stop }, async (i) => {
        const code = await post(`${base}/queue/action`, JSON.stringify({ i: [String(i)] }));
        if (code === 200) acknowledged.add(String(i));
        return code;
      });
      const recoveries: number[] = [];
      const healthWhileDown: number[] = [];
      for (let c = 0; c < CYCLES; c++) {
        await sleep(UP_MS);
        await nats.stop();
        await sleep(DOWN_MS / 2);
        healthWhileDown.push((await fetch(`${base}/healthcheck`)).status);
        await sleep(DOWN_MS / 2);
        await nats.start();
        const restarted = Date.now();
        while ((await post(`${base}/load/op`, '{}')) !== 200 && Date.now() - restarted < RECOVERY_LIMIT_MS)
          await sleep(50);
        recoveries.push(Date.now() - restarted);
      }
      await sleep(UP_MS);
      stop = true;
      const [callSamples, enqueueSamples] = await Promise.all([calls, enqueues]);
      const tail = lastSent(callSamples, 1000);

      // the record file is read once per look, not once per entry
      const undelivered = (): string[] => {
        const seen = new Set(recorded(record).map((r) => r.message.Data.i![0]!));
        return [...acknowledged].filter((i) => !seen.has(i));
      };
      const drainBegan = Date.now();
      while (undelivered().length > 0 && Date.now() - drainBegan < 60_000) await sleep(250);
      const all = recorded(record).map((r) => r.message.Data.i![0]!);
      const missing = undelivered();
      Object.assign(figures, {
        'gateway calls': describeCodes(callSamples),
        enqueues: describeCodes(enqueueSamples),
        'health check while NATS is down': healthWhileDown.join(' '),
        'recovery after each restart (ms)': recoveries.join(', '),
        'entries acknowledged / delivered / missing': `${acknowledged.size} / ${new Set(all).size} / ${missing.length}`,
        'duplicate deliveries': all.length - new Set(all).size,
        'node process restarts': node.child.pid === pid && node.child.exitCode === null ? 0 : 1,
      });
      expect(node.child.exitCode, 'the node process is still running').to.equal(null);
      expect(callSamples.filter((s) => s.code !== 200).length, 'errors while NATS is down').to.be.greaterThan(0);
      for (const s of [...callSamples, ...enqueueSamples]) expect([200, 503, 504], 'codes').to.include(s.code);
      expect(
        healthWhileDown.every((c) => c === 503),
        'health check reports the lost hive',
      ).to.equal(true);
      for (const ms of recoveries) expect(ms, 'recovery after a restart (ms)').to.be.below(RECOVERY_LIMIT_MS);
      expect(describeCodes(tail), 'the last second of load').to.match(/^200×\d+$/);
      expect(acknowledged.size).to.be.greaterThan(0);
      expect(missing, 'acknowledged entries not delivered').to.deep.equal([]);
    },
  );
});
