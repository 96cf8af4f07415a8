/**
 * The flow laid out by ELK (elkjs, the Eclipse Layout Kernel's layered algorithm: sources left,
 * edges right, crossings minimised) on the server. The wiring does not change while the node runs,
 * so the layout is computed once, with room for the live rate in every edge label; only colours and
 * label texts change per request.
 */
import elkModule from 'elkjs/lib/elk.bundled.js';
import type { ElkEdgeSection, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk.bundled.js';
import type { FlowGraph } from './flow-graph.js';

export const NODE_HEIGHT = 46;
const CHAR_WIDTH = 7.6;
export const LABEL_CHAR_WIDTH = 6.4;
/** What an edge label gains when it shows a rate: ` · 1234/s`. */
export const RATE_ROOM = ' · 1234/s'.length;

export interface Point {
  x: number;
  y: number;
}

export interface PlacedFlow {
  width: number;
  height: number;
  nodes: Map<string, { x: number; y: number; width: number; height: number }>;
  edges: Map<string, { points: Point[]; label?: { x: number; y: number; width: number; height: number } }>;
}

export const nodeWidth = (label: string, detail: string): number => Math.max(110, Math.ceil(Math.max(label.length * CHAR_WIDTH, detail.length * 6.4 + 50)) + 24);

export async function layoutFlow(graph: FlowGraph): Promise<PlacedFlow> {
  // a CommonJS module: Node's import gives module.exports, whose `default` is the constructor too
  const elk = new elkModule.default();
  const root: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '70',
      'elk.spacing.nodeNode': '22',
      'elk.spacing.edgeLabel': '3',
      'elk.layered.edgeLabels.sideSelection': 'ALWAYS_UP',
      'elk.edgeLabels.inline': 'false',
    },
    children: graph.nodes.map((n) => ({ id: n.id, width: nodeWidth(n.label, n.detail), height: NODE_HEIGHT })),
    edges: graph.edges.map((e): ElkExtendedEdge => ({ id: e.id, sources: [e.from], targets: [e.to], labels: [{ text: e.label, width: (e.label.length + RATE_ROOM) * LABEL_CHAR_WIDTH, height: 14 }] })),
  };
  const placed = await elk.layout(root);
  const nodes = new Map<string, { x: number; y: number; width: number; height: number }>();
  for (const n of placed.children ?? []) nodes.set(n.id, { x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0 });
  const edges = new Map<string, PlacedFlow['edges'] extends Map<string, infer V> ? V : never>();
  for (const e of placed.edges ?? []) {
    const points = (e.sections ?? []).flatMap((s: ElkEdgeSection) => [s.startPoint, ...(s.bendPoints ?? []), s.endPoint]);
    const l = e.labels?.[0];
    edges.set(e.id, { points, ...(l ? { label: { x: l.x ?? 0, y: l.y ?? 0, width: l.width ?? 0, height: l.height ?? 0 } } : {}) });
  }
  return { width: placed.width ?? 0, height: placed.height ?? 0, nodes, edges };
}
