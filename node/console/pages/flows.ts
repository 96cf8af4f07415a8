/**
 * /flows: every flow of the node with its runs per state; /flows/<name>: its runs by state (tabs),
 * searched by key, step, Code, age and an Input Data field, a page at a time (as the queue pages);
 * /flows/<name>/runs/<key>: one run — its Input, its steps as a waterfall of every attempt, each
 * step's kept Result — with replay (an edit box for the Input's Data) and cancel for operators,
 * forms that post to the JSON API through the same checks as the queue's actions.
 */
import type { Html } from '../html.js';
import { html } from '../html.js';
import type { ActionButton, PageContext } from '../layout.js';
import { formFields, postButton } from '../layout.js';
import type { FlowSummary, RunAttempt, RunPage, RunView } from '../flow-reads.js';
import { RUN_STATES, runSearchQuery } from '../flow-reads.js';
import { ago, count, valuesText } from './format.js';

const IN_PROGRESS = new Set(['running', 'waiting']);

export function flowsBody(flows: readonly FlowSummary[]): Html {
  return html`<h1>Flows</h1>
${
  flows.length === 0
    ? html`<p>This node runs no flow.</p>`
    : html`<div class="table-wrap" tabindex="0"><table id="flows"><caption>Runs per state; a flow's name opens its runs.</caption><thead><tr><th scope="col">flow</th><th scope="col">channel</th>${RUN_STATES.map((s) => html`<th scope="col" class="num">${s}</th>`)}</tr></thead>
<tbody>${flows.map((f) => html`<tr data-flow="${f.name}"><td><a href="/flows/${encodeURIComponent(f.name)}">${f.name}</a></td><td><code>${f.channel}</code></td>${RUN_STATES.map((s) => html`<td class="num${s === 'failed' && f.counts[s] > 0 ? ' bad' : ''}"><a href="/flows/${encodeURIComponent(f.name)}?state=${s}">${count(f.counts[s])}</a></td>`)}</tr>`)}</tbody></table></div>`
}`;
}

/** The last failed attempt of a run, as `502 step ship: …`. */
function lastError(r: RunView): string {
  const last = [...r.attempts].reverse().find((a) => a.code >= 300);
  return last ? `${last.code} ${last.step}: ${last.message}` : '';
}

export function flowRunsBody(f: FlowSummary, found: RunPage): Html {
  const s = found.search;
  const base = `/flows/${encodeURIComponent(f.name)}`;
  const filtered = [s.step, s.code, s.field, s.olderThan, s.newerThan].some((v) => v !== undefined);
  return html`<h1>Flow ${f.name}</h1>
<p>Starts a run on <code>${f.channel}</code> · ${count(f.inProgress)} in progress · <a href="/flow">graph</a></p>
<nav aria-label="Run states"><ul class="tabs">${RUN_STATES.map((st) => html`<li><a href="${base}?state=${st}"${st === s.state ? html` aria-current="page"` : ''}>${st} (${count(f.counts[st])})</a></li>`)}</ul></nav>
<form class="search" method="get" action="${base}" role="search" aria-label="Search runs">
<input type="hidden" name="state" value="${s.state}">
<label>Key<input name="key" value="${s.key ?? ''}" size="24"></label>
<label>Step<input name="step" value="${s.step ?? ''}" size="10"></label>
<label>Code<input name="code" value="${s.code ?? ''}" size="4" placeholder="502"></label>
<label>Input Data field<input name="field" value="${s.field ?? ''}" size="10"></label>
<label>has value<input name="value" value="${s.value ?? ''}" size="10"></label>
<label>Older than<input name="older_than" value="${s.olderThan ?? ''}" size="6" placeholder="1h"></label>
<label>Newer than<input name="newer_than" value="${s.newerThan ?? ''}" size="6" placeholder="10m"></label>
<button type="submit">Search</button> <a href="${base}?state=${s.state}">clear</a></form>
<p id="runs-total">${count(found.total)} ${s.state} ${found.total === 1 ? 'run' : 'runs'}${filtered || s.key ? ' match' : ''}${found.pages > 1 ? ` · page ${s.page} of ${found.pages}` : ''}</p>
<div class="table-wrap" tabindex="0"><table id="runs"><thead><tr><th scope="col">key</th><th scope="col">state</th><th scope="col">step</th><th scope="col" class="num">attempts</th><th scope="col">started</th><th scope="col">last error</th><th scope="col">Input Data</th></tr></thead>
<tbody>${found.runs.map(
    (r) =>
      html`<tr data-key="${r.key}" data-state="${r.state}"><td><a href="${base}/runs/${encodeURIComponent(r.key)}"><code>${r.key}</code></a></td><td class="${r.state === 'failed' ? 'bad' : r.state === 'succeeded' ? 'ok' : ''}">${r.state}</td><td>${r.step || r.failedStep}</td><td class="num">${r.attempts.length}</td><td title="${r.created}">${ago(r.created)}</td><td class="last-error${r.state === 'failed' ? ' bad' : ''}">${lastError(r)}</td><td><code>${valuesText(r.input.Data)}</code></td></tr>`,
  )}</tbody></table></div>
${found.pages > 1 ? html`<nav aria-label="Pages" class="actions">${s.page > 1 ? html`<a href="${base}?${runSearchQuery(s, s.page - 1)}" rel="prev">← previous</a>` : ''} ${s.page < found.pages ? html`<a href="${base}?${runSearchQuery(s, s.page + 1)}" rel="next">next →</a>` : ''}</nav>` : ''}`;
}

