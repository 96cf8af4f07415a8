/**
 * The shapes both halves of tracing share (tracing.ts, which decides, and trace-recorder.ts, which
 * records): one hop of a trace and what records hops (docs/ARCHITECTURE.md, Tracing).
 */
import type { Attributes } from '@opentelemetry/api';
import type { SpanParent } from './trace-context.js';
import type { ScopeSpan, TraceScope } from './trace-scope.js';

export type HopKind = 'server' | 'client' | 'consumer' | 'producer' | 'internal';

/** The attribute naming the service instance (NAME) that recorded a span. */
export const SERVICE_ATTRIBUTE = 'hivenode.service';
/** The attribute holding the Result Code a span ended with. */
export const CODE_ATTRIBUTE = 'hivenode.code';

/** One hop of a trace: its scope (what goes on to the next hop) and the end of its span. */
export interface Hop extends TraceScope {
  readonly span?: ScopeSpan | undefined;
  /** Ends the span with the Result Code (>= 500: status error, with `message`); nothing when none is recorded. */
  end(code: number, message?: string): void;
}

/** What records spans (trace-recorder.ts). */
export interface Recorder {
  /** `parent`: the span `traceparent` names, when it was recorded in this process (its ids, unparsed). */
  begin(
    name: string,
    service: string,
    kind: HopKind,
    traceparent: string | undefined,
    tracestate: string | undefined,
    attributes: Attributes | undefined,
    parent?: SpanParent,
  ): Hop;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * A hop's span name, put together from two parts only when they change: most hops of a service name
 * the same thing again and again, and a new concatenation per span was then flattened and hashed
 * again by the encoder's string memo (otlp-protobuf.ts) for the same text.
 */
export class HopName {
  private first: string | undefined;
  private second: string | undefined;
  private name = '';

  constructor(private readonly join: (first: string, second: string) => string) {}

  of(first: string, second = ''): string {
    if (first !== this.first || second !== this.second) {
      this.first = first;
      this.second = second;
      this.name = this.join(first, second);
    }
    return this.name;
  }
}
