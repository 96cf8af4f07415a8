/** The flow's SVG (flow-svg.ts) drawn from a graph laid out by ELK: a box's second line stays inside the box. */
import { expect } from 'chai';
import type { FlowGraph } from '../../../node/console/flow-graph.js';
import { BOX_PADDING, LINE_FONT, layoutFlow, textWidth } from '../../../node/console/flow-layout.js';
import type { FlowLive } from '../../../node/console/flow-svg.js';
import { flowSvg } from '../../../node/console/flow-svg.js';

describe('console flow SVG', () => {
  it("a service restarting shows its health on the box's second line cut to the box, the whole text in its title", async () => {
    const graph: FlowGraph = {
      nodes: [{ id: 'svc:echo', kind: 'service', label: 'echo', detail: 'echo', service: 'echo' }],
      edges: [],
    };
    const placed = await layoutFlow(graph);
    const health = 'restarting (3 in 15 min), last: the worker crashed';
    const live: FlowLive = {
      health: new Map([['echo', { health: 'warn', text: health }]]),
      rateOf: () => undefined,
      elsewhere: () => [],
    };
    const svg = String(flowSvg(graph, placed, live, new Set()));
    const box = placed.nodes.get('svc:echo')!;
    const lines = [...svg.matchAll(/<text[^>]*font-size="11"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^echo · restar.*…$/);
    expect(textWidth(lines[0]!, LINE_FONT), 'the line fits the box').to.be.at.most(box.width - BOX_PADDING);
    expect(svg).to.include(`<title>echo (echo · ${health})</title>`);
    // the box keeps room for the usual health: shown whole
    const usual = String(
      flowSvg(
        graph,
        placed,
        { ...live, health: new Map([['echo', { health: 'warn', text: 'restarting (12 in 15 min)' }]]) },
        new Set(),
      ),
    );
    expect(usual).to.match(/>echo · restarting \(12 in 15 min\)<\/text>/);
  });
});
