/**
 * /flow: the node's wiring as a picture (flow-svg.ts), a legend, and the same arrows as a table
 * (for screen readers, and to copy from). The page refreshes itself, so rates and colours stay live.
 */
import type { FlowGraph } from '../flow-graph.js';
import type { FlowLive } from '../flow-svg.js';
import { edgeLabel } from '../flow-svg.js';
import type { Html } from '../html.js';
import { html } from '../html.js';

export const FLOW_REFRESH_SECONDS = 5;

export function flowBody(graph: FlowGraph, svg: Html, live: FlowLive): Html {
  const name = new Map(graph.nodes.map((n) => [n.id, n.label]));
  return html`<h1>Flow</h1>
<p class="legend"><span><span class="swatch ok"></span>service, ok</span><span><span class="swatch warn"></span>failing or restarting</span><span><span class="swatch bad"></span>stopped</span><span><span class="swatch source"></span>source</span><span><span class="swatch channel"></span>channel with no listener here</span></p>
<p class="muted">Arrows carry what their label says; the rate is what arrives on that channel now. Select a service to open it.</p>
<div data-poll="${FLOW_REFRESH_SECONDS * 1000}"><div class="flow" id="flow" tabindex="0" data-live>${svg}</div>
<h2>Arrows</h2>
<div class="table-wrap" tabindex="0"><table id="flow-edges"><thead><tr><th scope="col">from</th><th scope="col">to</th><th scope="col">carries</th></tr></thead>
<tbody id="flow-edges-body" data-live>${graph.edges.map((e) => html`<tr><td>${name.get(e.from)}</td><td>${name.get(e.to)}</td><td>${edgeLabel(e, live)}</td></tr>`)}</tbody></table></div></div>`;
}
