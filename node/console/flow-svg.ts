/**
 * The laid-out flow as SVG, drawn on the server (it shows without JavaScript): services coloured by
 * health and linked to their page, sources and external ends in their own colour, channels nobody
 * on the hive listens on dashed, other nodes' services in their own colour with their node named,
 * every edge labelled with what it carries and the live rate its sender sends along it. The SVG has a title and description; the page lists the same edges as a table.
 */
import type { Html } from './html.js';
import { html } from './html.js';
import type { FlowEdge, FlowGraph, FlowNode } from './flow-graph.js';
import type { PlacedFlow } from './flow-layout.js';
import { BOX_PADDING, LINE_FONT, NAME_FONT, textWidth } from './flow-layout.js';
import type { ServiceHealth } from './health.js';
import { perSecond } from './pages/format.js';

const FILLS: Record<string, { fill: string; stroke: string }> = {
  ok: { fill: '#e6f4ea', stroke: '#1b6e35' },
  warn: { fill: '#fff4e0', stroke: '#8a5300' },
  bad: { fill: '#fde7ea', stroke: '#b00020' },
  source: { fill: '#eef2ff', stroke: '#3949ab' },
  external: { fill: '#f3f3f3', stroke: '#555555' },
  channel: { fill: '#ffffff', stroke: '#555555' },
  remote: { fill: '#f1f8f6', stroke: '#00695c' },
};

/** What the flow shows live: each service's health and each edge's rate. */
export interface FlowLive {
  health: Map<string, ServiceHealth>;
  /** Messages per second the edge's sender sent on its channel, or its counted figure grew (a source's or an outside server's edge); undefined before there is a figure. */
  rateOf(edge: FlowEdge): number | undefined;
  /** The other nodes of the hive whose services listen on a channel (none on the embedded hive). */
  elsewhere(channel: string): string[];
}

/** A channel box's second line: where else on the hive it is served, or that nothing here serves it. */
export function channelDetail(channel: string, live: FlowLive): string {
  const nodes = live.elsewhere(channel);
  if (nodes.length === 0) return 'no listener on this node';
  return cut(`served on ${nodes.join(', ')}`, 26);
}

function serviceHref(node: FlowNode, queues: ReadonlySet<string>): string | undefined {
  if (node.service === undefined) return undefined;
  return queues.has(node.service)
    ? `/queues/${encodeURIComponent(node.service)}`
    : `/services/${encodeURIComponent(node.service)}`;
}

/**
 * A line of a box cut to its width: the layout keeps room for a service's health (flow-layout.ts) but
 * caps a box's width, so a very long name, node or health text would run out of it. The whole line
 * stays in the box's title and its link's label.
 */
function fitted(line: string, width: number, font: { size: number; bold: boolean }): string {
  const room = width - BOX_PADDING;
  if (textWidth(line, font) <= room) return line;
  let fits = line.length - 1;
  while (fits > 1 && textWidth(`${line.slice(0, fits)}…`, font) > room) fits--;
  return `${line.slice(0, fits)}…`;
}

/** A line of at most `fits` characters, its end replaced by an ellipsis when it is longer. */
function cut(line: string, fits: number): string {
  return line.length <= fits ? line : `${line.slice(0, Math.max(1, fits - 1))}…`;
}

export function edgeLabel(e: FlowEdge, live: FlowLive): string {
  const rate = live.rateOf(e);
  return rate === undefined ? e.label : `${e.label} · ${perSecond(rate)}`;
}

function nodeSvg(
  n: FlowNode,
  at: { x: number; y: number; width: number; height: number },
  live: FlowLive,
  queues: ReadonlySet<string>,
): Html {
  const health = n.service ? live.health.get(n.service) : undefined;
  const colours = FILLS[health?.health ?? n.kind] ?? FILLS.external!;
  const detail = health
    ? `${n.detail} · ${health.text}`
    : n.kind === 'channel'
      ? channelDetail(n.label, live)
      : n.detail;
  const body = html`<g class="flow-node" data-node="${n.id}" data-health="${health?.health ?? ''}"><title>${n.label} (${detail})</title>
<rect x="${at.x}" y="${at.y}" width="${at.width}" height="${at.height}" rx="6" fill="${colours.fill}" stroke="${colours.stroke}" stroke-width="${n.kind === 'service' || n.kind === 'remote' ? 2 : 1.2}"${n.kind === 'channel' ? html` stroke-dasharray="5 3"` : n.kind === 'remote' ? html` stroke-dasharray="8 2"` : ''}/>
<text x="${at.x + at.width / 2}" y="${at.y + 19}" text-anchor="middle" font-size="13" font-weight="600" fill="#1a1a1a">${fitted(n.label, at.width, NAME_FONT)}</text>
<text x="${at.x + at.width / 2}" y="${at.y + 36}" text-anchor="middle" font-size="11" fill="#3a3a3a">${fitted(detail, at.width, LINE_FONT)}</text></g>`;
  const href = serviceHref(n, queues);
  return href ? html`<a href="${href}" aria-label="${n.label}: ${detail}">${body}</a>` : body;
}

export function flowSvg(graph: FlowGraph, placed: PlacedFlow, live: FlowLive, queues: ReadonlySet<string>): Html {
  const pad = 12;
  const width = Math.ceil(placed.width + 2 * pad);
  const height = Math.ceil(placed.height + 2 * pad);
  const edges = graph.edges.map((e) => {
    const at = placed.edges.get(e.id);
    if (!at || at.points.length < 2) return html``;
    const d = at.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' ');
    const label = edgeLabel(e, live);
    return html`<g class="flow-edge" data-edge="${e.from}->${e.to}" data-label="${e.label}"><path d="${d}" fill="none" stroke="#555" stroke-width="1.4"${e.secondary ? html` stroke-dasharray="4 3"` : ''} marker-end="url(#arrow)"/>
${at.label ? html`<text x="${at.label.x}" y="${at.label.y + 11}" font-size="11" fill="#1a1a1a">${label}</text>` : ''}</g>`;
  });
  const nodes = graph.nodes.map((n) => {
    const at = placed.nodes.get(n.id);
    return at ? nodeSvg(n, at, live, queues) : html``;
  });
  return html`<svg xmlns="http://www.w3.org/2000/svg" viewBox="${-pad} ${-pad} ${width} ${height}" width="${width}" height="${height}" role="group" aria-labelledby="flow-title" aria-describedby="flow-desc" font-family="system-ui, sans-serif">
<title id="flow-title">The node's flow</title><desc id="flow-desc">${graph.nodes.length} boxes and ${graph.edges.length} arrows; the table below lists every arrow.</desc>
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#555"/></marker></defs>
${edges}${nodes}</svg>`;
}
