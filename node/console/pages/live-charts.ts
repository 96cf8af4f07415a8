/**
 * The charts of the live page and of a service's page, from the sampled history: per service
 * requests/s with errors/s and p99; each queue's entries per state (waiting, scheduled, retrying,
 * dead, done); restarts. Services without a request in
 * the window are listed by name instead of drawn as flat lines.
 */
import type { Html } from '../html.js';
import { html } from '../html.js';
import { lineChart } from '../charts.js';
import type { LiveSeries, ServiceSeries } from '../history.js';
import { count, perSecond, seconds } from './format.js';

const active = (s: ServiceSeries): boolean => s.rate.some((v) => v !== null && v > 0);

export function serviceCharts(s: ServiceSeries, times: number[]): Html {
  return html`<div class="charts" data-service-charts="${s.name}">
${lineChart({
  title: `${s.name}: requests and errors per second`,
  times,
  format: perSecond,
  lines: [
    { label: 'requests', values: s.rate, colour: 'blue' },
    { label: 'errors', values: s.errors, colour: 'red' },
  ],
})}
${lineChart({ title: `${s.name}: p99 latency`, times, format: seconds, lines: [{ label: 'p99', values: s.p99, colour: 'purple' }] })}</div>`;
}

/** A queue's entries per state: those still to deliver (waiting, scheduled, retrying) and those kept (dead, done), each on its own scale. */
function queueCharts(q: LiveSeries['queues'][number], times: number[]): Html {
  const entries = (v: number): string => `${count(v)} entr${Math.round(v) === 1 ? 'y' : 'ies'}`;
  return html`<div class="charts" data-queue-charts="${q.name}">
${lineChart({
  title: `queue ${q.name}: entries to deliver`,
  times,
  format: entries,
  lines: [
    { label: 'waiting', values: q.waiting, colour: 'blue' },
    { label: 'scheduled', values: q.scheduled, colour: 'purple' },
    { label: 'retrying', values: q.retrying, colour: 'teal' },
  ],
})}
${lineChart({
  title: `queue ${q.name}: entries kept`,
  times,
  format: entries,
  lines: [
    { label: 'dead', values: q.dead, colour: 'red' },
    { label: 'done', values: q.done, colour: 'green', dashed: true },
  ],
})}</div>`;
}

export function liveCharts(series: LiveSeries): Html {
  const busy = series.services.filter(active);
  const idle = series.services.filter((s) => !active(s));
  const restarted = series.restarts.filter((r) => r.values.some((v) => v > 0));
  return html`<h3>Requests, errors and p99 per service</h3>
${busy.length === 0 ? html`<p>No service has handled a request in the last 15 minutes.</p>` : ''}
${busy.map((s) => serviceCharts(s, series.times))}
${idle.length ? html`<p class="muted">Idle for 15 minutes: ${idle.map((s) => s.name).join(', ')}.</p>` : ''}
${series.queues.length ? html`<h3>Queue depth per state</h3>${series.queues.map((q) => queueCharts(q, series.times))}` : ''}
<h3>Actor restarts</h3>
${restarted.length === 0 ? html`<p>No restarts in the last 15 minutes.</p>` : html`<div class="charts">${restarted.map((r) => lineChart({ title: `${r.name}: restarts per ${series.intervalMs / 1000} s`, times: series.times, format: (v) => count(v), lines: [{ label: 'restarts', values: r.values, colour: 'red' }] }))}</div>`}`;
}
