/**
 * OTLP/HTTP JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding) of a batch of
 * recorded spans: one ExportTraceServiceRequest with the node's resource and one scope, in ASCII.
 * The exporter writes each span straight into its batch (otlp-writer.ts); here are the same bytes as
 * text: the request's head and tail, a span's JSON, a time (and what tests read).
 */
import type { Attributes } from '@opentelemetry/api';
import type { RecordedSpan } from './recorded-span.js';
import { AsciiWriter, asciiJson, writeAttributes, writeNanos, writeSpan } from './otlp-writer.js';

const scratch = new AsciiWriter();
let room = Buffer.alloc(4096);

/** What `write` writes, as text (its buffer grown until it fits). */
function asText(write: (w: AsciiWriter) => void): string {
  for (;;) {
    scratch.reset(room, 0, room.length);
    write(scratch);
    if (!scratch.overflow) return room.toString('latin1', 0, scratch.at);
    room = Buffer.alloc(room.length * 4);
  }
}

/**
 * Milliseconds since the epoch as a decimal string of nanoseconds, to the microsecond (what the
 * span's clock, performance.now on the process's origin, resolves).
 */
export const nanos = (ms: number): string => asText((w) => writeNanos(w, ms));

/** One span's JSON (the API's SpanKind counts from 0, OTLP's from 1: unspecified is 0 there). */
export const spanJson = (s: RecordedSpan): string => asText((w) => writeSpan(w, s));

/** What comes before a request's spans: its resource (service.name) and scope. */
export function otlpHead(resource: Attributes, scope: string): string {
  return `{"resourceSpans":[{"resource":{"attributes":[${asText((w) => writeAttributes(w, resource))}]},"scopeSpans":[{"scope":{"name":${asciiJson(scope)}},"spans":[`;
}

/** What comes after a request's spans. */
export const OTLP_TAIL = ']}]}]}';
