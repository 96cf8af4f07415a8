/**
 * examples/three-machines as three hosts (spec/support/netns.ts): each machine a network namespace with
 * its own address, its machine name (nats-a.internal …) resolved by the host's /etc/hosts, running the
 * example's own nats-server configuration and node file — unchanged but for the two paths on disk (the
 * three hosts share one filesystem). The ports, listen addresses, routes by name and SERVERHOST are the
 * example's. One request enters through a machine that does not hold the queue, crosses to the holder on
 * another machine and is delivered.
 */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { recorded } from '../../integration/queue/helpers.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { GATEWAY_READY, startNodeProcess } from '../../reliability/node-process.js';
import type { NetnsLab } from '../../support/netns.js';
import { netnsLab } from '../../support/netns.js';
import { skipWithoutNetns } from '../../support/netns-nats.js';
import { tempDir } from '../../temp.js';
import { waitForPort } from '../ports.js';
import { sleep } from '../../support/wait.js';

const EXAMPLE = new URL('../../../examples/three-machines/', import.meta.url).pathname;
const MACHINES = ['a', 'b', 'c'] as const;
const HOLDING = 'active queue holder now';

describe('examples/three-machines as three hosts (network namespaces)', function () {
  this.timeout(180_000);
  let lab: NetnsLab | undefined;
  const nodes: NodeProcess[] = [];
  before(function () {
    skipWithoutNetns(this);
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    await lab?.destroy();
  });

  it("the example's files on three hosts: a request through a machine that does not hold the queue is delivered", async () => {
    const dir = tempDir('hn-3m-netns-');
    lab = netnsLab(MACHINES, { hostsFile: (address) => MACHINES.map((x) => `${address(x)} nats-${x}.internal`) });
    const env = { HIVE_TOKEN: `t-${Math.random().toString(36).slice(2)}` };
    for (const [i, x] of MACHINES.entries()) {
      const conf = readFileSync(join(EXAMPLE, `nats-${x}.conf`), 'utf8').replace(
        'store_dir: "/var/lib/nats"',
        `store_dir: "${join(dir, `nats-${x}`)}"`,
      );
      writeFileSync(join(dir, `nats-${x}.conf`), conf);
      const child = lab.spawn(lab.hosts[i]!, 'nats-server', ['-c', join(dir, `nats-${x}.conf`)], {
        stdio: 'ignore',
        env: { ...process.env, ...env },
      });
      await waitForPort(4222, 10_000, `nats-server on machine ${x}`, child, lab.hosts[i]!.address);
    }
    const node = readFileSync(join(EXAMPLE, 'node.yaml'), 'utf8');
    for (const [i, x] of MACHINES.entries()) {
      const file = join(dir, `node-${x}.yaml`);
      writeFileSync(
        file,
        node.replace('RecordFile: /var/lib/hivenode/work.jsonl', `RecordFile: ${join(dir, `work-${x}.jsonl`)}`),
      );
      const host = lab.hosts[i]!;
      // the cluster elects its JetStream leaders in its first seconds: a node may have to try again
      for (let attempt = 0; ; attempt++) {
        try {
          nodes.push(
            await startNodeProcess(file, {
              ready: GATEWAY_READY,
              env,
              timeoutMs: 60_000,
              spawner: (c, a, o) => lab!.spawn(host, c, a, o),
            }),
          );
          break;
        } catch (e) {
          if (attempt === 5) throw e;
          await sleep(2_000);
        }
      }
    }
    expect(
      nodes.map((n) => n.port),
      "every gateway on the example's port",
    ).to.deep.equal([8080, 8080, 8080]);
    const until = Date.now() + 60_000;
    let holder = -1;
    while ((holder = nodes.findIndex((n) => n.output().includes(HOLDING))) < 0 && Date.now() < until) await sleep(100);
    expect(holder, 'a machine holds the queue').to.be.at.least(0);
    const via = (holder + 1) % MACHINES.length;
    const url = `http://${lab.hosts[via]!.address}:8080/jobs/action`;
    let status = 0;
    while (Date.now() < until) {
      const res = await request(url, { method: 'POST', body: JSON.stringify({ order: ['across'] }) }).catch(
        () => undefined,
      );
      await res?.body.dump();
      status = res?.statusCode ?? 0;
      if (status === 200) break;
      await sleep(250);
    }
    expect(
      status,
      `the enqueue through machine ${MACHINES[via]}'s gateway (machine ${MACHINES[holder]} holds the queue)`,
    ).to.equal(200);
    const delivered = (): string[] =>
      MACHINES.flatMap((x) => recorded(join(dir, `work-${x}.jsonl`)).map((r) => r.message.Data.order?.[0] ?? ''));
    while (!delivered().includes('across') && Date.now() < until) await sleep(100);
    expect(delivered(), 'delivered to a worker').to.deep.equal(['across']);
  });
});
