import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { NatsServer } from './server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from './server.js';
import { sleep, until } from '../../support/wait.js';
import { requireInstalled } from '../../support/installed.js';

/** A node on the NATS hive with one echo service; `dashboard` switches its console on, with a queue delivering to `target`. */
function startNode(
  server: NatsServer,
  name: string,
  channel: string,
  dashboard: boolean,
  target = '',
): Promise<HiveNode> {
  const hive = [
    ['SERVERHOST', server.url],
    ['SERVERAUTH', server.token],
  ] as const;
  return HiveNode.start({
    name,
    services: [
      { kind: 'echo', layers: [{ source: 'test', values: [['NAME', channel], ...hive] }] },
      ...(target
        ? [
            {
              kind: 'queue' as const,
              layers: [
                {
                  source: 'test',
                  values: [
                    ['NAME', `${name}-queue`],
                    ['PersistPath', ''],
                    ['DefaultChannel', target],
                    ...hive,
                  ] as const,
                },
              ],
            },
          ]
        : []),
    ],
    logStream: new PassThrough(),
    ...(dashboard ? { dashboardPort: 0 } : {}),
  });
}

describe('console on a NATS hive: every node sharing the hive, through its KV bucket', function () {
  this.timeout(60_000);
  let server: NatsServer | undefined;
  const nodes: HiveNode[] = [];
  before(function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop(2000)));
    await server?.stop();
    server = undefined;
  });

  it('the console of one node lists the other nodes with their services, and drops a node that stopped', async () => {
    server = await natsServer();
    const watcher = await startNode(server, 'edge-a', 'echo-a', true, 'echo-b');
    nodes.push(watcher);
    const other = await startNode(server, 'edge-b', 'echo-b', false);
    nodes.push(other);
    const base = `http://127.0.0.1:${watcher.dashboard!.port}`;
    type Flow = {
      nodes: Array<{ id: string; detail: string }>;
      edges: Array<{ from: string; to: string }>;
      hiveNodes: Array<{ name: string; services: Array<{ name: string; channel: string }> }>;
    };
    const names = async (): Promise<string[]> =>
      ((await (await fetch(`${base}/api/flow`)).json()) as Flow).hiveNodes.map((n) => n.name);
    let seen: string[] = [];
    for (let end = Date.now() + 15_000; !seen.includes('edge-b') && Date.now() < end;) {
      await watcher.roster!.round();
      seen = await names();
      if (!seen.includes('edge-b')) await sleep(200);
    }
    expect(seen).to.deep.equal(['edge-a', 'edge-b']);
    const flow = (await (await fetch(`${base}/api/flow`)).json()) as Flow;
    expect(flow.hiveNodes.find((n) => n.name === 'edge-b')!.services).to.deep.equal([
      { name: 'echo-b', kind: 'echo', channel: 'echo-b', sends: [] },
    ]);
    // the queue's target is not served on edge-a, but on edge-b: the arrow ends at edge-b's service, drawn as a box of its own
    const remote = flow.nodes.find((n) => n.id.startsWith('remote:edge-b@'));
    expect(remote).to.deep.include({ kind: 'remote', label: 'echo-b', detail: 'echo on edge-b', node: 'edge-b' });
    expect(
      flow.nodes.some((n) => n.id === 'ch:echo-b'),
      'no channel box for a channel served on the hive',
    ).to.equal(false);
    const page = await (await fetch(`${base}/flow`)).text();
    expect(page).to.contain('<tr data-node="edge-b">');
    expect(page).to.match(/<tr data-node="edge-a"><th scope="row">edge-a <span class="muted">\(this node\)<\/span>/);

    // a stopped node is not heard from again: after three rounds it is left out
    await other.stop(2000);
    nodes.splice(nodes.indexOf(other), 1);
    const roster = watcher.roster!;
    await sleep(3 * roster.intervalMs + 500);
    await roster.round();
    expect(await names()).to.deep.equal(['edge-a']);
    // and its box with it: the queue's arrow ends at a channel box again, the layout made anew
    const after = (await (await fetch(`${base}/api/flow`)).json()) as Flow;
    expect(after.nodes.some((n) => n.id.startsWith('remote:'))).to.equal(false);
    expect(after.edges.some((e) => e.from === 'svc:edge-a-queue' && e.to === 'ch:echo-b')).to.equal(true);
  });

  it("another node's services are boxes of the flow, laid out with this node's, labelled with their node, their arrows with the rate that node sent along them", async () => {
    server = await natsServer();
    const watcher = await startNode(server, 'edge-a', 'echo-a', true);
    nodes.push(watcher);
    // edge-b has no console: it publishes its queue delivering to edge-a's echo, with what it sent
    const other = await startNode(server, 'edge-b', 'echo-b', false, 'echo-a');
    nodes.push(other);
    const base = `http://127.0.0.1:${watcher.dashboard!.port}`;
    type Edge = {
      from: string;
      to: string;
      label: string;
      rate?: number;
      sender?: { node: string; service: string; channel: string };
    };
    const flow = async (): Promise<{
      nodes: Array<{ id: string; kind: string; label: string; detail: string }>;
      edges: Edge[];
    }> => (await fetch(`${base}/api/flow`)).json() as never;
    /** Both nodes write their entries, then a sample of the watcher's history reads what edge-b wrote. */
    const exchange = async (): Promise<void> => {
      await other.roster!.round();
      await watcher.roster!.round();
      await sleep(2200);
    };
    const queueArrow = async (): Promise<Edge | undefined> =>
      (await flow()).edges.find(
        (e) => e.from.startsWith('remote:edge-b@') && e.from.endsWith(':edge-b-queue') && e.to === 'svc:echo-a',
      );
    for (let end = Date.now() + 15_000; !(await queueArrow()) && Date.now() < end;) await exchange();
    expect(await queueArrow()).to.deep.include({ label: 'delivers' });
    const boxes = (await flow()).nodes.filter((n) => n.kind === 'remote').map((n) => `${n.label} (${n.detail})`);
    expect(boxes).to.have.members(['echo-b (echo on edge-b)', 'edge-b-queue (queue on edge-b)']);

    for (let i = 0; i < 12; i++)
      expect(
        (await other.hive.call('edge-b-queue', makeMessage({ Data: mapOf({ n: [String(i)] }) }), 5000)).Code,
      ).to.equal(200);
    await until(
      () => (other.services.find((s) => s.name === 'edge-b-queue')!.running.status().delivered as number) === 12,
      10_000,
    );
    await exchange();
    const arrow = (await queueArrow())!;
    expect(arrow.sender!.service).to.equal('edge-b-queue');
    expect(arrow.rate, "the 12 deliveries between two of edge-b's entries").to.be.greaterThan(0);
    expect(arrow.rate).to.be.at.most(12 / 0.2);

    // the page draws edge-b's services as boxes with their node, and the arrow with its rate
    const page = await (await fetch(`${base}/flow`)).text();
    expect(page).to.match(
      /<g class="flow-node" data-node="remote:edge-b@[^"]+:edge-b-queue"[^>]*><title>edge-b-queue \(queue on edge-b\)<\/title>/,
    );
    expect(page).to.match(
      /<g class="flow-edge" data-edge="remote:edge-b@[^"]+:edge-b-queue->svc:echo-a"[^>]*>[\s\S]*?<text[^>]*>delivers · [\d.]+\/s<\/text>/,
    );
    expect(page).to.match(/<tr><td>edge-b-queue on edge-b<\/td><td>echo-a<\/td><td>delivers · [\d.]+\/s<\/td><\/tr>/);
  });
});
