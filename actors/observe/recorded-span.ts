/**
 * A span as the recorder keeps it (docs/ARCHITECTURE.md, Tracing): an `@opentelemetry/api` Span made
 * of plain fields, and the sampler that decides whether one is made at all. The SDK's span did the
 * same with a clock object, attribute sanitising and span-processor fan-out per span: on the gateway
 * bench that was a third of a request's CPU with everything sampled, so the recorder keeps its own
 * (a test's SpanExporter still gets the SDK's ReadableSpan view of it: trace-recorder.ts).
 */
import { performance } from 'node:perf_hooks';
import type {
  AttributeValue,
  Attributes,
  Exception,
  Link,
  SpanAttributes,
  SpanContext,
  SpanStatus,
  TimeInput,
} from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { SpanKind, SpanStatusCode, createTraceState } from '@opentelemetry/api';
import type { SamplerName } from '../../config/tracing.js';
import type { SpanParent } from './trace-context.js';
import { formatTraceparent } from './trace-context.js';
import type { HopKind } from './trace-hop.js';
import type { Admission } from './trace-ring.js';
import { CODE_ATTRIBUTE, SERVICE_ATTRIBUTE } from './trace-hop.js';

export const KINDS: Record<HopKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  consumer: SpanKind.CONSUMER,
  producer: SpanKind.PRODUCER,
  internal: SpanKind.INTERNAL,
};

// milliseconds since the epoch with sub-microsecond resolution: performance.now() on the process's origin
// (node:perf_hooks' performance: the global one is a lazy getter, ~25 ns more a read)
const ORIGIN = performance.timeOrigin;
const epochMillis = (): number => ORIGIN + performance.now();

// one status object for every span not given another (setStatus replaces it, nothing changes it)
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

/** One recorded span; `finished` is told once, when it ends. */
export class RecordedSpan implements Span {
  status: SpanStatus = UNSET;
  /** End time, milliseconds since the epoch; -1 while the span runs. */
  endMs = -1;
  readonly startMs = epochMillis();
  /**
   * The service instance (NAME) that recorded the span, and the Result Code it ended with: exported
   * as the attributes hivenode.service and hivenode.code (allAttributes), kept as fields. Added to the
   * attributes object each span was given, they changed its hidden class at the end of every span,
   * and the encoder's reads of every span's attributes went megamorphic (~1,900 instructions a
   * request on bench/gateway-tracing-instructions.ts, exported).
   */
  service = '';
  code: number | undefined = undefined;

  // eslint-disable-next-line max-params -- one per recorded span: its fields set once, in one order, so every span has one hidden class (no options object to copy from)
  constructor(
    readonly traceId: string,
    readonly spanId: string,
    /** The parent's span id; undefined for a root span. */
    readonly parentSpanId: string | undefined,
    readonly traceFlags: number,
    readonly traceState: string | undefined,
    public name: string,
    readonly kind: SpanKind,
    readonly attributes: Attributes,
    private readonly finished: (span: RecordedSpan) => void,
    /** The traceparent naming this span (a root span's ids were cut from it); else put together from the ids. */
    traceparent?: string,
  ) {
    this.traceparent = traceparent ?? formatTraceparent(traceId, spanId, traceFlags);
  }

  /** What the next hop carries; a child begun in this process takes the ids from here, unparsed (trace-scope.ts: spanParent). */
  readonly traceparent: string;
  /**
   * Where the ids' bytes are when the recorder has them (trace-context.ts: sampledBytes, spanIdBytes):
   * the trace id's 16 from traceAt of traceBytes, the span id's 8 and the parent's likewise. The OTLP
   * encoder writes those; without them it reads the hex.
   */
  traceBytes: Uint8Array | undefined = undefined;
  traceAt = 0;
  spanBytes: Uint8Array | undefined = undefined;
  spanAt = 0;
  parentBytes: Uint8Array | undefined = undefined;
  parentAt = 0;
  /** Whether its trace came into the trace ring when it began (trace-ring.ts: Admission), which a child begun here inherits. */
  admission: Admission = 'unknown';
  get flags(): number {
    return this.traceFlags;
  }

  spanContext(): SpanContext {
    return {
      traceId: this.traceId,
      spanId: this.spanId,
      traceFlags: this.traceFlags,
      ...(this.traceState ? { traceState: createTraceState(this.traceState) } : {}),
    };
  }
  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (this.endMs < 0 && value !== undefined && value !== null) this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: SpanAttributes): this {
    for (const key of Object.keys(attributes)) this.setAttribute(key, attributes[key]);
    return this;
  }
  // hivenode's hops add no events or links: the API's calls are accepted and dropped
  addEvent(_name: string, _attributes?: SpanAttributes | TimeInput, _time?: TimeInput): this {
    return this;
  }
  addLink(_link: Link): this {
    return this;
  }
  addLinks(_links: Link[]): this {
    return this;
  }
  recordException(_exception: Exception, _time?: TimeInput): void {}
  setStatus(status: SpanStatus): this {
    if (this.endMs < 0) this.status = status;
    return this;
  }
  updateName(name: string): this {
    if (this.endMs < 0) this.name = name;
    return this;
  }
  /** Ends the span with the Result Code it answered. */
  endWithCode(code: number): void {
    if (this.endMs >= 0) return;
    this.code = code;
    this.end();
  }
  end(): void {
    if (this.endMs >= 0) return;
    this.endMs = epochMillis();
    this.finished(this);
  }
  isRecording(): boolean {
    return this.endMs < 0;
  }
}

/** A span's attributes as exported: its attributes object's, hivenode.service and hivenode.code (a new object). */
export function allAttributes(span: RecordedSpan): Attributes {
  const all: Attributes = { ...span.attributes };
  if (span.service !== '') all[SERVICE_ATTRIBUTE] = span.service;
  if (span.code !== undefined) all[CODE_ATTRIBUTE] = span.code;
  return all;
}

/** Whether a span of `traceId` is sampled, `parent` being the traceparent it continues (if any). */
export type Sample = (traceId: string, parent: SpanParent | undefined) => boolean;

/**
 * The upper bound of the trace id ratio: the XOR of the id's four 32-bit words compared with it,
 * as the OpenTelemetry SDK's TraceIdRatioBasedSampler does, so a trace is sampled alike everywhere.
 */
function ratioSampler(ratio: number): Sample {
  const r = Number.isNaN(ratio) ? 0 : Math.min(1, Math.max(0, ratio));
  const bound = r === 1 ? 0x100000000 : Math.floor(r * 0xffffffff);
  return (traceId) => {
    let acc = 0;
    for (let i = 0; i < 32; i += 8) acc = (acc ^ parseInt(traceId.slice(i, i + 8), 16)) >>> 0;
    return acc < bound;
  };
}

/** The sampler OTEL_TRACES_SAMPLER names (the parent-based ones follow a parent's sampled flag). */
export function samplerOf(name: SamplerName, ratio: number): Sample {
  const always = (): boolean => true;
  const never = (): boolean => false;
  const root = name.endsWith('always_on') ? always : name.endsWith('always_off') ? never : ratioSampler(ratio);
  if (!name.startsWith('parentbased_')) return root;
  return (traceId, parent) => (parent ? (parent.flags & 1) === 1 : root(traceId, parent));
}
