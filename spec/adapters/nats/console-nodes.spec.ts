import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../../../node/node.js';
import type { NatsServer } from './server.js';
import { natsServer, natsServerAvailable } from './server.js';

/** A node on the NATS hive with one echo service; `dashboard` switches its console on, with a queue delivering to `target`. */
function startNode(server: NatsServer, name: string, channel: string, dashboard: boolean, target = ''): Promise<HiveNode> {
  const hive = [['SERVERHOST', server.url], ['SERVERAUTH', server.token]] as const;
  return HiveNode.start({
    name,
    services: [
      { kind: 'echo', layers: [{ source: 'test', values: [['NAME', channel], ...hive] }] },
      ...(target ? [{ kind: 'queue' as const, layers: [{ source: 'test', values: [['NAME', `${name}-queue`], ['PersistPath', ''], ['DefaultChannel', target], ...hive] as const }] }] : []),
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
    if (!natsServerAvailable()) {
      if (process.env.CI) throw new Error('nats-server is not installed (scripts/test.sh installs it)');
      this.skip();
    }
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
    type Flow = { nodes: Array<{ id: string; detail: string }>; hiveNodes: Array<{ name: string; services: Array<{ name: string; channel: string }> }> };
    const names = async (): Promise<string[]> => ((await (await fetch(`${base}/api/flow`)).json()) as Flow).hiveNodes.map((n) => n.name);
    let seen: string[] = [];
    for (let end = Date.now() + 15_000; !seen.includes('edge-b') && Date.now() < end; ) {
      await watcher.roster!.round();
      seen = await names();
      if (!seen.includes('edge-b')) await new Promise((r) => setTimeout(r, 200));
    }
    expect(seen).to.deep.equal(['edge-a', 'edge-b']);
    const flow = (await (await fetch(`${base}/api/flow`)).json()) as Flow;
    expect(flow.hiveNodes.find((n) => n.name === 'edge-b')!.services).to.deep.equal([{ name: 'echo-b', kind: 'echo', channel: 'echo-b' }]);
    // the queue's target is not served on edge-a, but on edge-b: its box says so
    expect(flow.nodes.find((n) => n.id === 'ch:echo-b')!.detail).to.equal('served on edge-b');
    const page = await (await fetch(`${base}/flow`)).text();
    expect(page).to.contain('<tr data-node="edge-b">');
    expect(page).to.match(/<tr data-node="edge-a"><th scope="row">edge-a <span class="muted">\(this node\)<\/span>/);

    // a stopped node is not heard from again: after three rounds it is left out
    await other.stop(2000);
    nodes.splice(nodes.indexOf(other), 1);
    const roster = watcher.roster!;
    await new Promise((r) => setTimeout(r, 3 * roster.intervalMs + 500));
    await roster.round();
    expect(await names()).to.deep.equal(['edge-a']);
  });
});