const BAR_W = 240;
const BAR_H = 14;

/**
 * One attempt's bar on the run's time line: where it started and how long it took, drawn as SVG
 * (no inline styles: the console's CSP allows none); its label says the same for screen readers.
 */
function bar(a: RunAttempt, t0: number, span: number): Html {
  const x = Math.min(BAR_W - 2, ((a.at - t0) / span) * BAR_W);
  const w = Math.max(2, Math.min(BAR_W - x, (a.ms / span) * BAR_W));
  const colour = a.code >= 300 ? '#b00020' : '#1b6e35';
  return html`<svg viewBox="0 0 ${BAR_W} ${BAR_H}" width="${BAR_W}" height="${BAR_H}" role="img" aria-label="from ${a.at - t0} ms for ${a.ms} ms"><rect x="0" y="0" width="${BAR_W}" height="${BAR_H}" fill="#f1f3f4"></rect><rect x="${x.toFixed(1)}" y="2" width="${w.toFixed(1)}" height="${BAR_H - 4}" fill="${colour}"></rect></svg>`;
}

/** Every attempt of every step in the order they were made, on one time line from the run's start. */
function waterfall(r: RunView): Html {
  if (r.attempts.length === 0) return html`<p>No attempt yet.</p>`;
  const t0 = Math.min(Date.parse(r.created) || Infinity, ...r.attempts.map((a) => a.at));
  const end = Math.max(...r.attempts.map((a) => a.at + a.ms));
  const span = Math.max(1, end - t0);
  return html`<div class="table-wrap" tabindex="0"><table id="waterfall"><caption>Every attempt of every step on one time line of ${span} ms from the run's start.</caption><thead><tr><th scope="col">step</th><th scope="col" class="num">attempt</th><th scope="col">started</th><th scope="col" class="num">took</th><th scope="col" class="num">Code</th><th scope="col">message</th><th scope="col">time line</th></tr></thead>
<tbody>${r.attempts.map((a) => html`<tr data-step="${a.step}" data-code="${a.code}"><td>${a.step}</td><td class="num">${a.attempt}</td><td title="${new Date(a.at).toISOString()}">+${a.at - t0} ms</td><td class="num">${a.ms} ms</td><td class="num${a.code >= 300 ? ' bad' : ''}">${a.code}</td><td>${a.message}</td><td>${bar(a, t0, span)}</td></tr>`)}</tbody></table></div>`;
}

