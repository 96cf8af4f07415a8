/**
 * /queues: every queue of the node with its state counts; /queues/<name>: its entries by state
 * (tabs), searched by key, dead-letter reason, age and a Data field's value, a page at a time, with
 * the queue's actions (pause/resume, step, replay and purge of the dead set, run a schedule now) as
 * forms that post to the JSON API (which answers a form with a redirect back here).
 */
import type { Html } from '../html.js';
import { html } from '../html.js';
import type { ActionButton, PageContext } from '../layout.js';
import { formFields, postButton } from '../layout.js';
import type { EntryPage, EntrySearch, EntryView, QueueSummary, ScheduleView } from '../queue-reads.js';
import { ENTRY_STATES } from '../queue-reads.js';
import { ago, count, perSecond, valuesText } from './format.js';
import type { QueueGlance } from './glance.js';
import { queueRows, queueTable } from './glance.js';
import type { BreakerView } from '../../../actors/queue/breaker.js';
import { breakersSection } from './breakers.js';

export function queuesBody(queues: ReadonlyArray<QueueSummary & Pick<QueueGlance, 'rates'>>): Html {
  return html`<h1>Queues</h1>
${queues.length === 0 ? html`<p>This node runs no queue.</p>` : ''}
${queueTable(queueRows(queues, true), { id: 'queues', wiring: true, caption: "Entries per state, and per second in and out; a queue's name opens its entries." })}`;
}

/** An action form: a button posting one queue command (with hidden controls); nothing on a read-only console. */
export function actionForm(ctx: PageContext, queue: string, action: string, button: ActionButton): Html {
  return ctx.actionsEnabled ? postButton(ctx, `/api/queues/${encodeURIComponent(queue)}/${action}`, button) : html``;
}

/** The bulk actions of a state's list: action, button, confirmation, whether it destroys. */
const BULK: Record<string, Array<[string, string, string, boolean]>> = {
  dead: [
    ['replay', 'Replay selected', 'Replay the selected dead entries?', false],
    ['purge', 'Purge selected', 'Remove the selected dead entries for good?', true],
  ],
  done: [['purge', 'Purge selected', 'Remove the selected delivered entries for good?', true]],
  waiting: [['delete', 'Delete selected', 'Delete the selected entries?', true]],
  scheduled: [
    ['step', 'Deliver selected now', '', false],
    ['delete', 'Delete selected', 'Delete the selected entries?', true],
  ],
  retrying: [
    ['step', 'Deliver selected now', '', false],
    ['delete', 'Delete selected', 'Delete the selected entries?', true],
  ],
};

/** What a failed entry's last attempt answered (the dead-letter reason only says how many attempts there were). */
function lastError(e: EntryView): string {
  const last = e.history.at(-1);
  return last && last.code >= 300 ? `${last.code} ${last.message}` : '';
}

/**
 * The entries of the page, with a checkbox each and the state's bulk actions when the console takes
 * actions: one form, each button posting the checked keys to its action (the queue's commands,
 * through the same checks as every action). "Select all" needs the script; the boxes do not.
 */
