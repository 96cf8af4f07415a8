/**
 * The recording half of tracing (docs/ARCHITECTURE.md, Tracing): OpenTelemetry spans through
 * @opentelemetry/api, a BasicTracerProvider with the configured sampler, spans exported over
 * OTLP/HTTP in batches (or handed to a test's exporter at once) and each sampled one kept in the
 * trace ring. Loaded by tracing.ts only when something records: a node that exports nothing
 * never loads the SDK, which costs a tenth of a second of start-up.
 */
import type { Attributes, Context, Span } from '@opentelemetry/api';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, createTraceState, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, Sampler, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, SimpleSpanProcessor, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { SamplerName, TracingSettings } from '../../config/tracing.js';
import { formatTraceparent, parseTraceparent } from './trace-context.js';
import type { RingSpan, SpanStatus, TraceRing } from './trace-ring.js';
import type { Hop, HopKind, Recorder } from './trace-hop.js';
import { CODE_ATTRIBUTE, SERVICE_ATTRIBUTE } from './trace-hop.js';

const KINDS: Record<HopKind, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, consumer: SpanKind.CONSUMER, producer: SpanKind.PRODUCER, internal: SpanKind.INTERNAL };

function samplerOf(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

const STATUS: Record<number, SpanStatus> = { [SpanStatusCode.UNSET]: 'unset', [SpanStatusCode.OK]: 'ok', [SpanStatusCode.ERROR]: 'error' };
const millis = (t: readonly [number, number]): number => t[0] * 1000 + t[1] / 1e6;

/** Feeds the trace ring with every sampled span that ends (the console's recent traces). */
class RingProcessor implements SpanProcessor {
  constructor(private readonly ring: TraceRing) {}
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    // an ended span no longer changes: it is read into plain data only if the ring is read
    this.ring.addLazy(span.spanContext().traceId, () => ringSpan(span));
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function ringSpan(span: ReadableSpan): RingSpan {
  const sc = span.spanContext();
  const attributes: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(span.attributes)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') attributes[k] = v;
  const service = attributes[SERVICE_ATTRIBUTE];
  return {
    traceId: sc.traceId,
    spanId: sc.spanId,
    ...(span.parentSpanContext ? { parentSpanId: span.parentSpanContext.spanId } : {}),
    name: span.name,
    service: typeof service === 'string' ? service : '',
    start: millis(span.startTime),
    duration: millis(span.duration),
    status: STATUS[span.status.code] ?? 'unset',
    ...(span.status.message ? { statusMessage: span.status.message } : {}),
    attributes,
  };
}

function parentContext(traceparent: string | undefined, tracestate: string | undefined): Context {
  const parent = parseTraceparent(traceparent);
  if (!parent) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.flags, isRemote: true, ...(tracestate ? { traceState: createTraceState(tracestate) } : {}) });
}

function hopOf(span: Span, tracestate: string | undefined): Hop {
  const sc = span.spanContext();
  return {
    traceId: sc.traceId,
    traceparent: formatTraceparent(sc.traceId, sc.spanId, sc.traceFlags),
    tracestate: sc.traceState?.serialize() || tracestate,
    span,
    end(code, message) {
      span.setAttribute(CODE_ATTRIBUTE, code);
      if (code >= 500) span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
      span.end();
    },
  };
}

/**
 * A recorder exporting over OTLP/HTTP to `settings.endpoint`, or to `exporter` (tests) at once,
 * keeping sampled spans in `ring` (given by the caller: this module is loaded on demand, and the
 * ring must be the one the console reads however modules are loaded).
 */
export function createRecorder(settings: TracingSettings, ring: TraceRing, exporter?: SpanExporter): Recorder {
  const exporting: SpanProcessor = exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.endpoint, headers: settings.headers }));
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    sampler: samplerOf(settings.sampler, settings.samplerArg),
    spanProcessors: [exporting, new RingProcessor(ring)],
  });
  const tracer = provider.getTracer('hivenode');
  return {
    begin(name: string, service: string, kind: HopKind, traceparent: string | undefined, tracestate: string | undefined, attributes: Attributes | undefined): Hop {
      const span = tracer.startSpan(name, { kind: KINDS[kind], attributes: { ...attributes, [SERVICE_ATTRIBUTE]: service } }, parentContext(traceparent, tracestate));
      return hopOf(span, tracestate);
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
