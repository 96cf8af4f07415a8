/**
 * The last 15 minutes of the node, sampled every 2 s from counters the node keeps anyway (no hive
 * traffic, so watching does not change what is watched): requests, errors and latency buckets per
 * service (rates and p99 are differences of two samples), each queue's entries per state from its
 * status figures, restarts per service from the supervision journal's totals. The live page draws it,
 * /api/live returns it, and each sample is pushed to the open streams.
 */
import type { RequestCounts } from '../dashboard/request-stats.js';
import { BUCKETS } from '../dashboard/request-stats.js';
import type { ConsoleSources } from './sources.js';
import { idOf } from '../hive-roster.js';
import { figureAt, sendCounts } from '../wiring.js';

const SAMPLE_MS = 2_000;
export const WINDOW_MS = 15 * 60_000;

/** The states a queue's depth is charted by (its status figure `states`; entries being delivered count as waiting). */
type DepthState = 'waiting' | 'scheduled' | 'retrying' | 'dead' | 'done';

/** A queue's entries per state at one sample. */
type QueueDepth = Record<DepthState, number>;

/**
 * Who sent on a channel: a service of this node (node '') or of another node of the hive (its roster
 * id), and which of its sends (its label: two sends may share a channel, node/wiring.ts).
 */
export interface Sender {
  node: string;
  service: string;
  channel: string;
  label: string;
}

const sentKey = (s: Sender): string => `${s.node}\n${s.service}\n${s.channel}\n${s.label}`;

/**
 * A counter of a service of this node that an edge without a hive sender is labelled by: a figure of
 * its status (a dotted path: 'accepted', 'received', 'poller.polls', 'sent'), or REQUESTS_FIGURE for
 * the messages it handled (an HTTP client's requests to its upstream).
 */
export interface CountedFigure {
  service: string;
  figure: string;
}

export const REQUESTS_FIGURE = '(requests)';

/**
 * The status figures sampled: for such edges the gateway's accepted requests, a syslog service's
 * received and sent messages, an SQL poller's polls; a queue's entries in (added) and out (delivered, died).
 */
const COUNTED_FIGURES = ['accepted', 'received', 'sent', 'poller.polls', 'added', 'delivered', 'died'] as const;

const countedKey = (c: CountedFigure): string => `${c.service}\n${c.figure}`;

/**
 * The figure a front door counts its requests by, for the kinds whose requests come from outside the
 * hive: the hive's deliveries to a gateway are none, so its chart was flat and it was listed as idle
 * beside thousands of accepted requests.
 */
const FRONT_DOOR_FIGURE: Readonly<Record<string, CountedFigure['figure'] | undefined>> = { gateway: 'accepted' };

/** A sent count and when it was read (this node: the sample's time; another node: when it wrote its roster entry). */
interface SentAt {
  t: number;
  n: number;
}

interface Sample {
  t: number;
  requests: Map<string, RequestCounts>;
  sent: Map<string, SentAt>;
  /** The figures edges without a hive sender are counted by (COUNTED_FIGURES, REQUESTS_FIGURE), by service. */
  counted: Map<string, number>;
  queues: Map<string, QueueDepth>;
  restarts: Map<string, number>;
}

type Point = number | null;

export interface ServiceSeries {
  name: string;
  kind: string;
  /** Requests per second in each interval. */
  rate: Point[];
  errors: Point[];
  /** The 99th percentile latency in seconds (null when nothing was answered). */
  p99: Point[];
}

export interface LiveSeries {
  intervalMs: number;
  /** The end of each interval (epoch ms). */
  times: number[];
  services: ServiceSeries[];
  /** Per queue, its entries in each state at the end of each interval. */
  queues: Array<{ name: string } & { [K in DepthState]: number[] }>;
  /** Restarts of each service's actors within each interval. */
  restarts: Array<{ name: string; values: number[] }>;
}

/** The q-quantile (seconds) of answers spread over the buckets, interpolated within its bucket (as Prometheus does). */
function quantile(q: number, buckets: number[]): Point {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i]!;
    if (seen + n >= rank && n > 0) {
      const low = i === 0 ? 0 : BUCKETS[i - 1]!;
      const high = BUCKETS[i] ?? BUCKETS[BUCKETS.length - 1]!;
      return low + (high - low) * ((rank - seen) / n);
    }
    seen += n;
  }
  return BUCKETS[BUCKETS.length - 1]!;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A queue's entries per state from its status figure `states` (zeros while it has none: still loading). */
