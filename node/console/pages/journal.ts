/**
 * /journal: crashes, restarts, supervision decisions, operators' actions and stores salvaged at start, newest first, filtered
 * by service, event and time (a form that works without the script).
 */
import type { JournalEntry } from '../../../supervisors/journal.js';
import { JournalEvent } from '../../../supervisors/journal.js';
import type { Html } from '../html.js';
import { html } from '../html.js';

const SHOWN = 500;

/** What a journal line says beyond its time, event and actor; the trace of the message it was about links to that trace (the Traces page says when the ring no longer holds it). */
export function journalDetails(e: JournalEntry): Html {
  return html`${e.error ? html`<span class="bad">${e.error.class}</span>: ${e.error.message}` : ''}${e.cause ? html`<br><span class="muted">while handling</span> <code class="cause">${e.cause}</code>` : ''}${e.decision ? ` decision ${e.decision}` : ''}${e.delayMs !== undefined ? ` after ${e.delayMs} ms` : ''}${e.restarts !== undefined ? ` (restart ${e.restarts} in the window)` : ''}${e.user ? html`<strong>${e.user}</strong>: ${e.action ?? ''}` : (e.action ?? '')}${e.trace_id ? html` <a class="trace" href="/traces?id=${encodeURIComponent(e.trace_id)}" aria-label="trace ${e.trace_id}">trace <code>${e.trace_id.slice(0, 8)}…</code></a>` : ''}`;
}

export function journalBody(entries: JournalEntry[], params: URLSearchParams, services: string[]): Html {
  const v = (n: string): string => params.get(n) ?? '';
  return html`<h1>Journal</h1>
<form class="search" method="get" action="/journal" role="search" aria-label="Filter the journal">
<label>Service<select name="service"><option value="">every service</option>${services.map((s) => html`<option${v('service') === s ? html` selected` : ''}>${s}</option>`)}</select></label>
<label>Event<select name="event"><option value="">every event</option>${Object.values(JournalEvent).map((e) => html`<option${v('event') === e ? html` selected` : ''}>${e}</option>`)}</select></label>
<label>Since<input name="since" value="${v('since')}" size="20" placeholder="15m or 2026-01-02T15:04:05Z"></label>
<label>Until<input name="until" value="${v('until')}" size="20" placeholder="time or duration ago"></label>
<button type="submit">Filter</button> <a href="/journal">clear</a></form>
<p id="journal-total">${entries.length} ${entries.length === 1 ? 'line' : 'lines'}${entries.length > SHOWN ? `, the newest ${SHOWN} shown` : ''}</p>
<div class="table-wrap" tabindex="0"><table id="journal-lines"><thead><tr><th scope="col">time</th><th scope="col">event</th><th scope="col">actor</th><th scope="col">details</th></tr></thead>
<tbody>${entries.slice(0, SHOWN).map((e) => html`<tr data-event="${e.event}"><td>${e.time}</td><td class="${e.event === 'crash' || e.event === 'escalation' ? 'bad' : ''}">${e.event}</td><td>${e.path}</td><td>${journalDetails(e)}</td></tr>`)}</tbody></table></div>`;
}
