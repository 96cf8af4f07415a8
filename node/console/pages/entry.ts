/**
 * /queues/<name>/entries/<key>: one entry — its message (Class, Operation, Control, Data), where it
 * goes, its state and every attempt — with the actions that fit its state: replay with an edit box
 * for its Data (dead), step (waiting, scheduled, retrying), delete.
 */
import type { Html } from '../html.js';
import { html } from '../html.js';
import type { PageContext } from '../layout.js';
import { formFields } from '../layout.js';
import type { EntryView } from '../queue-reads.js';
import { actionForm } from './queues.js';
import { ago } from './format.js';

const STEPPABLE = new Set(['waiting', 'scheduled', 'retrying']);

export function entryBody(ctx: PageContext, queue: string, e: EntryView): Html {
  const base = `/queues/${encodeURIComponent(queue)}`;
  return html`<p><a href="${base}?state=${e.state}">← queue ${queue}, ${e.state}</a></p>
<h1>Entry <code>${e.key}</code></h1>
<div class="table-wrap" tabindex="0"><table id="entry"><tbody>
<tr><th scope="row">state</th><td class="${e.state === 'dead' ? 'bad' : ''}" id="entry-state">${e.state}</td></tr>
<tr><th scope="row">channel · mode</th><td>${e.channel} · ${e.mode}</td></tr>
<tr><th scope="row">Class · Operation</th><td>${e.class} · ${e.operation}</td></tr>
<tr><th scope="row">priority</th><td id="entry-priority">${e.priority}</td></tr>
<tr><th scope="row">added</th><td>${e.created} (${ago(e.created)})</td></tr>
${e.state === 'dead' || e.state === 'done' ? html`<tr><th scope="row">${e.state === 'dead' ? 'dead since' : 'delivered'}</th><td>${e.ended}</td></tr>` : html`<tr><th scope="row">due</th><td>${e.due}</td></tr>`}
${e.reason ? html`<tr><th scope="row">reason</th><td class="bad">${e.reason}</td></tr>` : ''}
${e.replayedAt.length ? html`<tr><th scope="row">replayed</th><td>${e.replayedAt.join(', ')}</td></tr>` : ''}
</tbody></table></div>
<h2>Message</h2>
<h3>Control</h3><pre id="entry-control">${JSON.stringify(e.control, null, 2)}</pre>
<h3>Data</h3><pre id="entry-data">${JSON.stringify(e.data, null, 2)}</pre>
<h2>Attempts (${e.history.length})</h2>
${
  e.history.length === 0
    ? html`<p>None yet.</p>`
    : html`<div class="table-wrap" tabindex="0"><table id="attempts"><thead><tr><th scope="col">#</th><th scope="col">time</th><th scope="col" class="num">took</th><th scope="col" class="num">Code</th><th scope="col">message</th><th scope="col">delivered</th></tr></thead>
<tbody>${e.history.map((a, i) => html`<tr><td>${i + 1}</td><td>${a.time}</td><td class="num">${a.duration === undefined ? '' : `${a.duration} ms`}</td><td class="num${a.code >= 300 ? ' bad' : ''}">${a.code}</td><td>${a.message}</td><td class="attempt-batch">${a.batch === undefined ? 'alone' : `in a batch of ${a.batch}`}</td></tr>`)}</tbody></table></div>`
}
${
  ctx.actionsEnabled
    ? html`<h2>Actions</h2>
${
  e.state === 'dead'
    ? html`<form method="post" action="/api/queues/${encodeURIComponent(queue)}/replay" id="replay-form">${formFields(ctx)}<input type="hidden" name="key" value="${e.key}">
<label for="replay-data">Data to replay with (JSON; fields given replace the entry's)</label><textarea id="replay-data" name="Data">${JSON.stringify(e.data, null, 2)}</textarea>
<div class="actions"><label>Channel<input name="channel" value="" placeholder="${e.channel}" size="14"></label><button type="submit">Replay</button></div></form>`
    : ''
}
<div class="actions">${STEPPABLE.has(e.state) ? actionForm(ctx, queue, 'step', { label: 'Deliver now (step)', controls: { key: e.key } }) : ''}
${e.state === 'dead' || e.state === 'done' ? actionForm(ctx, queue, 'purge', { label: 'Delete', controls: { key: e.key, state: e.state }, confirm: `Delete entry ${e.key} for good?`, danger: true }) : actionForm(ctx, queue, 'delete', { label: 'Delete', controls: { key: e.key }, confirm: `Delete entry ${e.key}?`, danger: true })}</div>`
    : ''
}`;
}
