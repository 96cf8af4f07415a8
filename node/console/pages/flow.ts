/**
 * /flow: the hive's wiring as this node sees it, as a picture (flow-svg.ts), a legend, the same arrows as a table (for
 * screen readers, and to copy from), and every node sharing the hive (hive-roster.ts). The page
 * refreshes itself, so rates and colours stay live.
 */
import type { FlowGraph } from '../flow-graph.js';
import type { FlowLive } from '../flow-svg.js';
import { edgeLabel } from '../flow-svg.js';
import type { Html } from '../html.js';
import { html } from '../html.js';
import type { RosterEntry } from '../../hive-roster.js';
import { ROSTER_BUCKET } from '../../hive-roster.js';
import { ago } from './format.js';

export const FLOW_REFRESH_SECONDS = 5;

function nodesTable(nodes: RosterEntry[], hiveKind: string): Html {
  return html`<h2>Nodes on this hive</h2>
${hiveKind === 'nats' ? html`<p class="muted">Every node of the NATS hive writes itself into the hive's KV bucket ${ROSTER_BUCKET} every 5 s; a node not heard from for 15 s is left out.</p>` : html`<p class="muted">The embedded hive: this node is alone on it.</p>`}
<div class="table-wrap" tabindex="0"><table id="hive-nodes"><thead><tr><th scope="col">node</th><th scope="col">host</th><th scope="col" class="num">pid</th><th scope="col">services (channel)</th><th scope="col">console port</th><th scope="col">last heard</th></tr></thead>
<tbody>${nodes.map((n) => html`<tr data-node="${n.name}"><th scope="row">${n.name}${n.self ? html` <span class="muted">(this node)</span>` : ''}</th><td>${n.host}</td><td class="num">${n.pid}</td><td>${n.services.map((s) => `${s.name}${s.channel ? ` (${s.channel})` : ''}`).join(', ')}</td><td>${n.consolePort ?? '—'}</td><td>${ago(n.seenAt)}</td></tr>`)}</tbody></table></div>`;
}

export function flowBody(graph: FlowGraph, svg: Html, live: FlowLive, nodes: RosterEntry[], hiveKind: string): Html {
  const name = new Map(graph.nodes.map((n) => [n.id, n.node ? `${n.label} on ${n.node}` : n.label]));
  return html`<h1>Flow</h1>
<p class="legend"><span><span class="swatch ok"></span>service, ok</span><span><span class="swatch warn"></span>failing or restarting</span><span><span class="swatch bad"></span>stopped</span><span><span class="swatch source"></span>source</span><span><span class="swatch remote"></span>service on another node</span><span><span class="swatch channel"></span>channel with no listener</span></p>
<p class="muted">Arrows carry what their label says; the rate is what the sender sent along that arrow per second over the last 10 s (another node's: over its last reports); an arrow from a source or to an outside server shows what its service counted: requests accepted, syslog messages received or sent, polls, HTTP requests made. Select a service of this node to open it.</p>
<div data-poll="${FLOW_REFRESH_SECONDS * 1000}"><div class="flow" id="flow" tabindex="0" data-live>${svg}</div>
<h2>Arrows</h2>
<div class="table-wrap" tabindex="0"><table id="flow-edges"><thead><tr><th scope="col">from</th><th scope="col">to</th><th scope="col">carries</th></tr></thead>
<tbody id="flow-edges-body" data-live>${graph.edges.map((e) => html`<tr><td>${name.get(e.from)}</td><td>${name.get(e.to)}</td><td>${edgeLabel(e, live)}</td></tr>`)}</tbody></table></div>
<div id="hive-nodes-section" data-live>${nodesTable(nodes, hiveKind)}</div></div>`;
}