function resultsTable(r: RunView): Html {
  const kept = Object.entries(r.steps);
  if (kept.length === 0) return html`<p>No step has kept a Result yet.</p>`;
  return html`<div class="table-wrap" tabindex="0"><table id="results"><thead><tr><th scope="col">step</th><th scope="col" class="num">Code</th><th scope="col">Message</th><th scope="col">Data</th></tr></thead>
<tbody>${kept.map(([step, res]) => html`<tr data-step="${step}"><td>${step}</td><td class="num${res.Code >= 300 ? ' bad' : ''}">${res.Code}</td><td>${res.Message}</td><td><code>${valuesText(res.Data, 300)}</code>${res.List && res.List.length ? html` <span class="muted">+ List of ${res.List.length}</span>` : ''}</td></tr>`)}</tbody></table></div>`;
}

/** A form posting one flow action on this run (hidden key). */
function runAction(ctx: PageContext, flow: string, r: RunView, action: string, button: ActionButton): Html {
  return postButton(ctx, `/api/flows/${encodeURIComponent(flow)}/${action}`, {
    ...button,
    controls: { key: r.key },
    id: `${action}-form`,
  });
}

export function runBody(ctx: PageContext, flow: string, r: RunView): Html {
  const base = `/flows/${encodeURIComponent(flow)}`;
  const replayable = r.state === 'failed' || r.state === 'cancelled';
  return html`<p><a href="${base}?state=${r.state}">← flow ${flow}, ${r.state}</a></p>
<h1>Run <code>${r.key}</code></h1>
<div class="table-wrap" tabindex="0"><table id="run"><tbody>
<tr><th scope="row">state</th><td class="${r.state === 'failed' ? 'bad' : r.state === 'succeeded' ? 'ok' : ''}" id="run-state">${r.state}</td></tr>
${r.step ? html`<tr><th scope="row">step</th><td id="run-step">${r.step}${r.due ? ` (goes on ${r.due})` : ''}</td></tr>` : ''}
${r.failedStep ? html`<tr><th scope="row">failed at</th><td class="bad" id="run-failed-step">${r.failedStep}</td></tr>` : ''}
<tr><th scope="row">started</th><td>${r.created} (${ago(r.created)})</td></tr>
<tr><th scope="row">last change</th><td>${r.updated}</td></tr>
${r.result ? html`<tr><th scope="row">answer</th><td id="run-result" class="${r.result.Code >= 300 ? 'bad' : ''}">${r.result.Code} ${r.result.Message}</td></tr>` : ''}
</tbody></table></div>
<h2>Steps (${r.attempts.length} attempts)</h2>
${waterfall(r)}
<h2>Kept Results</h2>
${resultsTable(r)}
<h2>Input</h2>
<p>Class · Operation: ${r.input.Class || '—'} · ${r.input.Operation || '—'}</p>
<h3>Control</h3><pre id="run-control">${JSON.stringify(r.input.Control, null, 2)}</pre>
<h3>Data</h3><pre id="run-data">${JSON.stringify(r.input.Data, null, 2)}</pre>
${
  ctx.actionsEnabled && (replayable || IN_PROGRESS.has(r.state))
    ? html`<h2>Actions</h2>
${
  replayable
    ? html`<form method="post" action="/api/flows/${encodeURIComponent(flow)}/replay" id="replay-form">${formFields(ctx)}<input type="hidden" name="key" value="${r.key}">
<label for="replay-data">Input Data to replay with (JSON; the fields given replace the run's Input fields, the others stay)</label><textarea id="replay-data" name="Data">${JSON.stringify(r.input.Data, null, 2)}</textarea>
<div class="actions"><label>From step<input name="step" value="" placeholder="${r.failedStep || 'the failed step'}" size="14"></label><button type="submit">Replay</button></div></form>`
    : ''
}
${IN_PROGRESS.has(r.state) ? html`<div class="actions">${runAction(ctx, flow, r, 'cancel', { label: 'Cancel the run', confirm: `Cancel run ${r.key}? Its on_cancel step runs, if the flow has one.`, danger: true })}</div>` : ''}`
    : ''
}`;
}
