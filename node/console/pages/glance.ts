/**
 * The node at a glance (README, Console): a strip of totals — services ok, HTTP requests and
 * failures per second, the queues' entries per state, restarts in 15 minutes, the hive — each a link
 * to where it is shown in full; and the queues in one table with their entries per state and their
 * rates in (added) and out (delivered or died). The live page opens with both, the queues page
 * shows the table with each queue's wiring.
 */
import type { Html } from '../html.js';
import { html } from '../html.js';
import type { ServiceHealth } from '../health.js';
import type { LiveSeries, ServiceSeries } from '../history.js';
import { ENTRY_STATES } from '../queue-reads.js';
import { count, perSecond } from './format.js';

type QueueCounts = Record<(typeof ENTRY_STATES)[number], number>;

/** A queue's row: its counts and, where the history has them, its rates in and out. */
export interface QueueGlance {
  name: string;
  status: string;
  counts: QueueCounts;
  rates: { in?: number; out?: number };
  /** The channel it listens on and where it delivers (the queues page shows them). */
  channel?: string;
  target?: string;
}

/** The mean of a series' latest `n` values that are there (about the last 10 s), or undefined. */
export function recent(values: ReadonlyArray<number | null>, n = 5): number | undefined {
  const got = values.slice(-n).filter((v): v is number => v !== null);
  return got.length === 0 ? undefined : got.reduce((a, b) => a + b, 0) / got.length;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A queue's row from its status figures (`status`, `states`: no call to the queue). */
export function queueGlanceOf(
  name: string,
  figures: Readonly<Record<string, unknown>>,
  rates: QueueGlance['rates'],
): QueueGlance {
  const states = (typeof figures.states === 'object' && figures.states !== null ? figures.states : {}) as Record<
    string,
    unknown
  >;
  return {
    name,
    status: typeof figures.status === 'string' ? figures.status : '',
    counts: Object.fromEntries(ENTRY_STATES.map((s) => [s, num(states[s])])) as QueueCounts,
    rates,
  };
}

const qHref = (q: string, state?: string): string =>
  `/queues/${encodeURIComponent(q)}${state ? `?state=${state}` : ''}`;

/** The queues' table: on the queues page with each queue's wiring; on the live page without, its body replaced by the stream. */
export function queueTable(rows: Html, opts: { id: string; bodyId?: string; wiring: boolean; caption: string }): Html {
  return html`<div class="table-wrap" tabindex="0"><table id="${opts.id}"><caption class="muted">${opts.caption}</caption>
<thead><tr><th scope="col">queue</th>${opts.wiring ? html`<th scope="col">listens on</th><th scope="col">delivers to</th>` : ''}<th scope="col">status</th>${ENTRY_STATES.map((s) => html`<th scope="col" class="num">${s}</th>`)}<th scope="col" class="num"><abbr title="entries added per second over the last 10 s">in</abbr></th><th scope="col" class="num"><abbr title="entries delivered or died per second over the last 10 s">out</abbr></th></tr></thead>
<tbody${opts.bodyId ? html` id="${opts.bodyId}"` : ''}>${rows}</tbody></table></div>`;
}

/** The live page's queues table. */
export const queueTableFrame = (rows: Html): Html =>
  queueTable(rows, {
    id: 'queues-glance',
    bodyId: 'queues-glance-body',
    wiring: false,
    caption: "Entries per state, and per second in and out; a queue's name opens its entries.",
  });

export function queueRows(queues: readonly QueueGlance[], wiring: boolean): Html {
  const rate = (v: number | undefined): string => (v === undefined ? '—' : perSecond(v));
  return html`${queues.map(
    (
      q,
    ) => html`<tr data-queue="${q.name}"><th scope="row"><a href="${qHref(q.name)}">${q.name}</a></th>${wiring ? html`<td>${q.channel ?? ''}</td><td>${q.target ?? ''}</td>` : ''}<td class="${q.status === 'paused' ? 'warn' : 'ok'}">${q.status}</td>
${ENTRY_STATES.map((s) => html`<td class="num${s === 'dead' && q.counts.dead > 0 ? ' bad' : ''}" data-state="${s}"><a href="${qHref(q.name, s)}" aria-label="${q.name} ${s}: ${count(q.counts[s])}">${count(q.counts[s])}</a></td>`)}<td class="num" data-rate="in">${rate(q.rates.in)}</td><td class="num" data-rate="out">${rate(q.rates.out)}</td></tr>`,
  )}`;
}

/** What the strip adds up. */
export interface GlanceInput {
  series: LiveSeries;
  health: ReadonlyMap<string, ServiceHealth>;
  queues: readonly QueueGlance[];
  hive: { kind: string; connected: boolean };
  /** Answers per second that failed (5xx: the service or what it depends on), summed over the services. */
  failures: number;
}

interface Tile {
  id: string;
  value: string;
  label: string;
  href?: string;
  tone?: 'ok' | 'warn' | 'bad';
}

function tiles(g: GlanceInput): Tile[] {
  const healths = [...g.health.values()];
  const ok = healths.filter((h) => h.health === 'ok').length;
  const stopped = healths.filter((h) => h.health === 'bad').length;
  const doors = g.series.services.filter((s) => s.kind === 'gateway');
  const sum = (list: readonly ServiceSeries[], pick: (s: ServiceSeries) => ReadonlyArray<number | null>): number =>
    list.reduce((a, s) => a + (recent(pick(s)) ?? 0), 0);
  const total = (state: (typeof ENTRY_STATES)[number]): number => g.queues.reduce((a, q) => a + q.counts[state], 0);
  const one = g.queues.length === 1 ? g.queues[0]!.name : undefined;
  const stateHref = (state: string): string => (one ? qHref(one, state) : '/queues');
  const restarts = g.series.restarts.reduce((a, r) => a + r.values.reduce((x, y) => x + y, 0), 0);
  const out: Tile[] = [
    {
      id: 'services',
      value: `${ok} of ${healths.length}`,
      label: stopped ? `services ok, ${stopped} stopped` : 'services ok',
      href: '/flow',
      tone: stopped ? 'bad' : ok < healths.length ? 'warn' : 'ok',
    },
  ];
  if (doors.length) out.push({ id: 'http', value: perSecond(sum(doors, (s) => s.rate)), label: 'HTTP requests' });
  out.push({
    id: 'failures',
    value: perSecond(g.failures),
    label: 'failures (5xx)',
    ...(g.failures > 0 ? { tone: 'warn' as const } : {}),
  });
  if (g.queues.length) {
    for (const state of ENTRY_STATES)
      out.push({
        id: state,
        value: count(total(state)),
        label: state,
        href: stateHref(state),
        ...(state === 'dead' && total(state) > 0
          ? { tone: 'bad' as const }
          : state === 'retrying' && total(state) > 0
            ? { tone: 'warn' as const }
            : {}),
      });
  }
  out.push({
    id: 'restarts',
    value: count(restarts),
    label: 'restarts in 15 min',
    href: '/journal?event=restart',
    ...(restarts > 0 ? { tone: 'warn' as const } : {}),
  });
  out.push({
    id: 'hive',
    value: g.hive.connected ? 'connected' : 'disconnected',
    label: `hive (${g.hive.kind})`,
    tone: g.hive.connected ? 'ok' : 'bad',
  });
  return out;
}

/** The strip's tiles (a list: each a figure and what it counts, a link where it is shown in full). */
export function glanceStrip(g: GlanceInput): Html {
  return html`${tiles(g).map((t) => {
    const inner = html`<span class="tile-value${t.tone ? ` ${t.tone}` : ''}">${t.value}</span> <span class="tile-label">${t.label}</span>`;
    return html`<li data-tile="${t.id}">${t.href ? html`<a class="tile" href="${t.href}">${inner}</a>` : html`<span class="tile">${inner}</span>`}</li>`;
  })}`;
}