function entriesTable(ctx: PageContext, queue: string, found: EntryPage): Html {
  const s = found.search;
  const base = `/queues/${encodeURIComponent(queue)}`;
  const api = `/api/queues/${encodeURIComponent(queue)}`;
  const bulk = ctx.actionsEnabled && found.entries.length > 0 ? (BULK[s.state] ?? []) : [];
  const failed = s.state === 'dead' || s.state === 'retrying';
  // a queue whose entries all have the default priority shows no priority column
  const prioritized = found.entries.some((e) => e.priority !== 0);
  const table = html`<div class="table-wrap" tabindex="0"><table id="entries"><thead><tr>${bulk.length ? html`<th scope="col" class="select"><input type="checkbox" id="select-all" aria-label="Select every entry of this page" data-select-all="entry-key" hidden></th>` : ''}<th scope="col">key</th><th scope="col">channel</th>${prioritized ? html`<th scope="col" class="num">priority</th>` : ''}<th scope="col" class="num">attempts</th><th scope="col">added</th><th scope="col">${s.state === 'dead' ? 'reason' : s.state === 'done' ? 'delivered' : 'due'}</th>${failed ? html`<th scope="col">last error</th>` : ''}<th scope="col">Data</th></tr></thead>
<tbody>${found.entries.map(
    (
      e,
    ) => html`<tr data-key="${e.key}" data-state="${e.state}">${bulk.length ? html`<td class="select"><input type="checkbox" name="key" value="${e.key}" class="entry-key" aria-label="Select entry ${e.key}"></td>` : ''}<td><a href="${base}/entries/${encodeURIComponent(e.key)}"><code>${e.key}</code></a></td><td>${e.channel}</td>${prioritized ? html`<td class="num">${e.priority}</td>` : ''}<td class="num">${e.attempts}</td><td title="${e.created}">${ago(e.created)}</td>
<td>${e.state === 'dead' ? e.reason : e.state === 'done' ? ago(e.ended) : ago(e.due)}</td>${failed ? html`<td class="last-error bad">${lastError(e)}</td>` : ''}<td><code>${valuesText(e.data)}</code></td></tr>`,
  )}</tbody></table></div>`;
  if (!bulk.length) return table;
  // replay and purge of kept entries name their state, as the entry page's do; delete and step take the key alone
  const state =
    s.state === 'dead' || s.state === 'done' ? html`<input type="hidden" name="state" value="${s.state}">` : '';
  return html`<form method="post" action="${api}/${bulk[0]![0]}" id="bulk-form" aria-label="Selected entries">${formFields(ctx)}${state}
<div class="bulk" role="group" aria-label="Actions on the selected entries">${bulk.map(([action, label, confirm, danger]) => html`<button type="submit" formaction="${api}/${action}" data-action="${action}"${confirm ? html` data-confirm="${confirm}"` : ''}${danger ? html` class="danger"` : ''}>${label}</button>`)}<span class="muted">Check entries of this page, then act on them all.</span></div>
${table}</form>`;
}

function searchQuery(s: EntrySearch, page: number): string {
  const q = new URLSearchParams({ state: s.state });
  for (const [k, v] of [
    ['key', s.key],
    ['reason', s.reason],
    ['field', s.field],
    ['value', s.value],
    ['older_than', s.olderThan],
    ['newer_than', s.newerThan],
  ] as const)
    if (v !== undefined) q.set(k, v);
  if (page > 1) q.set('page', String(page));
  return q.toString();
}

function filterControls(s: EntrySearch): Record<string, string> {
  const c: Record<string, string> = { state: s.state };
  if (s.reason !== undefined) Object.assign(c, { groupby: 'deadletter_reason', list: s.reason });
  else if (s.field !== undefined) Object.assign(c, { groupby: s.field, list: s.value ?? '' });
  if (s.olderThan !== undefined) c.older_than = s.olderThan;
  if (s.newerThan !== undefined) c.newer_than = s.newerThan;
  return c;
}

/** A queue delivering in batches (README, Batches): its BatchSize and BatchWindow, and what its batches carried. */
function batchesLine(b: QueueSummary['batches']): Html {
  if (!b) return html``;
  const wait =
    b.windowMs > 0
      ? `a batch not full waits up to ${b.windowMs} ms for more`
      : 'a batch not full goes when a delivery can start';
  const mean = b.deliveries > 0 ? ` (${(b.entries / b.deliveries).toFixed(1)} a batch)` : '';
  return html`<p id="queue-batches">Delivers in batches of up to ${count(b.size)} entries per channel (and group): ${wait} · ${count(b.deliveries)} batch deliveries since start carried ${count(b.entries)} entries${mean} · ${count(b.gathering)} gathering now</p>`;
}

/** What a queue's page shows beside its summary and its page of entries: its schedules, the dead-letter reasons (dead tab) and its breakers. */
export interface QueueExtras {
  schedules: ScheduleView[];
  reasons: Array<{ reason: string; count: number }>;
  breakers?: readonly BreakerView[];
}

