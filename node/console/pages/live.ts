/**
 * / (Live): the node at a glance — a strip of totals (glance.ts), the queues with their entries per
 * state and rates in and out, each service with its health, rate and figures, beside per-service
 * charts of the last 15 minutes (requests/s, errors/s, p99), queue depth and restarts; then the actor
 * tree (folded) and the latest journal lines. Each section has an id: the stream (/api/live/stream)
 * sends new markup for them, and without the script the page refreshes itself.
 */
import type { NodeStatus } from '../../dashboard/status.js';
import type { ActorNode } from '../../dashboard/status.js';
import { figureTexts } from '../../dashboard/figures.js';
import type { Html } from '../html.js';
import { html } from '../html.js';
import { bytes, perSecond } from './format.js';
import type { ServiceHealth } from '../health.js';
import type { GlanceInput, QueueGlance } from './glance.js';
import { glanceStrip, queueRows, queueTableFrame } from './glance.js';
import type { JournalEntry } from '../../../supervisors/journal.js';
import { journalDetails } from './journal.js';

export const LIVE_REFRESH_SECONDS = 2;

/** Rows of an actor and its children, indented by depth (classes, not inline styles: the console's CSP allows no inline style). */
export function actorRows(a: ActorNode, depth: number): Html {
  return html`<tr data-actor="${a.path}"><td class="depth-${Math.min(depth, 8)}">${a.name}</td><td class="num">${a.mailbox}</td>
<td class="num restarts${a.restarts > 0 ? ' bad' : ''}">${a.restarts}</td><td>${a.stopped ? 'stopped' : 'running'}</td>
<td>${a.lastCrash ? `${a.lastCrash.time} ${a.lastCrash.class}: ${a.lastCrash.message}` : ''}</td></tr>${a.children.map((c) => actorRows(c, depth + 1))}`;
}

/** The latest 10 journal lines, newest first. */
export function journalRows(entries: readonly JournalEntry[]): Html {
  return html`${entries
    .slice(-10)
    .reverse()
    .map((e) => html`<tr><td>${e.time}</td><td>${e.event}</td><td>${e.path}</td><td>${journalDetails(e)}</td></tr>`)}`;
}

/** What the live page is drawn from besides the status: per service its health and requests per second now, the queues, and the strip. */
export interface LiveInput {
  status: NodeStatus;
  charts: Html;
  health: ReadonlyMap<string, ServiceHealth>;
  /** Requests per second over about the last 10 s (a gateway's: accepted), undefined before two samples. */
  rateOf(service: string): number | undefined;
  queues: readonly QueueGlance[];
  glance: GlanceInput;
}

const serviceHref = (kind: string, name: string): string =>
  `/${kind === 'queue' ? 'queues' : 'services'}/${encodeURIComponent(name)}`;

/** The sections the stream replaces, by element id. */
export function liveSections(input: LiveInput): Record<string, Html> {
  const { status } = input;
  const h = status.hive;
  const restarts = status.actors.reduce(function total(n: number, a: ActorNode): number {
    return a.children.reduce(total, n + a.restarts);
  }, 0);
  return {
    glance: glanceStrip(input.glance),
    charts: input.charts,
    summary: html`up ${status.node.uptimeSeconds} s · memory ${bytes(status.node.rssBytes)} · hive ${String(h.kind)} <span class="${h.connected ? 'ok' : 'bad'}">${h.connected ? 'connected' : 'disconnected'}</span> · calls ${String(h.calls)} · failures ${String(h.failures)} · dropped emits ${String(h.dropped)}${status.source ? html` · node file <span title="${status.source.hash}">${status.source.hash.slice(0, 12)}</span> applied ${status.source.appliedAt}${status.source.reloads ? ` (${status.source.reloads} reload${status.source.reloads === 1 ? '' : 's'})` : ''}` : ''}`,
    'queues-glance-body': queueRows(input.queues, false),
    'services-body': html`${status.services.map((s) => {
      const health = input.health.get(s.name);
      const rate = input.rateOf(s.name);
      return html`<tr data-service="${s.name}"><th scope="row"><a href="${serviceHref(s.kind, s.name)}">${s.name}</a></th><td>${s.kind}</td><td class="${health?.health === 'ok' ? 'ok' : health?.health === 'bad' ? 'bad' : 'warn'}">${health?.text ?? ''}</td><td class="num">${rate === undefined ? '—' : perSecond(rate)}</td><td class="figures">${figureTexts(s.status).map((f) => html`<div>${f}</div>`)}</td></tr>`;
    })}`,
    'actors-summary': html`Actor tree (${restarts} restart${restarts === 1 ? '' : 's'} since start)`,
    'actors-body': html`${status.actors.map((a) => actorRows(a, 0))}`,
    'journal-body': journalRows(status.journal),
  };
}

/**
 * The page: the strip, then the queues and services (left) beside the charts (right) on a wide
 * window, the actor tree folded (it is long; its restarts are in its summary), the latest journal
 * lines last.
 */
export function liveBody(status: NodeStatus, sections: Record<string, Html>): Html {
  return html`<div data-stream="/api/live/stream">
<h1>Live — ${status.node.name} <span class="muted">(pid ${status.node.pid})</span></h1>
<ul class="strip" id="glance" aria-label="At a glance">${sections.glance}</ul>
<p id="summary" class="muted">${sections.summary}</p>
${sections['queues-glance-body']!.text === '' ? '' : html`<h2>Queues</h2>${queueTableFrame(sections['queues-glance-body']!)}`}
<div class="live-grid"><div class="live-main">
<h2>Services</h2>
<div class="table-wrap" tabindex="0"><table id="services"><thead><tr><th scope="col">service</th><th scope="col">kind</th><th scope="col">health</th><th scope="col" class="num">requests</th><th scope="col">figures</th></tr></thead><tbody id="services-body">${sections['services-body']}</tbody></table></div>
</div><div class="live-side">
<h2>Last 15 minutes</h2>
<div id="charts">${sections.charts}</div>
</div></div>
<details class="actors"><summary id="actors-summary">${sections['actors-summary']}</summary>
<div class="table-wrap" tabindex="0"><table id="actors"><thead><tr><th scope="col">actor</th><th scope="col" class="num">mailbox</th><th scope="col" class="num">restarts</th><th scope="col">state</th><th scope="col">last crash</th></tr></thead><tbody id="actors-body">${sections['actors-body']}</tbody></table></div></details>
<h2>Latest journal lines <a href="/journal" class="muted">(all, with filters)</a></h2>
<div class="table-wrap" tabindex="0"><table id="journal"><thead><tr><th scope="col">time</th><th scope="col">event</th><th scope="col">actor</th><th scope="col">details</th></tr></thead><tbody id="journal-body">${sections['journal-body']}</tbody></table></div>
</div>`;
}
