/**
 * The circuit breakers of a queue on its console page (README, The queue, Circuit breakers): each
 * target channel's breaker with its state, the entries it holds, why it opened and when it
 * half-opens, and the operator's Open / Close (the queue's `breaker` command, through the same
 * checks, CSRF token and journal line as every console action).
 */
import type { Html } from '../html.js';
import { html } from '../html.js';
import type { ActionButton } from '../layout.js';
import type { BreakerView } from '../../../actors/queue/breaker.js';
import { ago, count } from './format.js';

const STATE_CLASS: Record<string, string> = { open: 'bad', disabled: 'bad', 'half-open': 'warn', closed: 'ok' };

/** A button posting the queue's `breaker` command with these controls (queues.ts, actionForm; empty when the console takes no actions). */
export type BreakerButton = (action: string, button: ActionButton) => Html;

/** The action of a breaker's row: open a closed one, close an open one, resume (and replay the dead of) a disabled one. */
function rowAction(b: BreakerView, button: BreakerButton): Html {
  if (b.state === 'closed')
    return button('breaker', {
      label: 'Open',
      controls: { breaker: 'open', channel: b.channel },
      confirm: `Hold every entry for ${b.channel} until the breaker is closed?`,
      danger: true,
    });
  if (b.state === 'disabled')
    return button('resume_channel', {
      label: `Resume and replay dead (${count(b.held)} held)`,
      controls: { channel: b.channel },
      confirm: `Resume ${b.channel}: release its ${count(b.held)} held entries and replay its dead ones?`,
    });
  return button('breaker', {
    label: `Close (release ${count(b.held)})`,
    controls: { breaker: 'close', channel: b.channel },
  });
}

export function breakersSection(breakers: readonly BreakerView[], button: BreakerButton): Html {
  if (breakers.length === 0) return html``;
  return html`<h2>Circuit breakers</h2>
<div class="table-wrap" tabindex="0"><table id="breakers"><thead><tr><th scope="col">channel</th><th scope="col">state</th><th scope="col" class="num">held</th><th scope="col">why it opened</th><th scope="col">opened</th><th scope="col">half-opens</th><th scope="col" class="num">opens</th><th scope="col"><span class="muted">action</span></th></tr></thead>
<tbody>${breakers.map(
    (
      b,
    ) => html`<tr data-channel="${b.channel}" data-breaker="${b.state}"><td><code>${b.channel}</code></td><td class="${STATE_CLASS[b.state] ?? ''}">${b.state}</td><td class="num">${count(b.held)}</td><td>${b.reason}</td><td>${b.opened ? html`<span title="${b.opened}">${ago(b.opened)}</span>` : ''}</td><td>${b.until ? html`<span title="${b.until}">${ago(b.until)}</span>` : b.state === 'open' ? 'when closed' : b.state === 'disabled' ? 'when resumed' : ''}</td><td class="num">${count(b.opens)}</td>
<td>${rowAction(b, button)}</td></tr>`,
  )}</tbody></table></div>`;
}
