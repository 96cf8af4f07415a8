/**
 * The flow of the hive as this node sees it: its graph and layout with the live part — health and
 * each edge's rate — read at each request. This node's wiring is fixed while it runs; the other
 * nodes of a NATS hive come and go, so the graph and its layout are made again only when what they
 * publish of their wiring changes (not for new counts).
 */
import type { FlowGraph } from './flow-graph.js';
import { buildFlow, wiringSignature } from './flow-graph.js';
import type { PlacedFlow } from './flow-layout.js';
import { layoutFlow } from './flow-layout.js';
import type { FlowLive } from './flow-svg.js';
import { channelDetail, flowSvg } from './flow-svg.js';
import { servicesHealth } from './health.js';
import type { LiveHistory } from './history.js';
import type { Html } from './html.js';
import type { ConsoleSources } from './sources.js';
import type { RosterEntry } from '../hive-roster.js';

export class NodeFlow {
  private drawn: { signature: string; graph: FlowGraph; placed: Promise<PlacedFlow> } | undefined;

  constructor(
    private readonly sources: ConsoleSources,
    private readonly history: LiveHistory,
  ) {}

  private wiring(): { graph: FlowGraph; placed: Promise<PlacedFlow> } {
    const others = this.sources.nodes().filter((n) => !n.self);
    const signature = wiringSignature(others);
    if (this.drawn?.signature !== signature) {
      const graph = buildFlow(this.sources.services(), others);
      this.drawn = { signature, graph, placed: layoutFlow(graph) };
    }
    return this.drawn;
  }

  live(): FlowLive {
    const others = this.sources.nodes().filter((n) => !n.self);
    return {
      elsewhere: (channel) => others.filter((n) => n.services.some((s) => s.channel === channel)).map((n) => n.name),
      health: servicesHealth(this.sources, this.history),
      rateOf: (edge) =>
        edge.sender
          ? this.history.sentRate(edge.sender)
          : edge.counted
            ? this.history.countedRate(edge.counted)
            : undefined,
    };
  }

  /** The graph, its SVG and the live figures it was drawn with. */
  async render(): Promise<{ graph: FlowGraph; svg: Html; live: FlowLive }> {
    const { graph, placed } = this.wiring();
    const live = this.live();
    const queues = new Set(
      this.sources
        .services()
        .filter((s) => s.kind === 'queue')
        .map((s) => s.name),
    );
    return { graph, svg: flowSvg(graph, await placed, live, queues), live };
  }

  /** GET /api/flow: boxes and arrows with health and rates (no coordinates: scripts lay out their own), and the nodes sharing the hive. */
  json(): {
    nodes: Array<FlowGraph['nodes'][number] & { health?: string; state?: string }>;
    edges: Array<FlowGraph['edges'][number] & { rate?: number }>;
    hiveNodes: RosterEntry[];
  } {
    const { graph } = this.wiring();
    const live = this.live();
    return {
      nodes: graph.nodes.map((n) => {
        const h = n.service ? live.health.get(n.service) : undefined;
        if (n.kind === 'channel') return { ...n, detail: channelDetail(n.label, live) };
        return h ? { ...n, health: h.health, state: h.text } : n;
      }),
      edges: graph.edges.map((e) => {
        const rate = live.rateOf(e);
        return rate === undefined ? e : { ...e, rate };
      }),
      hiveNodes: this.sources.nodes(),
    };
  }
}
