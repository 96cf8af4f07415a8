/**
 * Lose a machine under a queue on JetStream: three nats-servers (a JetStream cluster; the
 * queue's stream in three replicas) and three node processes, each with a gateway, the queue (one
 * NAME: one node holds it, the others stand by) and a recording echo as its target. Entries are
 * enqueued across the three gateways while, again and again, the node holding the queue is SIGKILLed
 * together with its machine's nats-server mid-delivery, and both are started again. Every entry a
 * gateway acknowledged (200) must be delivered; an entry delivered twice can only be one whose
 * delivery was under way when its holder died (delivery is at least once), counted.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { request } from 'undici';
import { natsCluster } from '../adapters/nats/cluster.js';
import { NATS_MISSING, natsServerAvailable } from '../adapters/nats/server.js';
import { recorded } from '../integration/queue/helpers.js';
import { tempDir } from '../temp.js';
import type { NodeProcess } from './node-process.js';
import { clusterHive, startClusterNode, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale, chaosOnly } from './scale.js';
import { sleep } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

// the duplicates are the entries in flight at each kill, so their share depends on the entries per
// kill: the scaled run keeps the full run's 2,000 (4,000 with 3 kills put it at 0.7-1.35% under load,
// against 0.46% at full scale)
const ENTRIES = byScale(6_000, 10_000);
const KILLS = byScale(3, 5);
const NODES = 3;
/** Posts in flight at once, spread over the gateways. */
const CONCURRENCY = 16;
const HOLDING = 'active queue holder now';
const STOPPED = 'stops serving';

// Run by `make chaos` only (51 s in make test): the same loss is held in `make test` by the three-server
// cluster spec of spec/adapters/nats/jetstream-queue.spec.ts (the holder's machine lost mid-delivery).
chaosOnly('reliability: the queue on JetStream loses a machine', () => {
  reliabilityTest(
    "lose a machine: the queue holder's node and its nats-server SIGKILLed together mid-delivery, on a three-server cluster",
    {
      suite: 'dependencies',
      load: `${ENTRIES} entries enqueued through ${NODES} gateways (${CONCURRENCY} at once, a refused one sent again to another gateway); ${NODES} nodes each running a gateway, the queue (Store jetstream, Replicas 3, DeliveryConcurrency 8, one NAME) and a recording echo; 3 nats-servers with JetStream`,
      faults: `${KILLS} × SIGKILL of the holding node and of its nats-server, mid-delivery, both started again`,
    },
    600_000,
    async (figures, skip) => {
      requireInstalled(natsServerAvailable(), NATS_MISSING, skip);
      const cluster = await natsCluster(3);
      const dir = tempDir('hn-qloss-');
      const files = Array.from({ length: NODES }, (_, i) =>
        writeNodeFile(
          dir,
          `node${i}`,
          [
            `{service: gateway, NAME: gw${i}, Port: 0, Strict: true, OUTPUTCHANNEL: jobs}`,
            '{service: queue, NAME: jobs, Store: jetstream, Replicas: 3, AckWait: 5s, DeliveryConcurrency: 8, DefaultChannel: work, DefaultRequeueTime: 1}',
            `{service: echo, NAME: work, Delay: 20, RecordFile: "${join(dir, `work${i}.jsonl`)}"}`,
          ],
          clusterHive(cluster, i, dir),
        ),
      );
      const nodes: NodeProcess[] = [];
      const all: NodeProcess[] = [];
      const start = async (i: number): Promise<void> => {
        nodes[i] = await startClusterNode(files[i]!);
        all.push(nodes[i]!);
      };
      const alive = (n: NodeProcess | undefined): n is NodeProcess =>
        n !== undefined && n.child.exitCode === null && n.child.signalCode === null;
      const holding = (n: NodeProcess | undefined): boolean =>
        alive(n) && n.output().lastIndexOf(HOLDING) > n.output().lastIndexOf(STOPPED);
      let enqueuing = true;
      try {
        for (let i = 0; i < NODES; i++) await start(i);
        const acknowledged: number[] = [];
        let refused = 0;
        let next = 0;
        const poster = async (lane: number): Promise<void> => {
          while (enqueuing && next < ENTRIES) {
            const item = ++next;
            for (let tries = 0; ; tries++) {
              const n = nodes[(item + tries + lane) % NODES];
              const ok =
                alive(n) &&
                (await request(`http://127.0.0.1:${n.port}/jobs/action`, {
                  method: 'POST',
                  body: JSON.stringify({ item: [String(item)] }),
                  headersTimeout: 30_000,
                }).then(
                  async (res) => {
                    await res.body.dump();
                    return res.statusCode === 200;
                  },
                  () => false,
                ));
              if (ok) {
                acknowledged.push(item);
                break;
              }
              refused++;
              if (tries > 400) throw new Error(`entry ${item} was never acknowledged`);
              await sleep(100);
            }
          }
        };
        const posting = Promise.all(Array.from({ length: CONCURRENCY }, (_, lane) => poster(lane)));
        const delivered = (): number[] =>
          Array.from({ length: NODES }, (_, i) =>
            recorded(join(dir, `work${i}.jsonl`)).map((r) => Number(r.message.Data.item?.[0])),
          ).flat();
        const takeovers: number[] = [];
        for (let k = 0; k < KILLS; k++) {
          // mid-delivery: entries are arriving and being delivered
          const seen = delivered().length;
          const until = Date.now() + 60_000;
          while ((delivered().length < seen + 200 || !nodes.some(holding)) && Date.now() < until) await sleep(50);
          const h = nodes.findIndex(holding);
          if (h < 0) throw new Error(`no node holds the queue before kill ${k + 1}`);
          const killedAt = Date.now();
          await Promise.all([nodes[h]!.kill('SIGKILL'), cluster.servers[h]!.kill()]);
          while (!nodes.some((n, i) => i !== h && holding(n) && n.output().lastIndexOf(HOLDING) >= 0)) {
            if (Date.now() - killedAt > 60_000)
              throw new Error(`no node took the queue over within 60 s of kill ${k + 1}`);
            await sleep(50);
          }
          takeovers.push(Date.now() - killedAt);
          await cluster.servers[h]!.start();
          await start(h);
        }
        await posting;
        enqueuing = false;
        const deadline = Date.now() + 180_000;
        const allDelivered = (): boolean => {
          const got = new Set(delivered());
          return acknowledged.every((item) => got.has(item));
        };
        while (Date.now() < deadline && !allDelivered()) await sleep(500);
        const got = delivered();
        const distinct = new Set(got);
        const missing = acknowledged.filter((item) => !distinct.has(item));
        const twice = got.length - distinct.size;
        takeovers.sort((a, b) => a - b);
        figures['entries acknowledged'] = acknowledged.length;
        figures['acknowledged entries missing'] = missing.length;
        figures['entries delivered twice'] = twice;
        figures['delivered twice (%)'] = Number(((100 * twice) / Math.max(1, acknowledged.length)).toFixed(2));
        figures['enqueues refused and sent again'] = refused;
        figures['kills'] = KILLS;
        figures['takeover after a kill (ms, median)'] = takeovers[Math.floor(takeovers.length / 2)]!;
        figures['takeover after a kill (ms, max)'] = takeovers[takeovers.length - 1]!;
        expect(missing, `acknowledged entries never delivered: ${missing.slice(0, 10).join(', ')}`).to.deep.equal([]);
        expect(twice / acknowledged.length, 'entries delivered twice').to.be.below(0.01);
      } finally {
        enqueuing = false;
        await Promise.all(all.map((n) => n.kill('SIGKILL')));
        await cluster.stop();
      }
    },
  );
});
