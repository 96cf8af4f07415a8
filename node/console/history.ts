/**
 * The last 15 minutes of the node, sampled every 2 s from counters the node keeps anyway (no hive
 * traffic, so watching does not change what is watched): requests, errors and latency buckets per
 * service (rates and p99 are differences of two samples), each queue's depth from its status
 * figures, restarts per service from the supervision journal's totals. The live page draws it,
 * /api/live returns it, and each sample is pushed to the open streams.
 */
import type { RequestCounts } from '../dashboard/request-stats.js';
import { BUCKETS } from '../dashboard/request-stats.js';
import type { ConsoleSources } from './sources.js';

export const SAMPLE_MS = 2_000;
export const WINDOW_MS = 15 * 60_000;

/** A queue's depth from its status figures. */
export interface QueueDepth {
  /** Entries not yet delivered (waiting, scheduled, retrying, being delivered). */
  live: number;
  delivering: number;
  dead: number;
  done: number;
}

interface Sample {
  t: number;
  requests: Map<string, RequestCounts>;
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
  queues: Array<{ name: string } & { [K in keyof QueueDepth]: number[] }>;
  /** Restarts of each service's actors within each interval. */
  restarts: Array<{ name: string; values: number[] }>;
}

/** The q-quantile (seconds) of answers spread over the buckets, interpolated within its bucket (as Prometheus does). */
export function quantile(q: number, buckets: number[]): Point {
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
    const queues = new Map<string, QueueDepth>();
    for (const s of services) {
      if (s.kind !== 'queue') continue;
      const f = s.status();
      queues.set(s.name, { live: num(f.size), delivering: num(f.deliveringNow), dead: num(f.deadKept), done: num(f.doneKept) });
    }
    const restarts = new Map<string, number>();
    for (const a of this.sources.actorTotals()) {
      const service = a.path.split('/')[2];
      if (service !== undefined) restarts.set(service, (restarts.get(service) ?? 0) + a.restarts);
    }
    this.samples.push({ t: now, requests: new Map(this.sources.metrics.requestCounts().map((r) => [r.service, r])), queues, restarts });
    if (this.samples.length > this.keep) this.samples.shift();
    for (const l of [...this.listeners]) l();
  }

  series(): LiveSeries {
    const pairs = this.samples.slice(1).map((s, i) => [this.samples[i]!, s] as const);
    const services = this.sources.services().map((svc): ServiceSeries => {
      const rate: Point[] = [];
      const errors: Point[] = [];
      const p99: Point[] = [];
      for (const [a, b] of pairs) {
        const x = a.requests.get(svc.name);
        const y = b.requests.get(svc.name);
        const seconds = (b.t - a.t) / 1000;
        if (!x || !y || seconds <= 0) {
          rate.push(null);
          errors.push(null);
          p99.push(null);
          continue;
        }
        rate.push((y.count - x.count) / seconds);
        errors.push((y.errors - x.errors) / seconds);
        p99.push(quantile(0.99, y.buckets.map((n, i) => n - (x.buckets[i] ?? 0))));
      }
      return { name: svc.name, kind: svc.kind, rate, errors, p99 };
    });
    const queueNames = [...(this.samples.at(-1)?.queues.keys() ?? [])];
    return {
      intervalMs: this.intervalMs,
      times: pairs.map(([, b]) => b.t),
      services,
      queues: queueNames.map((name) => {
        const of = (k: keyof QueueDepth): number[] => pairs.map(([, b]) => b.queues.get(name)?.[k] ?? 0);
        return { name, live: of('live'), delivering: of('delivering'), dead: of('dead'), done: of('done') };
      }),
      restarts: [...(this.samples.at(-1)?.restarts.keys() ?? [])].map((name) => ({ name, values: pairs.map(([a, b]) => (b.restarts.get(name) ?? 0) - (a.restarts.get(name) ?? 0)) })),
    };
  }

  /** A service's requests/s, errors/s and p99 over the last `windowMs` (10 s: steadier than one interval) — what the flow labels its edges with. */
  latest(service: string, windowMs = 10_000): { rate: number; errors: number; p99: Point } | undefined {
    const b = this.samples.at(-1);
    const a = this.samples.find((s) => b !== undefined && s.t >= b.t - windowMs - this.intervalMs / 2);
    const x = a?.requests.get(service);
    const y = b?.requests.get(service);
    if (!a || !b || !x || !y || b.t <= a.t) return undefined;
    const seconds = (b.t - a.t) / 1000;
    return { rate: (y.count - x.count) / seconds, errors: (y.errors - x.errors) / seconds, p99: quantile(0.99, y.buckets.map((n, i) => n - (x.buckets[i] ?? 0))) };
  }
}
