/** The flow's SVG (flow-svg.ts) drawn from a graph laid out by ELK: a box's second line stays inside the box. */
import { expect } from 'chai';
import type { FlowGraph } from '../../../node/console/flow-graph.js';
import { layoutFlow } from '../../../node/console/flow-layout.js';
import type { FlowLive } from '../../../node/console/flow-svg.js';
import { flowSvg } from '../../../node/console/flow-svg.js';

describe('console flow SVG', () => {
  it("a service restarting shows its health on the box's second line cut to the box, the whole text in its title", async () => {
    const graph: FlowGraph = { nodes: [{ id: 'svc:echo', kind: 'service', label: 'echo', detail: 'echo', service: 'echo' }], edges: [] };
    const placed = await layoutFlow(graph);
    const health = 'restarting (3 in 15 min), last: the worker crashed';
    const live: FlowLive = { health: new Map([['echo', { health: 'warn', text: health }]]), rateOf: () => undefined, elsewhere: () => [] };
    const svg = String(flowSvg(graph, placed, live, new Set()));
    const box = placed.nodes.get('svc:echo')!;
    const lines = [...svg.matchAll(/<text[^>]*font-size="11"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^echo · restar.*…$/);
    expect(lines[0]!.length * 6.4, 'the line fits the box').to.be.at.most(box.width);
    expect(svg).to.include(`<title>echo (echo · ${health})</title>`);
  });
});
