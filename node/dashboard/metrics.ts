/**
 * Prometheus metrics of a node (prom-client): requests and latency per service (recorded where the
 * hive hands a message to a service), and, read at scrape time, hive call counters, restarts from
 * the supervision journal, and every numeric figure a service reports (queue depth, retries, dead
 * letters, syslog received/invalid/dropped, ...), and every figure that is a table of numbers by key
 * (the syslog receiver's notAllowedFrom: refusals per source address) with the key as a label.
 */
import type { Registry } from 'prom-client';
import type { RequestCounts } from './request-stats.js';
import { RequestStats } from './request-stats.js';

/** What the metrics read at scrape time. */
export interface MetricSources {
  hive: () => Record<string, number>;
  services: () => Array<{ kind: string; name: string; status: Record<string, unknown> }>;
  restarts: () => Array<{ path: string; restarts: number; crashes: number }>;
}

/** A figure that is a table of finite numbers (and not empty). */
function numbersByKey(v: unknown): v is Record<string, number> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const values = Object.values(v);
  return values.length > 0 && values.every((n) => typeof n === 'number' && Number.isFinite(n));
}

export class NodeMetrics {
  /** The gauges read at scrape time: prom-client is loaded at the first scrape, not when every node starts. */
  private registry: Promise<Registry> | undefined;
  private type = 'text/plain; version=0.0.4; charset=utf-8';
  private readonly requests = new RequestStats();
  private sources: MetricSources | undefined;

  private async gauges(): Promise<Registry> {
    const { Gauge, Registry } = await import('prom-client');
    const registry = new Registry();
    this.type = registry.contentType;
    const read = <T>(f: (s: MetricSources) => T, fallback: T): T => (this.sources ? f(this.sources) : fallback);
    new Gauge({
      name: 'hivenode_hive_operations',
      help: 'Hive operations since start by kind (calls, executes, emits, dropped, failures).',
      labelNames: ['operation'],
      registers: [registry],
      collect() {
        for (const [op, n] of Object.entries(read((s) => s.hive(), {}))) this.set({ operation: op }, n);
      },
    });
    new Gauge({
      name: 'hivenode_actor_supervision_events',
      help: 'Restarts and crashes of each actor since start.',
      labelNames: ['actor', 'event'],
      registers: [registry],
      collect() {
        for (const a of read((s) => s.restarts(), [])) {
          this.set({ actor: a.path, event: 'restart' }, a.restarts);
          this.set({ actor: a.path, event: 'crash' }, a.crashes);
        }
      },
    });
    new Gauge({
      name: 'hivenode_service_figure',
      help: 'Every numeric figure a service reports (queue size, retried, deadLettered, received, invalid, dropped, inFlight, ...).',
      labelNames: ['service', 'kind', 'figure'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of read((x) => x.services(), [])) {
          for (const [k, v] of Object.entries(s.status))
            if (typeof v === 'number' && Number.isFinite(v)) this.set({ service: s.name, kind: s.kind, figure: k }, v);
        }
      },
    });
    new Gauge({
      name: 'hivenode_service_figure_by_key',
      help: "Every figure a service reports as numbers by key (notAllowedFrom: syslog sources refused by AllowFrom; rateLimitedFrom: syslog sources over their SourceRate; each bounded to the most counted plus 'other').",
      labelNames: ['service', 'kind', 'figure', 'key'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of read((x) => x.services(), [])) {
          for (const [figure, table] of Object.entries(s.status)) {
            if (!numbersByKey(table)) continue;
            for (const [key, v] of Object.entries(table)) this.set({ service: s.name, kind: s.kind, figure, key }, v);
          }
        }
      },
    });
    return registry;
  }

  /** Connects the scrape-time readers (once the node is up). */
  attach(sources: MetricSources): void {
    this.sources = sources;
  }

  /** A recorder of requests and latency for one service. */
  recorder(service: string, kind: string): (code: number, seconds: number) => void {
    return this.requests.recorder(service, kind);
  }

  /** Every service's request counters now (the console samples them). */
  requestCounts(): RequestCounts[] {
    return this.requests.counts();
  }

  async text(): Promise<string> {
    this.registry ??= this.gauges();
    const gauges = await (await this.registry).metrics();
    return `${this.requests.text()}${gauges}`;
  }

  /** The Prometheus text's content type (prom-client's, once loaded by `text`). */
  get contentType(): string {
    return this.type;
  }
}
