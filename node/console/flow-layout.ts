/**
 * The flow laid out by ELK (elkjs, the Eclipse Layout Kernel's layered algorithm: sources left,
 * edges right, crossings minimised) on the server. The wiring does not change while the node runs,
 * so the layout is computed once, with room for the live rate in every edge label; only colours and
 * label texts change per request.
 */
import elkModule from 'elkjs/lib/elk.bundled.js';
import type { ElkEdgeSection, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk.bundled.js';
import type { FlowGraph, FlowNode } from './flow-graph.js';

const NODE_HEIGHT = 46;
/** Left and right padding of a box's lines together. */
export const BOX_PADDING = 20;
/** The widest box: a longer name or second line is cut with an ellipsis (the whole in the box's title). */
const MAX_BOX_WIDTH = 280;
/** A box's name and its second line (and the edge labels): font sizes in px. */
export const NAME_FONT = { size: 13, bold: true } as const;
export const LINE_FONT = { size: 11, bold: false } as const;

/**
 * How wide a line of system-ui sans-serif is at most, in px, from its characters' classes (narrow,
 * wide, capitals, the rest), a little over what browsers draw: the server lays out and cuts lines
 * without a font to measure with, and a count of characters times one width ran capitals and `m`/`w`
 * out of their boxes.
 */
export function textWidth(text: string, font: { size: number; bold: boolean }): number {
  let em = 0;
  for (const c of text) {
    if (/[ijlI.,:;'|!]/.test(c)) em += 0.3;
    else if (/[ frt()\-/]/.test(c)) em += 0.4;
    else if (/[mwMW@]/.test(c)) em += 0.95;
    else if (/[A-Z]/.test(c)) em += 0.74;
    else em += 0.6;
  }
  return em * font.size * (font.bold ? 1.08 : 1);
}

/** The text of an edge label grown by its live rate (` · 1234/s`), which its room is kept for. */
const HEALTH_ROOM = ' · restarting (99 in 15 min)';
const RATE_ROOM = ' · 1234/s';

interface Point {
  x: number;
  y: number;
}

export interface PlacedFlow {
  width: number;
  height: number;
  nodes: Map<string, { x: number; y: number; width: number; height: number }>;
  edges: Map<string, { points: Point[]; label?: { x: number; y: number; width: number; height: number } }>;
}

/** A box wide enough for its name and second line (with room for a service's health), within MAX_BOX_WIDTH. */
function nodeWidth(node: Pick<FlowNode, 'label' | 'detail' | 'kind'>): number {
  const second = node.kind === 'service' ? `${node.detail}${HEALTH_ROOM}` : node.detail;
  return Math.min(
    MAX_BOX_WIDTH,
    Math.max(110, Math.ceil(Math.max(textWidth(node.label, NAME_FONT), textWidth(second, LINE_FONT)) + BOX_PADDING)),
  );
}

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
    children: graph.nodes.map((n) => ({ id: n.id, width: nodeWidth(n), height: NODE_HEIGHT })),
    edges: graph.edges.map((e): ElkExtendedEdge => ({
      id: e.id,
      sources: [e.from],
      targets: [e.to],
      labels: [{ text: e.label, width: textWidth(`${e.label}${RATE_ROOM}`, LINE_FONT), height: 14 }],
    })),
  };
  const placed = await elk.layout(root);
  const nodes = new Map<string, { x: number; y: number; width: number; height: number }>();
  for (const n of placed.children ?? [])
    nodes.set(n.id, { x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0 });
  const edges = new Map<string, PlacedFlow['edges'] extends Map<string, infer V> ? V : never>();
  for (const e of placed.edges ?? []) {
    const points = (e.sections ?? []).flatMap((s: ElkEdgeSection) => [
      s.startPoint,
      ...(s.bendPoints ?? []),
      s.endPoint,
    ]);
    const l = e.labels?.[0];
    edges.set(e.id, {
      points,
      ...(l ? { label: { x: l.x ?? 0, y: l.y ?? 0, width: l.width ?? 0, height: l.height ?? 0 } } : {}),
    });
  }
  return { width: placed.width ?? 0, height: placed.height ?? 0, nodes, edges };
}
