/**
 * Requests and latency per service, counted by hand: prom-client's labelled counter and histogram
 * cost about 1.6 µs per message here, which halved the embedded hive's call rate; plain counters
 * cost next to nothing, and are written out in Prometheus text format at scrape time.
 */

export const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

class ServiceStats {
  readonly byCode = new Map<number, number>();
  readonly buckets = new Array<number>(BUCKETS.length).fill(0);
  count = 0;
  sum = 0;
  constructor(
    readonly service: string,
    readonly kind: string,
  ) {}

  record(code: number, seconds: number): void {
    this.byCode.set(code, (this.byCode.get(code) ?? 0) + 1);
    this.count++;
    this.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= BUCKETS[i]!) {
        this.buckets[i]!++;
        break;
      }
    }
  }
}

/** One service's counters at one moment (the console's live charts take differences of two). */
export interface RequestCounts {
  service: string;
  count: number;
  /** Answers with a Code outside 2xx. */
  errors: number;
  /**
   * Answers with a 5xx Code: the service (or what it depends on) failed. A 4xx is the caller's input
   * refused — a service answering 400 to bad requests is working, not failing.
   */
  failures: number;
  /** Answers per latency bucket (BUCKETS; not cumulative), the last one for slower ones. */
  buckets: number[];
}

export class RequestStats {
  private readonly services: ServiceStats[] = [];

  /** The counters of every service now. */
  counts(): RequestCounts[] {
    return this.services.map((s) => {
      let ok = 0;
      let failures = 0;
      for (const [code, n] of s.byCode) {
        if (code >= 200 && code < 300) ok += n;
        else if (code >= 500) failures += n;
      }
      const inBuckets = s.buckets.reduce((a, b) => a + b, 0);
      return {
        service: s.service,
        count: s.count,
        errors: s.count - ok,
        failures,
        buckets: [...s.buckets, s.count - inBuckets],
      };
    });
  }

  recorder(service: string, kind: string): (code: number, seconds: number) => void {
    const s = new ServiceStats(service, kind);
    this.services.push(s);
    return (code, seconds) => s.record(code, seconds);
  }

  /** The two metric families in Prometheus text exposition format. */
  text(): string {
    const out = [
      '# HELP hivenode_requests_total Messages handled per service and result code.',
      '# TYPE hivenode_requests_total counter',
    ];
    for (const s of this.services)
      for (const [code, n] of s.byCode)
        out.push(`hivenode_requests_total{service="${s.service}",kind="${s.kind}",code="${code}"} ${n}`);
    out.push(
      '# HELP hivenode_request_duration_seconds Time from a message reaching a service to its answer.',
      '# TYPE hivenode_request_duration_seconds histogram',
    );
    for (const s of this.services) {
      const labels = `service="${s.service}",kind="${s.kind}"`;
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        out.push(`hivenode_request_duration_seconds_bucket{${labels},le="${le}"} ${cumulative}`);
      });
      out.push(
        `hivenode_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`,
        `hivenode_request_duration_seconds_sum{${labels}} ${s.sum}`,
        `hivenode_request_duration_seconds_count{${labels}} ${s.count}`,
      );
    }
    return `${out.join('\n')}\n`;
  }
}
