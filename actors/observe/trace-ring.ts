/**
 * The recent sampled traces of this process, kept for the console's waterfall (docs/ARCHITECTURE.md,
 * Tracing): finished spans grouped by trace id, in a ring bounded by traces, by spans per trace and
 * by spans in all, so a busy node keeps the latest traces and never grows. A trace that gets a new span (a queue
 * retry hours later) becomes recent again. Everything handed out is plain data, copied.
 *
 * New traces come in at most `newTracesPerSecond` a second (error traces have a budget of their
 * own): a busy node would turn the whole ring over every few milliseconds, so no one could read a
 * trace in it anyway, while every span kept outlives the collector's young generation and is
 * promoted: on the gateway bench that cost 3 µs a request, as much as recording and exporting.
 * A trace already held takes every span it gets. A trace begun in this process is admitted, or not,
 * when its root span begins (admitNew): its spans then say so (Admission), and those of a trace
 * refused skip the ring without looking it up, unless they end in error (a look-up and the hash of
 * the trace id for every span was most of what the ring cost the gateway bench).
 */

export type SpanStatus = 'unset' | 'ok' | 'error';

/** One finished span. */
export interface RingSpan {
  traceId: string;
  spanId: string;
  /** Absent for the trace's root span (or when the parent is in another process that sent nothing here). */
  parentSpanId?: string;
  name: string;
  /** The service instance (NAME) that recorded it. */
  service: string;
  /** Start, milliseconds since the epoch. */
  start: number;
  /** Duration in milliseconds. */
  duration: number;
  status: SpanStatus;
  statusMessage?: string;
  attributes: Record<string, string | number | boolean>;
}

/** One trace: its spans, earliest first. */
export interface RingTrace {
  traceId: string;
  /** Earliest start among the spans. */
  start: number;
  /** From the earliest start to the latest end, milliseconds. */
  duration: number;
  /** The root span's name, else the earliest span's. */
  name: string;
  services: string[];
  error: boolean;
  spans: RingSpan[];
  /** Spans not kept because the trace reached the per-trace bound. */
  droppedSpans: number;
}

/** A trace as the list of recent traces shows it (no spans). */
export type TraceSummary = Omit<RingTrace, 'spans'> & { spanCount: number };

/**
 * Whether a span's trace came into the ring when it began (admitNew): 'in' or 'out'; 'unknown' for a
 * trace begun elsewhere (its first span here is admitted, or not, when it ends).
 */
export type Admission = 'in' | 'out' | 'unknown';

/** A span as kept: made into plain data only when read (the recorder adds thousands a second, the console reads a few). */
type Kept = RingSpan | (() => RingSpan);

interface Held {
  spans: Kept[];
  dropped: number;
}

export class TraceRing {
  // a Map keeps insertion order: the first key is the least recently touched trace
  private readonly traces = new Map<string, Held>();
  /** The trace touched last: already at the end of the order, so a run of its spans moves nothing. */
  private last: string | undefined;

  /** Spans kept over every trace. */
  private spans = 0;
  /** The second new traces are counted in, and how many came in it (all, and error ones). */
  private second = 0;
  private admitted = 0;
  private admittedErrors = 0;

  constructor(
    readonly maxTraces = 200,
    readonly maxSpansPerTrace = 200,
    readonly maxSpans = 5_000,
    readonly newTracesPerSecond = 100,
    private readonly clock: () => number = Date.now,
  ) {
    if (!(maxTraces >= 1) || !(maxSpansPerTrace >= 1) || !(maxSpans >= 1) || !(newTracesPerSecond >= 1))
      throw new RangeError('a trace ring holds at least one trace of one span');
  }

  get size(): number {
    return this.traces.size;
  }

  /** Adds a finished span; its trace becomes the most recent, and the least recent goes past the bound. */
  add(span: RingSpan): void {
    this.keep(span.traceId, span.status === 'error', this.clock())?.spans.push(copySpan(span));
  }

  /**
   * Adds a finished span of `traceId`, `source`, that `make` turns into plain data when the ring is
   * read (at most once); `error`: the span ended with an error status; `at`: when it ended
   * (milliseconds since the epoch), which the recorder has at hand: a clock read per span was a tenth
   * of the ring's cost. The source and the function come apart so that nothing is allocated for the
   * many spans a busy node's ring does not keep.
   */
  // eslint-disable-next-line max-params -- per recorded span: nothing allocated for the spans the ring does not keep (see above)
  addLazy<T>(
    traceId: string,
    source: T,
    make: (source: T) => RingSpan,
    error = false,
    at = this.clock(),
    admission: Admission = 'unknown',
  ): void {
    // a trace refused when it began is not looked for: only an error brings it in (on the error budget)
    if (admission === 'out' && !error) return;
    this.keep(traceId, error, at, admission === 'in')?.spans.push(() => make(source));
  }

