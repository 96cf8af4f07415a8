/**
 * /services/<name>: one service — its kind, channel and health, its figures in words, its actors
 * with restarts and last crashes, and its latest journal lines. The flow links every service here
 * (queues to their own page).
 */
import { figureTexts } from '../../dashboard/figures.js';
import type { ActorNode, NodeStatus } from '../../dashboard/status.js';
import type { ServiceHealth } from '../health.js';
import type { Html } from '../html.js';
import { html } from '../html.js';
import { actorRows, journalRows } from './live.js';

function findActor(actors: ActorNode[], path: string): ActorNode | undefined {
  for (const a of actors) {
    if (a.path === path) return a;
    const inner = findActor(a.children, path);
    if (inner) return inner;
  }
  return undefined;
}

export function serviceBody(status: NodeStatus, name: string, health: ServiceHealth | undefined, charts: Html): Html {
  const s = status.services.find((x) => x.name === name)!;
  const root = findActor(status.actors, `/node/${name}`);
  const journal = status.journal.filter((e) => e.path === `/node/${name}` || e.path.startsWith(`/node/${name}/`));
  return html`<div data-poll="2000"><h1>Service ${name} <span class="muted">(${s.kind} ${s.release})</span></h1>
<p>${s.channel ? html`Listens on <code>${s.channel}</code> · ` : ''}health <span class="${health?.health === 'ok' ? 'ok' : 'bad'}" id="service-health" data-live>${health?.text ?? 'unknown'}</span></p>
<div id="service-charts" data-live>${charts}</div>
<h2>Figures</h2>
<ul id="service-figures" data-live>${figureTexts(s.status).map((f) => html`<li>${f}</li>`)}</ul>
<h2>Actors</h2>
<div class="table-wrap" tabindex="0"><table id="actors"><thead><tr><th scope="col">actor</th><th scope="col" class="num">mailbox</th><th scope="col" class="num">restarts</th><th scope="col">state</th><th scope="col">last crash</th></tr></thead><tbody id="actors-body" data-live>${root ? actorRows(root, 0) : ''}</tbody></table></div>
<h2>Latest journal lines <a href="/journal?service=${encodeURIComponent(name)}" class="muted">(all)</a></h2>
<div class="table-wrap" tabindex="0"><table id="journal"><thead><tr><th scope="col">time</th><th scope="col">event</th><th scope="col">actor</th><th scope="col">details</th></tr></thead><tbody id="journal-body" data-live>${journalRows(journal)}</tbody></table></div></div>`;
}
