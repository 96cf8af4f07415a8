/**
 * The flow with other nodes of the hive (what their roster entries say): their services are boxes
 * laid out with this node's by ELK, an arrow to a channel no service here serves ends at the node
 * that does, their own sends are arrows too, and the layout is made again only when their wiring
 * changes — not for new counts. (The same over a real NATS hive: spec/adapters/nats/console-nodes.spec.ts.)
 */
import { expect } from 'chai';
import { buildFlow, wiringSignature } from '../../../node/console/flow-graph.js';
import { layoutFlow } from '../../../node/console/flow-layout.js';
import type { ConsoleService } from '../../../node/console/sources.js';
import type { RosterEntry } from '../../../node/hive-roster.js';

const service = (kind: string, name: string, config: Record<string, unknown> = {}): ConsoleService => ({
  kind,
  name,
  channel: name,
  config,
  status: () => ({}),
});

const billing = (sent: number): RosterEntry => ({
  name: 'billing-node',
  host: 'b.example',
  pid: 7,
  startedAt: '2026-01-01T00:00:00Z',
  seenAt: new Date().toISOString(),
  services: [
    { name: 'billing', kind: 'sql', channel: 'billing', sends: [] },
    {
      name: 'invoices',
      kind: 'queue',
      channel: 'invoices',
      sends: [
        { channel: 'billing', label: 'delivers', sent },
        { channel: 'audit', label: 'dead letters', sent: 0 },
      ],
    },
  ],
});

describe("console flow across the hive: other nodes' services drawn as boxes of the same layout", () => {
  it("ends an arrow at the node that serves its channel, draws that node's sends, and places every box", async () => {
    const here = [
      service('gateway', 'gateway', { Routes: 'invoice=invoices', OUTPUTCHANNEL: 'audit' }),
      service('echo', 'audit'),
    ];
    const graph = buildFlow(here, [billing(5)]);
    const id = 'remote:billing-node@b.example#7:';
    expect(graph.nodes.filter((n) => n.kind === 'remote').map((n) => [n.id, n.label, n.detail, n.node])).to.deep.equal([
      [`${id}billing`, 'billing', 'sql on billing-node', 'billing-node'],
      [`${id}invoices`, 'invoices', 'queue on billing-node', 'billing-node'],
    ]);
    const arrows = graph.edges
      .filter((e) => e.channel)
      .map((e) => `${e.from} -${e.label}-> ${e.to} (${e.sender!.node || 'here'}/${e.sender!.service})`);
    expect(arrows).to.have.members([
      `svc:gateway -invoice-> ${id}invoices (here/gateway)`,
      'svc:gateway -no route matched-> svc:audit (here/gateway)',
      `${id}invoices -delivers-> ${id}billing (billing-node@b.example#7/invoices)`,
      // a channel served on this node and elsewhere is drawn to this node's service
      `${id}invoices -dead letters-> svc:audit (billing-node@b.example#7/invoices)`,
    ]);
    const placed = await layoutFlow(graph);
    for (const n of graph.nodes) expect(placed.nodes.get(n.id), n.id).to.include.keys('x', 'y', 'width', 'height');
    for (const e of graph.edges) expect(placed.edges.get(e.id)!.points.length, e.id).to.be.at.least(2);
    // the boxes of billing-node come after the gateway's: ELK's layers run left to right
    expect(placed.nodes.get(`${id}billing`)!.x).to.be.greaterThan(placed.nodes.get(`${id}invoices`)!.x);
    expect(placed.nodes.get(`${id}invoices`)!.x).to.be.greaterThan(placed.nodes.get('svc:gateway')!.x);
  });

  it('the wiring signature ignores counts and times but changes with a node, a service or a send', () => {
    const a = billing(5);
    expect(wiringSignature([a])).to.equal(wiringSignature([{ ...billing(900), seenAt: '2030-01-01T00:00:00Z' }]));
    expect(wiringSignature([a])).to.not.equal(wiringSignature([]));
    expect(wiringSignature([a])).to.not.equal(wiringSignature([{ ...a, pid: 8 }]));
    expect(wiringSignature([a])).to.not.equal(wiringSignature([{ ...a, services: a.services.slice(1) }]));
  });
});
