/**
 * /config: the running node file (secrets masked), the check of an edited one (a dry run: every
 * error one line, what it would change, the diff against the running file), the kept versions with
 * Restore, and the history of reloads from the journal (README, Changing a running node). The forms
 * are plain POSTs that work without the script; they are shown when the console has operators.
 */
import type { JournalEntry } from '../../../supervisors/journal.js';
import type { KeptVersion } from '../../node-file-versions.js';
import type { DiffLine } from '../../line-diff.js';
import type { Html } from '../html.js';
import { html } from '../html.js';
import type { PageContext } from '../layout.js';
import type { ConfigCheck, ConfigOutcome } from '../sources.js';
import { SECRET_MASK } from '../../node-file-secrets.js';

/** What the page shows about the file that runs. */
export interface ConfigView {
  file: string;
  hash: string;
  appliedAt?: string;
  reloads?: number;
  diskChanged: boolean;
  /** The running text (masked), or the operator's edited text after a dry run or a refused apply. */
  text: string;
  versions: KeptVersion[];
  history: JournalEntry[];
  /** A dry run's result, or a refused apply's reason. */
  check?: ConfigCheck;
  refused?: ConfigOutcome & { applied: false };
}

function diffBlock(lines: readonly DiffLine[], id = 'config-diff'): Html {
  if (lines.length === 0) return html`<p id="${id}" class="muted">No difference from the running file.</p>`;
  return html`<pre id="${id}" class="diff" tabindex="0">${lines.map((l) => html`<span class="${l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'same'}">${l.op} ${l.text}</span>`)}</pre>`;
}

function checkBlock(check: ConfigCheck): Html {
  return html`<section id="config-check" aria-labelledby="config-check-title"><h2 id="config-check-title">Dry run</h2>
${check.ok ? html`<p class="ok" id="config-valid">Valid: applying it would change ${check.summary ?? 'nothing'}.</p>` : html`<p class="bad" id="config-invalid">Not valid: a reload would refuse it, and the node would keep running what it has.</p><ul id="config-errors">${check.errors.map((e) => html`<li><code>${e}</code></li>`)}</ul>`}
<h3>Diff against the running file</h3>${diffBlock(check.lines)}</section>`;
}

export function configBody(ctx: PageContext, v: ConfigView): Html {
  const canAct = ctx.actionsEnabled;
  const fields = html`<input type="hidden" name="csrf" value="${ctx.csrf}">`;
  return html`<h1>Config</h1>
<p id="config-source">Node file <code>${v.file}</code> · sha256 <code title="${v.hash}">${v.hash.slice(0, 16)}</code>${v.appliedAt ? html` · applied ${v.appliedAt}` : ''}${v.reloads ? ` (${v.reloads} reload${v.reloads === 1 ? '' : 's'})` : ''}</p>
${v.diskChanged ? html`<p class="notice" role="note" id="config-disk-changed">The file on disk differs from the running one: a reload (SIGHUP, <code>hivenode reload --dashboard</code>) would apply it; an apply here replaces it (it is kept as <code>.1</code>).</p>` : ''}
${v.refused ? html`<section id="config-refused" class="notice failed" role="alert"><p><strong>Not applied${v.refused.conflict ? ' (the running file changed)' : ''}:</strong> the node keeps running what it had.</p><ul>${v.refused.reason.split('\n').map((l) => html`<li><code>${l}</code></li>`)}</ul></section>` : ''}
${v.check ? checkBlock(v.check) : ''}
${
  canAct
    ? html`<form method="post" action="/api/config/dry-run" id="config-form">${fields}<input type="hidden" name="base" value="${v.hash}">
<label for="config-text">The node file — secret values show as <code>${SECRET_MASK}</code>; a value left so keeps the running one</label>
<textarea id="config-text" name="text" rows="28" spellcheck="false" autocapitalize="off">${v.text}</textarea>
<div class="actions"><button type="submit" formaction="/api/config/dry-run" id="config-dry-run">Dry run</button><button type="submit" formaction="/api/config/apply" id="config-apply" class="danger" data-confirm="Apply this node file to the running node?">Apply</button></div></form>`
    : html`<h2>The running file</h2><pre id="config-text" tabindex="0">${v.text}</pre>`
}
<h2>Kept versions</h2>
${
  v.versions.length === 0
    ? html`<p id="config-versions" class="muted">None yet: each apply keeps the file before it as <code>${v.file}.1</code> (up to .5).</p>`
    : html`<div class="table-wrap" tabindex="0"><table id="config-versions"><thead><tr><th scope="col">version</th><th scope="col">written</th><th scope="col" class="num">bytes</th><th scope="col">actions</th></tr></thead><tbody>${v.versions.map(
        (k) =>
          html`<tr data-version="${k.n}"><td><a href="/config/versions/${k.n}"><code>.${k.n}</code></a></td><td>${k.modified}</td><td class="num">${k.size}</td><td>${canAct ? html`<form class="inline" method="post" action="/api/config/restore">${fields}<input type="hidden" name="version" value="${k.n}"><button type="submit" data-confirm="Restore version .${k.n} of the node file and apply it?">Restore .${k.n}</button></form>` : ''}</td></tr>`,
      )}</tbody></table></div>`
}
<h2>Reloads</h2>
${
  v.history.length === 0
    ? html`<p id="config-history" class="muted">No reload since the node started.</p>`
    : html`<div class="table-wrap" tabindex="0"><table id="config-history"><thead><tr><th scope="col">time</th><th scope="col">asked by</th><th scope="col">outcome and diff</th></tr></thead><tbody>${v.history.map((e) => html`<tr><td>${e.time}</td><td>${e.user ?? ''}</td><td class="${(e.action ?? '').startsWith('refused') ? 'bad' : ''}">${e.action ?? ''}</td></tr>`)}</tbody></table></div>`
}`;
}

/** /config/versions/<n>: a kept version (masked) and its diff against the running file. */
export function versionBody(ctx: PageContext, file: string, n: number, text: string, lines: readonly DiffLine[]): Html {
  return html`<h1>Kept version <code>${file}.${n}</code></h1>
<p><a href="/config">back to the running file</a></p>
${ctx.actionsEnabled ? html`<form class="inline" method="post" action="/api/config/restore"><input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="version" value="${n}"><button type="submit" data-confirm="Restore version .${n} of the node file and apply it?">Restore .${n}</button></form>` : ''}
<h2>Against the running file</h2>${diffBlock(lines, 'version-diff')}
<h2>The text</h2><pre id="version-text" tabindex="0">${text}</pre>`;
}
