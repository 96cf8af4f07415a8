/**
 * examples/three-machines on loopback: the three nats-server configurations form a JetStream cluster
 * (their machine names and ports rewritten to 127.0.0.1 and free ports, their stores to a temp
 * directory) and the node file runs once per "machine". Enqueues through every machine's gateway are
 * delivered; when the machine holding the queue is lost (its node and its server SIGKILLed), the
 * enqueues go on through the others and everything acknowledged is delivered.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { recorded } from '../../integration/queue/helpers.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { GATEWAY_READY, startNodeProcess } from '../../reliability/node-process.js';
import { tempDir } from '../../temp.js';
import { freePort, waitForPort } from '../ports.js';
import { NATS_MISSING, natsServerAvailable } from './server.js';
import { HIVENODE_COMMAND } from '../../support/hivenode-bin.js';
import { sleep, until } from '../../support/wait.js';
import { requireInstalled } from '../../support/installed.js';

const EXAMPLE = new URL('../../../examples/three-machines/', import.meta.url).pathname;
const MACHINES = ['a', 'b', 'c'] as const;

describe('examples/three-machines on loopback', function () {
  this.timeout(180_000);
  const servers: ChildProcess[] = [];
  const nodes: NodeProcess[] = [];
  const env = { HIVE_TOKEN: `t-${Math.random().toString(36).slice(2)}` };
  let dir: string;
  before(function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
    dir = tempDir('hn-3m-');
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    for (const s of servers) if (s.exitCode === null && s.signalCode === null) s.kill('SIGKILL');
  });

  it('three servers, three nodes: enqueues through every gateway are delivered, also after the machine holding the queue is lost', async () => {
    const ports = await Promise.all(MACHINES.map(async () => ({ client: await freePort(), route: await freePort() })));
    const urls = ports.map((p) => `nats://127.0.0.1:${p.client}`);
    for (const [i, x] of MACHINES.entries()) {
      let conf = readFileSync(join(EXAMPLE, `nats-${x}.conf`), 'utf8');
      conf = conf
        .replace('listen: "0.0.0.0:4222"', `listen: "127.0.0.1:${ports[i]!.client}"`)
        .replace('listen: "0.0.0.0:6222"', `listen: "127.0.0.1:${ports[i]!.route}"`);
      for (const [j, y] of MACHINES.entries())
        conf = conf.replace(`nats-${y}.internal:6222`, `127.0.0.1:${ports[j]!.route}`);
      conf = conf.replace('store_dir: "/var/lib/nats"', `store_dir: "${join(dir, `nats-${x}`)}"`);
      expect(conf, 'every machine name and port rewritten').to.not.match(/\.internal|0\.0\.0\.0/);
      writeFileSync(join(dir, `nats-${x}.conf`), conf);
      const child = spawn('nats-server', ['-c', join(dir, `nats-${x}.conf`)], {
        stdio: 'ignore',
        env: { ...process.env, ...env },
      });
      servers.push(child);
      await waitForPort(ports[i]!.client, 10_000, `nats-server ${x}`, child);
    }
    const node = readFileSync(join(EXAMPLE, 'node.yaml'), 'utf8');
    for (const [i, x] of MACHINES.entries()) {
      const file = join(dir, `node-${x}.yaml`);
      const own = [urls[i]!, ...urls.filter((_, j) => j !== i)].join(',');
      writeFileSync(
        file,
        node
          .replace(/SERVERHOST: \S+/, `SERVERHOST: ${own}`)
          .replace('Port: 8080', 'Port: 0')
          .replace('RecordFile: /var/lib/hivenode/work.jsonl', `RecordFile: ${join(dir, `work-${x}.jsonl`)}`),
      );
      // the cluster elects its JetStream leaders in its first seconds: a node may have to try again
      for (let attempt = 0; ; attempt++) {
        try {
          nodes.push(await startNodeProcess(file, { ready: GATEWAY_READY, env }));
          break;
        } catch (e) {
          if (attempt === 5) throw e;
          await sleep(2_000);
        }
      }
    }
    const delivered = (): string[] =>
      MACHINES.flatMap((x) => recorded(join(dir, `work-${x}.jsonl`)).map((r) => r.message.Data.order?.[0] ?? ''));
    /** Posts until acknowledged (while a holder takes over, the queue's channel has no listener for some seconds). */
    const enqueue = async (n: NodeProcess, order: string): Promise<void> => {
      for (let tries = 0; tries < 120; tries++) {
        const res = await request(`http://127.0.0.1:${n.port}/jobs/action`, {
          method: 'POST',
          body: JSON.stringify({ order: [order] }),
        });
        await res.body.dump();
        if (res.statusCode === 200) return;
        await sleep(250);
      }
      throw new Error(`order ${order} was never acknowledged`);
    };
    for (const [i, n] of nodes.entries()) for (let k = 0; k < 10; k++) await enqueue(n, `${MACHINES[i]}-${k}`);
    const delivery = (count: number): Promise<void> =>
      until(() => new Set(delivered()).size >= count, {
        ms: 60_000,
        every: 100,
        what: () => `${count} delivered (${new Set(delivered()).size} so far)`,
      });
    await delivery(30);

    const h = nodes.findIndex((n) => /active queue holder now/.test(n.output()) && !/stops serving/.test(n.output()));
    expect(h, 'a node holds the queue').to.be.at.least(0);
    await Promise.all([
      nodes[h]!.kill('SIGKILL'),
      new Promise<void>((r) => (servers[h]!.once('exit', () => r()), servers[h]!.kill('SIGKILL'))),
    ]);
    const survivors = nodes.filter((_, i) => i !== h);
    for (const [i, n] of survivors.entries()) for (let k = 0; k < 10; k++) await enqueue(n, `after-${i}-${k}`);
    await delivery(50);
    expect(survivors.some((n) => /active queue holder now/.test(n.output()))).to.equal(true);
  });

  it('loopback.sh, as README shows it: three servers and three nodes on 127.0.0.1, each gateway enqueues, SIGTERM stops all and cleans up', async () => {
    // below Linux's ephemeral range, as the CLI spec's demo ports: the script takes base+0 … base+22
    const base = 10000 + Math.floor(Math.random() * 20000);
    const hivenode = HIVENODE_COMMAND;
    const script = spawn('bash', [join(EXAMPLE, 'loopback.sh')], {
      env: { ...process.env, ...env, LOOPBACK_BASE_PORT: String(base), HIVENODE: hivenode },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    script.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    script.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => script.once('exit', (code) => r(code)));
    try {
      const started = Date.now();
      while (!/files and logs in (\S+)\)/.test(out) && Date.now() - started < 20_000) await sleep(100);
      const where = /files and logs in (\S+)\)/.exec(out)?.[1];
      expect(where, out).to.be.a('string');
      for (const [i] of MACHINES.entries()) expect(out).to.contain(`gateway http://127.0.0.1:${base + 20 + i}`);
      for (const [i, x] of MACHINES.entries()) {
        const end = Date.now() + 90_000;
        for (;;) {
          const res = await request(`http://127.0.0.1:${base + 20 + i}/jobs/action`, {
            method: 'POST',
            body: JSON.stringify({ order: [`loop-${x}`] }),
          }).catch(() => undefined);
          await res?.body.dump();
          if (res?.statusCode === 200) break;
          if (Date.now() > end) throw new Error(`gateway ${x} never acknowledged: ${out}`);
          await sleep(500);
        }
      }
      const end = Date.now() + 30_000;
      const seen = (): string[] =>
        MACHINES.flatMap((x) => recorded(join(where!, `work-${x}.jsonl`)).map((r) => r.message.Data.order?.[0] ?? ''));
      while (new Set(seen()).size < 3 && Date.now() < end) await sleep(200);
      expect([...new Set(seen())].sort()).to.deep.equal(['loop-a', 'loop-b', 'loop-c']);
      script.kill('SIGTERM');
      expect(await exited).to.equal(0);
      expect(existsSync(where!), 'the temporary directory is removed').to.equal(false);
    } finally {
      if (script.exitCode === null) script.kill('SIGKILL');
    }
  });
});
