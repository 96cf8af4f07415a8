/**
 * /traces: the recent sampled traces of this node (actors/observe/trace-ring.ts), newest first, and a
 * search by trace id — a log line's trace_id finds its trace. /traces/<id>: one trace as a
 * waterfall, each span a bar placed by its start and length on the trace's time line and indented
 * under its parent, drawn on the server as SVG (no script, no inline style: the console's CSP), with
 * the same spans as a table for screen readers and for copying, and each span's attributes.
 */
import type { RingSpan, RingTrace, TraceSummary } from '../../../actors/observe/trace-ring.js';
import type { TracingMode } from '../../../actors/observe/tracing.js';
import type { Html } from '../html.js';
import { escapeHtml, html, raw } from '../html.js';

const ROW = 22;
const LABEL = 260;
const WIDTH = 900;

const ms = (n: number): string => (n >= 100 ? `${Math.round(n)} ms` : `${Number(n.toPrecision(3))} ms`);

/** What the mode means for this page: only a recording node keeps traces. */
function modeNote(mode: TracingMode): Html {
  if (mode === 'record')
    return html`<p class="muted">Sampled traces of this node, newest first (at most 200, kept in memory).</p>`;
  return html`<p class="warn">Tracing does not record on this node (mode <code>${mode}</code>): the trace context travels with every message, but no span is kept. Set <code>OTEL_EXPORTER_OTLP_ENDPOINT</code> or the node file's <code>tracing: {Endpoint}</code> to record (README, Tracing).</p>`;
}

export function tracesBody(traces: TraceSummary[], search: string, mode: TracingMode, notFound: boolean): Html {
  return html`<h1>Traces</h1>
${modeNote(mode)}
${notFound ? html`<p class="warn" role="status">No recent trace <code>${search}</code> on this node: the ring keeps the latest sampled traces only.</p>` : ''}
<form class="search" method="get" action="/traces" role="search" aria-label="Find a trace"><label>Trace id<input name="id" value="${search}" size="34" placeholder="32 hex digits, as trace_id in a log line" pattern="[0-9a-fA-F]{32}"></label><button type="submit">Find</button></form>
<p id="traces-total">${traces.length} ${traces.length === 1 ? 'trace' : 'traces'}</p>
<div class="table-wrap" tabindex="0"><table id="traces"><thead><tr><th scope="col">started</th><th scope="col">trace</th><th scope="col">first span</th><th scope="col">services</th><th scope="col">spans</th><th scope="col">duration</th><th scope="col">status</th></tr></thead>
<tbody>${traces.map((t) => html`<tr><td>${new Date(t.start).toISOString()}</td><td><a href="/traces/${t.traceId}"><code>${t.traceId}</code></a></td><td>${t.name}</td><td>${t.services.join(', ')}</td><td>${t.spanCount}</td><td>${ms(t.duration)}</td><td class="${t.error ? 'bad' : 'ok'}">${t.error ? 'error' : 'ok'}</td></tr>`)}</tbody></table></div>`;
}

/** The spans in waterfall order: each after its parent (depth first, siblings by start), with its depth. */
function waterfallOrder(spans: readonly RingSpan[]): Array<{ span: RingSpan; depth: number }> {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | undefined, RingSpan[]>();
  for (const s of spans) {
    // a span whose parent is not here (another process, or dropped) starts a branch of its own
    const parent = s.parentSpanId !== undefined && ids.has(s.parentSpanId) ? s.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const out: Array<{ span: RingSpan; depth: number }> = [];
  const walk = (parent: string | undefined, depth: number): void => {
    for (const s of (children.get(parent) ?? []).sort((a, b) => a.start - b.start)) {
      out.push({ span: s, depth });
      walk(s.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return out;
}

function waterfallSvg(trace: RingTrace, rows: Array<{ span: RingSpan; depth: number }>): string {
  const total = Math.max(trace.duration, 0.001);
  const scale = (WIDTH - LABEL - 90) / total;
  const height = rows.length * ROW + 24;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-labelledby="waterfall-title"><title id="waterfall-title">Waterfall of trace ${trace.traceId}: ${rows.length} spans over ${escapeHtml(ms(trace.duration))}</title>`,
  ];
  parts.push(
    `<line x1="${LABEL}" y1="14" x2="${WIDTH - 90}" y2="14" stroke="#888"/><text x="${LABEL}" y="10" font-size="10" fill="#444">0</text><text x="${WIDTH - 90}" y="10" font-size="10" text-anchor="end" fill="#444">${escapeHtml(ms(total))}</text>`,
  );
  rows.forEach(({ span, depth }, i) => {
    const y = 20 + i * ROW;
    const x = LABEL + (span.start - trace.start) * scale;
    const w = Math.max(2, span.duration * scale);
    const colour = span.status === 'error' ? '#b00020' : '#1b5e9e';
    parts.push(
      `<text x="${4 + depth * 12}" y="${y + 14}" font-size="12" fill="#222">${escapeHtml(`${span.name} · ${span.service}`.slice(0, 40 - depth))}</text>`,
      `<rect x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${ROW - 8}" rx="2" fill="${colour}"/>`,
      `<text x="${Math.min(x + w + 4, WIDTH - 86).toFixed(1)}" y="${y + 14}" font-size="11" fill="#222">${escapeHtml(ms(span.duration))}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}

const attributes = (s: RingSpan): string =>
  Object.entries(s.attributes)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');

export function traceBody(trace: RingTrace): Html {
  const rows = waterfallOrder(trace.spans);
  return html`<h1>Trace <code>${trace.traceId}</code></h1>
<p>${trace.name} · started ${new Date(trace.start).toISOString()} · ${ms(trace.duration)} · services ${trace.services.join(', ')} · <span class="${trace.error ? 'bad' : 'ok'}">${trace.error ? 'error' : 'ok'}</span>${trace.droppedSpans > 0 ? html` · <span class="warn">${trace.droppedSpans} spans not kept</span>` : ''}</p>
<figure class="waterfall">${raw(waterfallSvg(trace, rows))}</figure>
<div class="table-wrap" tabindex="0"><table id="spans"><caption>The spans, in the waterfall's order</caption><thead><tr><th scope="col">span</th><th scope="col">service</th><th scope="col">starts at</th><th scope="col">duration</th><th scope="col">status</th><th scope="col">attributes</th></tr></thead>
<tbody>${rows.map(({ span, depth }) => html`<tr data-span="${span.spanId}" data-parent="${span.parentSpanId ?? ''}"><td>${'· '.repeat(depth)}${span.name}</td><td>${span.service}</td><td>+${ms(span.start - trace.start)}</td><td>${ms(span.duration)}</td><td class="${span.status === 'error' ? 'bad' : ''}">${span.status}${span.statusMessage ? `: ${span.statusMessage}` : ''}</td><td><code>${attributes(span)}</code></td></tr>`)}</tbody></table></div>
<p><a href="/traces">All traces</a></p>`;
}