function depthOf(figures: Record<string, unknown>): QueueDepth {
  const states = (typeof figures.states === 'object' && figures.states !== null ? figures.states : {}) as Record<
    string,
    unknown
  >;
  return {
    waiting: num(states.waiting),
    scheduled: num(states.scheduled),
    retrying: num(states.retrying),
    dead: num(states.dead),
    done: num(states.done),
  };
}

export class LiveHistory {
  private readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<() => void>();
  private readonly keep: number;

  constructor(
    private readonly sources: ConsoleSources,
    readonly intervalMs = SAMPLE_MS,
  ) {
    this.keep = Math.ceil(WINDOW_MS / intervalMs) + 1;
  }

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.listeners.clear();
  }

  /** Called after every sample; returns the unsubscribe. */
  onSample(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** When the latest sample was taken (0 before the first). */
  get lastSampleAt(): number {
    return this.samples.at(-1)?.t ?? 0;
  }

  sample(now = Date.now()): void {
    const services = this.sources.services();
    // each status read once a sample: a queue's counts its states
    const statuses = new Map(services.map((s) => [s.name, s.status()]));
    const queues = new Map<string, QueueDepth>();
    for (const s of services) if (s.kind === 'queue') queues.set(s.name, depthOf(statuses.get(s.name)!));
    const restarts = new Map<string, number>();
    for (const a of this.sources.actorTotals()) {
      const service = a.path.split('/')[2];
      if (service !== undefined) restarts.set(service, (restarts.get(service) ?? 0) + a.restarts);
    }
    const sent = new Map<string, SentAt>();
    for (const s of services) {
      const byChannel = this.sources.sent(s.name);
      for (const send of sendCounts(
        s.kind,
        s.config,
        (channel) => byChannel.get(channel)?.n ?? 0,
        () => statuses.get(s.name)!,
      ))
        sent.set(sentKey({ node: '', service: s.name, channel: send.channel, label: send.label }), {
          t: now,
          n: send.sent,
        });
    }
    for (const n of this.sources.nodes()) {
      if (n.self) continue;
      const t = Date.parse(n.seenAt);
      for (const s of n.services)
        for (const send of s.sends ?? [])
          sent.set(sentKey({ node: idOf(n), service: s.name, channel: send.channel, label: send.label }), {
            t,
            n: send.sent,
          });
    }
    const requests = new Map(this.sources.metrics.requestCounts().map((r) => [r.service, r]));
    // a few figures of each service, whether or not the flow was drawn yet: an edge has its rate as soon as it is
    const counted = new Map<string, number>();
    for (const s of services) {
      const status = statuses.get(s.name)!;
      for (const figure of COUNTED_FIGURES) {
        const n = figureAt(status, figure);
        if (n !== undefined) counted.set(countedKey({ service: s.name, figure }), n);
      }
      const handled = requests.get(s.name)?.count;
      if (handled !== undefined) counted.set(countedKey({ service: s.name, figure: REQUESTS_FIGURE }), handled);
    }
    this.samples.push({ t: now, requests, queues, restarts, sent, counted });
    if (this.samples.length > this.keep) this.samples.shift();
    for (const l of [...this.listeners]) l();
  }

  series(): LiveSeries {
    const pairs = this.samples.slice(1).map((s, i) => [this.samples[i]!, s] as const);
    /** Per second over each interval, of a count read from both ends (null where either is missing). */
    const perInterval = (read: (s: Sample) => number | undefined): Point[] =>
      pairs.map(([a, b]) => {
        const x = read(a);
        const y = read(b);
        return x === undefined || y === undefined || b.t <= a.t ? null : ((y - x) * 1000) / (b.t - a.t);
      });
    const services = this.sources.services().map((svc): ServiceSeries => {
      const door = FRONT_DOOR_FIGURE[svc.kind];
      if (door !== undefined) {
        // a front door takes its requests from outside the hive: its own count, not the hive's deliveries
        const key = countedKey({ service: svc.name, figure: door });
        const none = pairs.map((): Point => null);
        return {
          name: svc.name,
          kind: svc.kind,
          rate: perInterval((s) => s.counted.get(key)),
          errors: none,
          p99: none,
        };
      }
      const p99 = pairs.map(([a, b]): Point => {
        const x = a.requests.get(svc.name);
        const y = b.requests.get(svc.name);
        return x && y
          ? quantile(
              0.99,
              y.buckets.map((n, i) => n - (x.buckets[i] ?? 0)),
            )
          : null;
      });
      return {
        name: svc.name,
        kind: svc.kind,
        rate: perInterval((s) => s.requests.get(svc.name)?.count),
        errors: perInterval((s) => s.requests.get(svc.name)?.errors),
        p99,
      };
    });
    const queueNames = [...(this.samples.at(-1)?.queues.keys() ?? [])];
    return {
      intervalMs: this.intervalMs,
      times: pairs.map(([, b]) => b.t),
      services,
      queues: queueNames.map((name) => {
        const of = (k: DepthState): number[] => pairs.map(([, b]) => b.queues.get(name)?.[k] ?? 0);
        return {
          name,
          waiting: of('waiting'),
          scheduled: of('scheduled'),
          retrying: of('retrying'),
          dead: of('dead'),
          done: of('done'),
        };
      }),
      restarts: [...(this.samples.at(-1)?.restarts.keys() ?? [])].map((name) => ({
        name,
        values: pairs.map(([a, b]) => (b.restarts.get(name) ?? 0) - (a.restarts.get(name) ?? 0)),
      })),
    };
  }

  /** A service's requests/s, errors/s and p99 over the last `windowMs` (10 s: steadier than one interval) — what the flow labels its edges with. */
  latest(
    service: string,
    windowMs = 10_000,
  ): { rate: number; errors: number; failures: number; p99: Point } | undefined {
    const b = this.samples.at(-1);
    const a = this.samples.find((s) => b !== undefined && s.t >= b.t - windowMs - this.intervalMs / 2);
    const x = a?.requests.get(service);
    const y = b?.requests.get(service);
    if (!a || !b || !x || !y || b.t <= a.t) return undefined;
    const seconds = (b.t - a.t) / 1000;
    return {
      rate: (y.count - x.count) / seconds,
      errors: (y.errors - x.errors) / seconds,
      failures: (y.failures - x.failures) / seconds,
      p99: quantile(
        0.99,
        y.buckets.map((n, i) => n - (x.buckets[i] ?? 0)),
      ),
    };
  }

  /** How fast a counted figure grew per second over about the last `windowMs` (undefined until two samples hold it). */
  countedRate(figure: CountedFigure, windowMs = 10_000): number | undefined {
    const key = countedKey(figure);
    return this.windowRate((s) => {
      const n = s.counted.get(key);
      return n === undefined ? undefined : { t: s.t, n };
    }, windowMs);
  }

  /** A queue's entries per second in (added) and out (delivered or died) over about the last `windowMs` (undefined before two samples). */
  queueRates(queue: string, windowMs = 10_000): { in?: number; out?: number } {
    const rate = (figure: string): number | undefined => this.countedRate({ service: queue, figure }, windowMs);
    const added = rate('added');
    const delivered = rate('delivered');
    const died = rate('died');
    return {
      ...(added === undefined ? {} : { in: added }),
      ...(delivered === undefined || died === undefined ? {} : { out: delivered + died }),
    };
  }

  /**
   * Messages per second a service sent on a channel over about the last `windowMs`: this node's from
   * its counters (a channel it never sent on is 0), another node's from two of its roster entries
   * (undefined until there are two: they come every 5 s, so the window is longer).
   */
  sentRate(from: Sender, windowMs = from.node === '' ? 10_000 : 15_000): number | undefined {
    const key = sentKey(from);
    return this.windowRate((s) => s.sent.get(key) ?? (from.node === '' ? { t: s.t, n: 0 } : undefined), windowMs);
  }

  /** Per second, the growth of a count (`at` reads it and when it was read from a sample) from the oldest reading within about `windowMs` to the newest. */
  private windowRate(at: (s: Sample) => SentAt | undefined, windowMs: number): number | undefined {
    const last = this.samples.at(-1);
    const y = last && at(last);
    if (!y) return undefined;
    const since = y.t - windowMs - this.intervalMs / 2;
    // from the newest back to the window's start (a count is never read after its sample): a few samples, not the 15 minutes
    let x: SentAt | undefined;
    for (let i = this.samples.length - 2; i >= 0 && this.samples[i]!.t >= since; i--) {
      const c = at(this.samples[i]!);
      if (c && c.t >= since && c.t < y.t) x = c;
    }
    return x && ((y.n - x.n) * 1000) / (y.t - x.t);
  }
}
