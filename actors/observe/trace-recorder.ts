/**
 * The recording half of tracing (docs/ARCHITECTURE.md, Tracing): every hop a span (an
 * `@opentelemetry/api` Span, recorded-span.ts) when the configured sampler samples it, each sampled
 * one kept in the trace ring and exported: in batches over OTLP/HTTP (otlp-export.ts), or, when
 * a test gives an SDK SpanExporter (the in-memory one), handed to it at once as the SDK's
 * ReadableSpan. Loaded by tracing.ts only when something records.
 */
import type { Attributes, HrTime, SpanContext } from '@opentelemetry/api';
import { SpanStatusCode, createTraceState } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from '../../config/tracing.js';
import type { SpanParent } from './trace-context.js';
import {
  boundTracestate,
  formatTraceparent,
  newSampledTraceparent,
  newSpanId,
  parseTraceparent,
  sampledAt,
  sampledBytes,
  spanIdAt,
  spanIdBytes,
} from './trace-context.js';
import type { RingSpan, SpanStatus, TraceRing } from './trace-ring.js';
import type { Hop, HopKind, Recorder } from './trace-hop.js';
import { KINDS, RecordedSpan, allAttributes, samplerOf } from './recorded-span.js';
import { OtlpBatchExporter } from './otlp-export.js';

const SCOPE = 'hivenode';
const STATUS: Record<number, SpanStatus> = {
  [SpanStatusCode.UNSET]: 'unset',
  [SpanStatusCode.OK]: 'ok',
  [SpanStatusCode.ERROR]: 'error',
};

/** The span as plain data for the trace ring (made only when the ring is read). */
function ringSpan(span: RecordedSpan): RingSpan {
  const attributes: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(allAttributes(span)))
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') attributes[k] = v;
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
    name: span.name,
    service: span.service,
    start: span.startMs,
    duration: span.endMs - span.startMs,
    status: STATUS[span.status.code] ?? 'unset',
    ...(span.status.message ? { statusMessage: span.status.message } : {}),
    attributes,
  };
}

const hrTime = (ms: number): HrTime => {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
};