export function queueBody(
  ctx: PageContext,
  q: QueueSummary & Pick<QueueGlance, 'rates'>,
  found: EntryPage,
  extras: QueueExtras,
): Html {
  const { schedules, reasons, breakers = [] } = extras;
  const s = found.search;
  const base = `/queues/${encodeURIComponent(q.name)}`;
  const filtered =
    s.reason !== undefined || s.field !== undefined || s.olderThan !== undefined || s.newerThan !== undefined;
  return html`<h1>Queue ${q.name}</h1>
<p>Listens on <code>${q.channel}</code>, delivers to <code>${q.target}</code> unless an entry names its channel · <span class="${q.status === 'paused' ? 'warn' : 'ok'}" id="queue-status">${q.status}</span> · ${count(q.counts.waiting + q.counts.scheduled + q.counts.retrying)} live entries · <span id="queue-rates">in ${q.rates.in === undefined ? '—' : perSecond(q.rates.in)}, out ${q.rates.out === undefined ? '—' : perSecond(q.rates.out)}</span></p>
${batchesLine(q.batches)}
<div class="actions">${q.status === 'paused' ? actionForm(ctx, q.name, 'resume', { label: 'Resume' }) : actionForm(ctx, q.name, 'pause', { label: 'Pause' })}
${actionForm(ctx, q.name, 'step', { label: 'Step (deliver the next entry now)' })}
${s.state === 'dead' && found.total > 0 ? actionForm(ctx, q.name, 'replay', { label: `Replay ${filtered ? 'these' : 'all'} ${count(found.total)} dead`, controls: filterControls(s), confirm: `Replay ${count(found.total)} dead entries?` }) : ''}
${(s.state === 'dead' || s.state === 'done') && found.total > 0 ? actionForm(ctx, q.name, 'purge', { label: `Purge ${filtered ? 'these' : 'all'} ${count(found.total)} ${s.state}`, controls: filterControls(s), confirm: `Remove ${count(found.total)} ${s.state} entries for good?`, danger: true }) : ''}</div>
<nav aria-label="Entry states"><ul class="tabs">${ENTRY_STATES.map((st) => html`<li><a href="${base}?state=${st}"${st === s.state ? html` aria-current="page"` : ''}>${st} (${count(q.counts[st])})</a></li>`)}</ul></nav>
<form class="search" method="get" action="${base}" role="search" aria-label="Search entries">
<input type="hidden" name="state" value="${s.state}">
<label>Key<input name="key" value="${s.key ?? ''}" size="24"></label>
<label>Dead-letter reason<input name="reason" value="${s.reason ?? ''}" size="18"></label>
<label>Data field<input name="field" value="${s.field ?? ''}" size="10"></label>
<label>has value<input name="value" value="${s.value ?? ''}" size="10"></label>
<label>Older than<input name="older_than" value="${s.olderThan ?? ''}" size="6" placeholder="1h"></label>
<label>Newer than<input name="newer_than" value="${s.newerThan ?? ''}" size="6" placeholder="10m"></label>
<button type="submit">Search</button> <a href="${base}?state=${s.state}">clear</a></form>
${reasons.length ? html`<p id="dead-reasons">Dead-letter reasons: ${reasons.map((r, i) => html`${i ? ' · ' : ''}<a href="${base}?state=dead&amp;reason=${encodeURIComponent(r.reason)}">${r.reason}</a> (${count(r.count)})`)}</p>` : ''}
<p id="entries-total">${count(found.total)} ${s.state} ${found.total === 1 ? 'entry' : 'entries'}${filtered || s.key ? ' match' : ''}${found.pages > 1 ? ` · page ${s.page} of ${found.pages}` : ''}</p>
${entriesTable(ctx, q.name, found)}
${found.pages > 1 ? html`<nav aria-label="Pages" class="actions">${s.page > 1 ? html`<a href="${base}?${searchQuery(s, s.page - 1)}" rel="prev">← previous</a>` : ''} ${s.page < found.pages ? html`<a href="${base}?${searchQuery(s, s.page + 1)}" rel="next">next →</a>` : ''}</nav>` : ''}
${breakersSection(breakers, (action, button) => actionForm(ctx, q.name, action, button))}
<h2>Schedules</h2>
${
  schedules.length === 0
    ? html`<p>No schedules.</p>`
    : html`<div class="table-wrap" tabindex="0"><table id="schedules"><thead><tr><th scope="col">name</th><th scope="col">cron</th><th scope="col">zone</th><th scope="col">next</th><th scope="col">last fired</th><th scope="col" class="num">fired</th><th scope="col"><span class="muted">action</span></th></tr></thead>
<tbody>${schedules.map((sc) => html`<tr data-schedule="${sc.name}"><td>${sc.name}</td><td><code>${sc.cron}</code></td><td>${sc.tz}</td><td>${sc.next}</td><td>${sc.last_fired ? ago(sc.last_fired) : 'never'}</td><td class="num">${count(sc.fired)}</td><td>${actionForm(ctx, q.name, 'run', { label: 'Run now', controls: { schedule_name: sc.name } })}</td></tr>`)}</tbody></table></div>`
}`;
}
