/**
 * / (Live): the node at a glance — per-service charts of the last 15 minutes (requests/s, errors/s,
 * p99), queue depth, actor restarts, then each service with its figures in words, the actor tree
 * and the latest journal lines. Each section has an id: the stream (/api/live/stream)
 * sends new markup for them, and without the script the page refreshes itself.
 */
import type { NodeStatus } from '../../dashboard/status.js';
import type { ActorNode } from '../../dashboard/status.js';
import { figureTexts } from '../../dashboard/figures.js';
import type { Html } from '../html.js';
import { html } from '../html.js';
import { bytes } from './format.js';
import type { JournalEntry } from '../../../supervisors/journal.js';
import { journalDetails } from './journal.js';

export const LIVE_REFRESH_SECONDS = 2;

/** Rows of an actor and its children, indented by depth (classes, not inline styles: the console's CSP allows no inline style). */
export function actorRows(a: ActorNode, depth: number): Html {
  return html`<tr data-actor="${a.path}"><td class="depth-${Math.min(depth, 8)}">${a.name}</td><td class="num">${a.mailbox}</td>
<td class="num restarts${a.restarts > 0 ? ' bad' : ''}">${a.restarts}</td><td>${a.stopped ? 'stopped' : 'running'}</td>
<td>${a.lastCrash ? `${a.lastCrash.time} ${a.lastCrash.class}: ${a.lastCrash.message}` : ''}</td></tr>${a.children.map((c) => actorRows(c, depth + 1))}`;
}

/** The latest 20 journal lines, newest first. */
export function journalRows(entries: readonly JournalEntry[]): Html {
  return html`${entries
    .slice(-20)
    .reverse()
    .map((e) => html`<tr><td>${e.time}</td><td>${e.event}</td><td>${e.path}</td><td>${journalDetails(e)}</td></tr>`)}`;
}

/** The sections the stream replaces, by element id. */
export function liveSections(status: NodeStatus, charts: Html): Record<string, Html> {
  const h = status.hive;
  return {
    charts,
    summary: html`up ${status.node.uptimeSeconds} s · memory ${bytes(status.node.rssBytes)} · hive ${String(h.kind)} <span class="${h.connected ? 'ok' : 'bad'}">${h.connected ? 'connected' : 'disconnected'}</span> · calls ${String(h.calls)} · failures ${String(h.failures)} · dropped emits ${String(h.dropped)}`,
    'services-body': html`${status.services.map(
      (s) => html`<tr data-service="${s.name}"><th scope="row">${s.name}</th><td>${s.kind}</td><td>${s.release}</td><td>${s.channel}</td><td class="figures">${figureTexts(s.status).map((f) => html`<div>${f}</div>`)}</td></tr>`,
    )}`,
    'actors-body': html`${status.actors.map((a) => actorRows(a, 0))}`,
    'journal-body': journalRows(status.journal),
  };
}

export function liveBody(status: NodeStatus, sections: Record<string, Html>): Html {
  return html`<div data-stream="/api/live/stream">
<h1>Live — ${status.node.name} <span class="muted">(pid ${status.node.pid})</span></h1>
<p id="summary">${sections.summary}</p>
<h2>Last 15 minutes</h2>
<div id="charts">${sections.charts}</div>
<h2>Services</h2>
<div class="table-wrap" tabindex="0"><table id="services"><thead><tr><th scope="col">service</th><th scope="col">kind</th><th scope="col">release</th><th scope="col">channel</th><th scope="col">figures</th></tr></thead><tbody id="services-body">${sections['services-body']}</tbody></table></div>
<h2>Actor tree</h2>
<div class="table-wrap" tabindex="0"><table id="actors"><thead><tr><th scope="col">actor</th><th scope="col" class="num">mailbox</th><th scope="col" class="num">restarts</th><th scope="col">state</th><th scope="col">last crash</th></tr></thead><tbody id="actors-body">${sections['actors-body']}</tbody></table></div>
<h2>Latest journal lines <a href="/journal" class="muted">(all, with filters)</a></h2>
<div class="table-wrap" tabindex="0"><table id="journal"><thead><tr><th scope="col">time</th><th scope="col">event</th><th scope="col">actor</th><th scope="col">details</th></tr></thead><tbody id="journal-body">${sections['journal-body']}</tbody></table></div>
</div>`;
}