/** The SDK's view of a finished span, for a SpanExporter a test gives. */
function readable(span: RecordedSpan, resource: ReadableSpan['resource']): ReadableSpan {
  const parent: SpanContext | undefined = span.parentSpanId
    ? {
        traceId: span.traceId,
        spanId: span.parentSpanId,
        traceFlags: span.traceFlags,
        isRemote: true,
        ...(span.traceState ? { traceState: createTraceState(span.traceState) } : {}),
      }
    : undefined;
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    ...(parent ? { parentSpanContext: parent } : {}),
    startTime: hrTime(span.startMs),
    endTime: hrTime(span.endMs),
    duration: hrTime(span.endMs - span.startMs),
    status: span.status,
    attributes: allAttributes(span),
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: { name: SCOPE },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** One recorded hop: the span and the traceparent naming it. */
class RecordedHop implements Hop {
  readonly traceId: string;
  readonly traceparent: string;
  constructor(
    readonly span: RecordedSpan,
    readonly tracestate: string | undefined,
  ) {
    this.traceId = span.traceId;
    this.traceparent = span.traceparent;
  }
  end(code: number, message?: string): void {
    if (code >= 500)
      this.span.setStatus(message ? { code: SpanStatusCode.ERROR, message } : { code: SpanStatusCode.ERROR });
    this.span.endWithCode(code);
  }
}

const noEnd = (): void => undefined;

/**
 * Points `span` at its ids' bytes, where they are at hand (its ids the last made: a new trace's, or a
 * new span id): a root span's, or a span's under a parent recorded in this process; under a parent
 * from elsewhere the encoder reads the hex.
 */
function pointAtIdBytes(span: RecordedSpan, parent: SpanParent | undefined): void {
  if (parent === undefined) {
    span.traceBytes = span.spanBytes = sampledBytes();
    span.traceAt = sampledAt();
    span.spanAt = span.traceAt + 16;
    return;
  }
  if (parent.traceBytes === undefined || parent.spanBytes === undefined) return;
  span.traceBytes = parent.traceBytes;
  span.traceAt = parent.traceAt ?? 0;
  span.parentBytes = parent.spanBytes;
  span.parentAt = parent.spanAt ?? 0;
  span.spanBytes = spanIdBytes();
  span.spanAt = spanIdAt();
}

/**
 * A recorder exporting over OTLP/HTTP to `settings.endpoint`, or to `exporter` (tests) at once,
 * keeping sampled spans in `ring` (given by the caller: this module is loaded on demand, and the
 * ring must be the one the console reads however modules are loaded).
 */
export function createRecorder(
  settings: TracingSettings,
  ring: TraceRing,
  exporter?: SpanExporter,
  onDropped?: (line: string) => void,
): Recorder {
  const resourceAttributes = { [ATTR_SERVICE_NAME]: settings.serviceName };
  let exportSpan: (span: RecordedSpan) => void;
  let flush: () => Promise<void>;
  let shutdown: () => Promise<void>;
  if (exporter) {
    const resource = resourceFromAttributes(resourceAttributes);
    const under = new Set<Promise<void>>();
    exportSpan = (span) => {
      const done = new Promise<void>((resolve) => exporter.export([readable(span, resource)], () => resolve()));
      under.add(done);
      void done.then(() => under.delete(done));
    };
    flush = async () => {
      await Promise.all([...under]);
      await exporter.forceFlush?.();
    };
    shutdown = async () => {
      await flush();
      await exporter.shutdown();
    };
  } else {
    const batches = new OtlpBatchExporter({
      url: settings.endpoint,
      protocol: settings.protocol,
      headers: settings.headers,
      resource: resourceAttributes,
      scope: SCOPE,
      ...(onDropped ? { onDropped } : {}),
    });
    exportSpan = (span) => batches.push(span);
    flush = () => batches.flush();
    shutdown = () => batches.shutdown();
  }
  const finished = (span: RecordedSpan): void => {
    exportSpan(span);
    // an ended span no longer changes: it is read into plain data only if the ring is read
    ring.addLazy(span.traceId, span, ringSpan, span.status.code === SpanStatusCode.ERROR, span.endMs, span.admission);
  };
  const sample = samplerOf(settings.sampler, settings.samplerArg);
  return {
    // eslint-disable-next-line max-params -- per hop on the hot paths (tracing.ts: recordedHop): no options object per hop
    begin(
      name: string,
      service: string,
      kind: HopKind,
      traceparent: string | undefined,
      tracestate: string | undefined,
      attributes: Attributes | undefined,
      known?: SpanParent,
    ): Hop {
      const parent = known ?? parseTraceparent(traceparent);
      // a root span's ids come cut from a new trace's traceparent, which is then the hop's as it is
      const root = parent ? undefined : newSampledTraceparent();
      const traceId = parent?.traceId ?? root!.slice(3, 35);
      const spanId = parent ? newSpanId() : root!.slice(36, 52);
      const state = parent ? boundTracestate(tracestate) : undefined;
      if (!sample(traceId, parent)) {
        // not sampled: the trace goes on under a span id of its own, flagged so, and nothing is recorded
        return { traceId, traceparent: formatTraceparent(traceId, spanId, 0), tracestate: state, end: noEnd };
      }
      const span = new RecordedSpan(
        traceId,
        spanId,
        parent?.spanId,
        1,
        state,
        name,
        KINDS[kind],
        attributes ?? {},
        finished,
        root,
      );
      span.service = service;
      pointAtIdBytes(span, parent);
      // a trace begun here comes into the ring, or not, now; a child begun here follows its parent
      span.admission = parent ? (parent.admission ?? 'unknown') : ring.admitNew(span.startMs);
      return new RecordedHop(span, state);
    },
    flush,
    shutdown,
  };
}