  /**
   * Whether a trace beginning now in this process (its root span: `at`, milliseconds since the
   * epoch) comes into the ring, counted when it does: its spans are then added as 'in', those of a
   * trace refused as 'out' (addLazy).
   */
  admitNew(at: number): Admission {
    return this.admit(false, at) ? 'in' : 'out';
  }

  /** Whether a new trace may come in now (counted when it does). */
  private admit(error: boolean, at: number): boolean {
    const second = Math.floor(at / 1000);
    if (second !== this.second) {
      this.second = second;
      this.admitted = 0;
      this.admittedErrors = 0;
    }
    if (this.admitted < this.newTracesPerSecond) this.admitted++;
    else if (error && this.admittedErrors < this.newTracesPerSecond) this.admittedErrors++;
    else return false;
    return true;
  }

  /** Where a span of `traceId` goes (counted in), or undefined when it is not kept; `admitted`: its trace was counted in when it began. */
  private keep(traceId: string, error: boolean, at: number, admitted = false): Held | undefined {
    let held = this.traces.get(traceId);
    if (held === undefined) {
      if (!admitted && !this.admit(error, at)) return undefined;
      held = { spans: [], dropped: 0 };
      this.traces.set(traceId, held);
      if (this.traces.size > this.maxTraces) this.evictOldest();
    } else if (this.last !== traceId) {
      // most recent again: re-inserted at the end of the Map's order
      this.traces.delete(traceId);
      this.traces.set(traceId, held);
    }
    this.last = traceId;
    if (held.spans.length >= this.maxSpansPerTrace) {
      held.dropped++;
      return undefined;
    }
    this.spans++;
    // the oldest traces go until the spans fit (never the one just added to)
    while (this.spans > this.maxSpans && this.traces.size > 1) this.evictOldest();
    return held;
  }

  private evictOldest(): void {
    const oldest = this.traces.keys().next().value!;
    this.spans -= this.traces.get(oldest)!.spans.length;
    this.traces.delete(oldest);
  }

  /** The most recent traces first, at most `limit`. */
  recentTraces(limit = 50): TraceSummary[] {
    const out: TraceSummary[] = [];
    const ids = [...this.traces.keys()].reverse();
    for (const id of ids.slice(0, Math.max(0, limit))) {
      const { spans, ...summary } = this.build(id, this.traces.get(id)!);
      out.push({ ...summary, spanCount: spans.length });
    }
    return out;
  }

  /** One trace with its spans (ids are matched in any letter case), or undefined when the ring does not hold it. */
  traceById(traceId: string): RingTrace | undefined {
    const id = traceId.trim().toLowerCase();
    const held = this.traces.get(id);
    return held ? this.build(id, held) : undefined;
  }

  clear(): void {
    this.traces.clear();
    this.last = undefined;
    this.spans = 0;
  }

  private build(traceId: string, held: Held): RingTrace {
    for (let i = 0; i < held.spans.length; i++) {
      const kept = held.spans[i]!;
      if (typeof kept === 'function') held.spans[i] = kept();
    }
    const spans = (held.spans as RingSpan[]).map(copySpan).sort((a, b) => a.start - b.start);
    const start = Math.min(...spans.map((s) => s.start));
    const end = Math.max(...spans.map((s) => s.start + s.duration));
    const ids = new Set(spans.map((s) => s.spanId));
    // the root is the span whose parent is not in the trace (in this process); the earliest such one
    const root =
      spans.find((s) => s.parentSpanId === undefined) ?? spans.find((s) => !ids.has(s.parentSpanId!)) ?? spans[0]!;
    return {
      traceId,
      start,
      duration: end - start,
      name: root.name,
      services: [...new Set(spans.map((s) => s.service))],
      error: spans.some((s) => s.status === 'error'),
      spans,
      droppedSpans: held.dropped,
    };
  }
}

function copySpan(s: RingSpan): RingSpan {
  return { ...s, attributes: { ...s.attributes } };
}

/** The process's ring, fed by the tracer (actors/observe/tracing.ts) with every sampled span that ends. */
export const traceRing = new TraceRing();

/** The most recent sampled traces of this process, newest first. */
export function recentTraces(limit = 50): TraceSummary[] {
  return traceRing.recentTraces(limit);
}

/** One recent trace by its id (a trace id from a log line finds it), or undefined. */
export function traceById(traceId: string): RingTrace | undefined {
  return traceRing.traceById(traceId);
}
