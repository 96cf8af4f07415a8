/**
 * The frame of every console page: skip link, a header with the node's name and the navigation
 * (one list, so a page added later — traces — is one entry), the read-only notice when no users
 * file is set, a notice from the last action, the page's main content, and a footer with the API.
 */
import type { Html } from './html.js';
import { html } from './html.js';

/** The pages in the navigation, in order. */
const NAV = [
  { path: '/', label: 'Live' },
  { path: '/flow', label: 'Flow' },
  { path: '/queues', label: 'Queues' },
  { path: '/flows', label: 'Flows' },
  { path: '/journal', label: 'Journal' },
  { path: '/traces', label: 'Traces' },
  { path: '/config', label: 'Config' },
] as const;

/** What every page knows about the request it answers. */
export interface PageContext {
  nodeName: string;
  version: string;
  /** False without dashboard.Users: the console says it is read-only and shows no action forms. */
  actionsEnabled: boolean;
  /** The operator, when the browser sent valid credentials. */
  user?: string;
  /** The CSRF token for this browser's cookie, put into every form. */
  csrf: string;
  /** The page's path with its query, for forms to come back to. */
  here: string;
  /** The outcome of the last action (from the redirect after it). */
  notice?: { text: string; failed: boolean };
}

export interface Page {
  title: string;
  /** The navigation entry to mark as current. */
  nav: (typeof NAV)[number]['path'];
  body: Html;
  /**
   * Refresh without the script, in seconds (live pages), inside <noscript>: a refresh once parsed
   * cannot be taken back, so with the script (a stream, or fetching the live parts) it must not be.
   */
  refreshSeconds?: number;
}

export function renderPage(ctx: PageContext, page: Page): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${page.refreshSeconds ? html`<noscript><meta http-equiv="refresh" content="${page.refreshSeconds}"></noscript>` : ''}
<title>${page.title} · hivenode — ${ctx.nodeName}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/assets/console.css"><script src="/assets/console.js" defer></script>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header><span class="brand">hivenode ${ctx.version} — ${ctx.nodeName}</span>
<nav aria-label="Console pages"><ul>${NAV.map((n) => html`<li><a href="${n.path}"${n.path === page.nav ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}</ul></nav>
<div class="who">${ctx.actionsEnabled ? (ctx.user ? html`signed in as <strong>${ctx.user}</strong>` : html`<a href="/login?back=${encodeURIComponent(ctx.here)}">Sign in</a> to act`) : 'read-only'}</div>
</header>
<main id="main">
${ctx.actionsEnabled ? '' : html`<p class="notice readonly" role="note">This console is read-only: no users file is set (node file <code>dashboard: {Users: …}</code>, written with <code>hivenode passwd</code>).</p>`}
${ctx.notice ? html`<p class="notice${ctx.notice.failed ? ' failed' : ''}" role="status">${ctx.notice.text}</p>` : ''}
${page.body}
</main>
<footer>JSON for scripts: <a href="/api/status">/api/status</a> · <a href="/api/queues">/api/queues</a> · <a href="/api/flow">/api/flow</a> · <a href="/api/live">/api/live</a> · <a href="/api/journal">/api/journal</a> · Prometheus: <a href="/metrics">/metrics</a></footer>
</body></html>`.text;
}

/** One action's button: its label, the hidden controls it posts, the question asked first, whether it destroys (styled so). */
export interface ActionButton {
  label: string;
  controls?: Record<string, string>;
  confirm?: string;
  danger?: boolean;
  /** The form's id, for a page that points at it. */
  id?: string;
}

/** A form posting one action to `url`: the button, its hidden controls, and the fields every action form carries. */
export function postButton(ctx: PageContext, url: string, b: ActionButton): Html {
  return html`<form class="inline" method="post" action="${url}"${b.confirm ? html` data-confirm="${b.confirm}"` : ''}${b.id ? html` id="${b.id}"` : ''}>${formFields(ctx)}${Object.entries(b.controls ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<button type="submit"${b.danger ? html` class="danger"` : ''}>${b.label}</button></form>`;
}

/** The hidden fields of every action form: the CSRF token and the page to come back to. */
export function formFields(ctx: PageContext): Html {
  return html`<input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="back" value="${ctx.here}">`;
}
