/**
 * Small line charts drawn on the server as SVG (no chart script to download, nothing to run in the
 * browser): a time axis of the last 15 minutes, one polyline per series broken where a value is
 * missing, the top of the scale and the latest values written out with their units — figures stay
 * readable as numbers, and the chart's label says them for screen readers.
 */
import type { Html } from './html.js';
import { html } from './html.js';
import { WINDOW_MS } from './history.js';

/** Line colours, each at least 4.5:1 against white (the key under a chart is text in that colour). */
const CHART_COLOURS = {
  blue: '#0b57d0',
  red: '#b00020',
  purple: '#6a1b9a',
  green: '#1b6e35',
  teal: '#00695c',
} as const;
type ChartColour = keyof typeof CHART_COLOURS;

interface ChartLine {
  label: string;
  values: Array<number | null>;
  colour: ChartColour;
  dashed?: boolean;
}

export interface Chart {
  title: string;
  /** Each point's time (epoch ms), as many as each line has values. */
  times: number[];
  lines: ChartLine[];
  /** A value with its unit: `3.2/s`, `4.1 ms`, `12 entries`. */
  format: (v: number) => string;
  now?: number;
}

const W = 320;
const H = 96;
const LEFT = 4;
const TOP = 14;
const BOTTOM = 16;

function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((v) => v >= max)!;
}

const lastValue = (values: Array<number | null>): number | null => {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i]!;
  return null;
};

export function lineChart(c: Chart): Html {
  const now = c.now ?? c.times.at(-1) ?? Date.now();
  const start = now - WINDOW_MS;
  const max = niceMax(Math.max(0, ...c.lines.flatMap((l) => l.values.filter((v): v is number => v !== null))));
  const x = (t: number): number => LEFT + ((t - start) / WINDOW_MS) * (W - LEFT * 2);
  const y = (v: number): number => TOP + (1 - v / max) * (H - TOP - BOTTOM);
  const paths = c.lines.map((l) => {
    let d = '';
    let pen = false;
    l.values.forEach((v, i) => {
      const t = c.times[i];
      if (v === null || t === undefined || t < start) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(t).toFixed(1)} ${y(v).toFixed(1)} `;
      pen = true;
    });
    return html`<path d="${d.trim()}" fill="none" stroke="${CHART_COLOURS[l.colour]}" stroke-width="1.6"${l.dashed ? html` stroke-dasharray="4 3"` : ''}/>`;
  });
  const latest = c.lines.map((l) => {
    const v = lastValue(l.values);
    return `${l.label} ${v === null ? '–' : c.format(v)}`;
  });
  return html`<figure class="chart"><figcaption>${c.title}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${c.title}, last 15 minutes: now ${latest.join(', ')}; scale up to ${c.format(max)}" font-family="system-ui, sans-serif">
<line x1="${LEFT}" y1="${y(0)}" x2="${W - LEFT}" y2="${y(0)}" stroke="#767676" stroke-width="1"/><line x1="${LEFT}" y1="${TOP}" x2="${W - LEFT}" y2="${TOP}" stroke="#d0d0d0" stroke-width="1"/>
<text x="${LEFT}" y="${TOP - 3}" font-size="10" fill="#4a4a4a">${c.format(max)}</text>
<text x="${LEFT}" y="${H - 3}" font-size="10" fill="#4a4a4a">−15 min</text><text x="${W - LEFT}" y="${H - 3}" font-size="10" fill="#4a4a4a" text-anchor="end">now</text>
${paths}</svg>
<p class="chart-now">${c.lines.map((l, i) => html`<span class="key"><span class="line-key k-${l.colour}">${l.dashed ? '┄' : '━'}</span> ${latest[i]}</span> `)}</p></figure>`;
}
