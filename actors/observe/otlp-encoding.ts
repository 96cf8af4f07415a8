/**
 * How the OTLP exporter (otlp-export.ts) writes a batch (docs/ARCHITECTURE.md, Tracing): straight
 * into the batch's reused buffer as each span ends, in the encoding OTEL_EXPORTER_OTLP_PROTOCOL
 * chose — http/protobuf (otlp-protobuf.ts, the default, as the OpenTelemetry specification makes it)
 * or http/json (otlp-json.ts).
 */
import type { Attributes } from '@opentelemetry/api';
import type { RecordedSpan } from './recorded-span.js';

export interface OtlpEncoding {
  /** The request's content type. */
  readonly contentType: string;
  /** Prepares an empty batch in `buffer`; returns where its first span goes. */
  begin(buffer: Buffer): number;
  /**
   * Writes `span` at `at` (`first`: the batch's first span); returns where the next one goes, or -1
   * when the span does not fit in the buffer with what closes the batch (nothing is then counted
   * as written: the bytes past `at` are left to be overwritten).
   */
  write(buffer: Buffer, at: number, span: RecordedSpan, first: boolean): number;
  /** Closes the batch whose spans end at `end`; returns the request body, a view into `buffer`. */
  end(buffer: Buffer, end: number): Buffer;
}

/** What an encoding describes every batch with: the node's resource and the instrumentation scope. */
export interface OtlpOrigin {
  resource: Attributes;
  scope: string;
}
