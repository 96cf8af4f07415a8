/**
 * OTLP/HTTP protobuf (https://opentelemetry.io/docs/specs/otlp/#otlphttp-request), the default
 * encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf): one ExportTraceServiceRequest a batch, with the
 * node's resource and one instrumentation scope. Each span is written into the batch's buffer when
 * it ends, field by field: ids as bytes, times as fixed64, names and attributes from encodings kept
 * of them (putShape, putSpanAttributes). The JSON encoding built a string of ~20 parts a span and then copied it into the
 * buffer, and that was half of what exporting cost a request on the gateway bench (callgrind,
 * bench/gateway-tracing-instructions.ts). The wire format's pieces are protobuf-wire.ts's; the batch's
 * enclosing messages are written last, before its first span, in room kept for them.
 */
import type { AttributeValue, Attributes } from '@opentelemetry/api';
import type { OtlpEncoding, OtlpOrigin } from './otlp-encoding.js';
import type { RecordedSpan } from './recorded-span.js';
import { CODE_ATTRIBUTE, SERVICE_ATTRIBUTE } from './trace-hop.js';
import {
  FIXED64,
  LEN,
  MEMO_LONGEST,
  MEMO_SIZE,
  NO_ROOM,
  VARINT,
  beginLen,
  copied,
  endLen,
  key,
  putBytes,
  putId,
  putIdBytes,
  putNanos,
  putNegativeVarint,
  putString,
  putVarint,
  room,
  setLimit,
  varintSize,
} from './protobuf-wire.js';

// the fields written (opentelemetry/proto: collector/trace/v1, trace/v1, common/v1, resource/v1)
const REQUEST_RESOURCE_SPANS = key(1, LEN);
const RESOURCE_SPANS_RESOURCE = key(1, LEN);
const RESOURCE_SPANS_SCOPE_SPANS = key(2, LEN);
const RESOURCE_ATTRIBUTES = key(1, LEN);
const SCOPE_SPANS_SCOPE = key(1, LEN);
const SCOPE_SPANS_SPANS = key(2, LEN);
const SCOPE_NAME = key(1, LEN);
const SPAN_TRACE_ID = key(1, LEN);
const SPAN_SPAN_ID = key(2, LEN);
const SPAN_TRACE_STATE = key(3, LEN);
const SPAN_PARENT_SPAN_ID = key(4, LEN);
const SPAN_NAME = key(5, LEN);
const SPAN_KIND = key(6, VARINT);
const SPAN_START = key(7, FIXED64);
const SPAN_END = key(8, FIXED64);
const SPAN_ATTRIBUTES = key(9, LEN);
const SPAN_STATUS = key(15, LEN);
const STATUS_MESSAGE = key(2, LEN);
const STATUS_CODE = key(3, VARINT);
const KEY_VALUE_KEY = key(1, LEN);
const KEY_VALUE_VALUE = key(2, LEN);
const ANY_STRING = key(1, LEN);
const ANY_BOOL = key(2, VARINT);
const ANY_INT = key(3, VARINT);
const ANY_DOUBLE = key(4, FIXED64);
const ANY_ARRAY = key(5, LEN);
const ARRAY_VALUES = key(1, LEN);

/** An AnyValue's content (not its key). */
function putAnyValue(b: Buffer, at: number, v: AttributeValue): number {
  switch (typeof v) {
    case 'string':
      return putString(b, at, ANY_STRING, v);
    case 'boolean':
      room(at, 2);
      b[at] = ANY_BOOL;
      b[at + 1] = v ? 1 : 0;
      return at + 2;
    case 'number':
      room(at, 1);
      if (Number.isSafeInteger(v)) {
        b[at] = ANY_INT;
        return v >= 0 ? putVarint(b, at + 1, v) : putNegativeVarint(b, at + 1, v);
      }
      room(at, 9);
      b[at] = ANY_DOUBLE;
      b.writeDoubleLE(v, at + 1);
      return at + 9;
    default: {
      const start = beginLen(b, at, ANY_ARRAY);
      let end = start;
      for (const x of v as Array<string | number | boolean | null | undefined>) {
        const value = beginLen(b, end, ARRAY_VALUES);
        // a missing element is an empty AnyValue, as the SDK writes it
        end = endLen(b, value, x === null || x === undefined ? value : putAnyValue(b, value, x));
      }
      return endLen(b, start, end);
    }
  }
}

/** One KeyValue as a `fieldKey` field. */
function putKeyValue(b: Buffer, at: number, fieldKey: number, name: string, v: AttributeValue): number {
  const start = beginLen(b, at, fieldKey);
  const value = beginLen(b, putString(b, start, KEY_VALUE_KEY, name), KEY_VALUE_VALUE);
  return endLen(b, start, endLen(b, value, putAnyValue(b, value, v)));
}

// a span's attributes, each one encoded whole (key, value and the field around them) once for each
// of the first few values its name comes with: most take a few values again and again (a method, a
// route, a channel, a status), and one copy of the field cost a third of writing it anew
const VALUES_PER_NAME = 16;
const attributeMemo = new Map<string, Map<string | number | boolean, Uint8Array>>();

/** One attribute of a span, as a Span.attributes field: from the memo when its name came with the value before. */
function putSpanAttribute(b: Buffer, at: number, name: string, v: AttributeValue): number {
  if (typeof v === 'object' || (typeof v === 'string' && v.length > MEMO_LONGEST))
    return putKeyValue(b, at, SPAN_ATTRIBUTES, name, v);
  let values = attributeMemo.get(name);
  const bytes = values?.get(v);
  if (bytes !== undefined) return putBytes(b, at, bytes);
  const end = putKeyValue(b, at, SPAN_ATTRIBUTES, name, v);
  if (values === undefined && attributeMemo.size < MEMO_SIZE) attributeMemo.set(name, (values = new Map()));
  if (values !== undefined && values.size < VALUES_PER_NAME) values.set(v, copied(b, at, end));
  return end;
}

/** A span's attributes, as repeated Span.attributes fields: its attributes object's, then the service and the Code it ended with (span fields: recorded-span.ts). */
function putSpanAttributes(b: Buffer, at: number, s: RecordedSpan): number {
  const attributes = s.attributes;
  for (const name in attributes) {
    const v = attributes[name];
    if (v === undefined || v === null) continue;
    at = putSpanAttribute(b, at, name, v);
  }
  if (s.service !== '') at = putSpanAttribute(b, at, SERVICE_ATTRIBUTE, s.service);
  if (s.code !== undefined) at = putSpanAttribute(b, at, CODE_ATTRIBUTE, s.code);
  return at;
}

/**
 * What the spans of one name wrote last for their name, kind and attributes: the attributes' names and
 * values in order, and the bytes. A span whose attributes are the same again (a hop of the same route,
 * method and status) is written with one copy of the bytes: a copy costs ~650 instructions however
 * short, and each attribute was one (callgrind, bench/gateway-tracing-instructions.ts).
 */
interface Shape {
  kind: number;
  service: string;
  code: number | undefined;
  names: string[];
  values: Array<string | number | boolean>;
  bytes: Uint8Array;
  /** Spans of the name in a row whose attributes differed: past a few, the shape is kept as it is (rarely made again). */
  misses: number;
}
const shapes = new Map<string, Shape>();
const SHAPE_MISSES = 4;
/** Longer shapes are not kept (MEMO_SIZE names of them at most). */
const SHAPE_LONGEST = 1024;

/** Whether `attributes` are `shape`'s, in the same order (what is undefined or null is left out, as written). */
function sameAttributes(shape: Shape, attributes: Attributes): boolean {
  const { names, values } = shape;
  let i = 0;
  for (const name in attributes) {
    const v = attributes[name];
    if (v === undefined || v === null) continue;
    if (i === names.length || names[i] !== name || values[i] !== v) return false;
    i++;
  }
  return i === names.length;
}

/** The span's name, kind and attributes, from its name's shape when they are the same, else written and (mostly) kept as its shape. */
function putShape(b: Buffer, at: number, s: RecordedSpan): number {
  const kind = s.kind + 1;
  const shape = shapes.get(s.name);
  if (
    shape !== undefined &&
    shape.kind === kind &&
    shape.service === s.service &&
    shape.code === s.code &&
    sameAttributes(shape, s.attributes)
  ) {
    shape.misses = 0;
    return putBytes(b, at, shape.bytes);
  }
  const start = at;
  let p = putString(b, at, SPAN_NAME, s.name);
  room(p, 2);
  b[p] = SPAN_KIND;
  b[p + 1] = kind;
  p = putSpanAttributes(b, p + 2, s);
  if (shape !== undefined && ++shape.misses > SHAPE_MISSES && shape.misses % 256 !== 0) return p;
  if ((shape === undefined && shapes.size >= MEMO_SIZE) || p - start > SHAPE_LONGEST) return p;
  const names: string[] = [];
  const values: Array<string | number | boolean> = [];
  for (const name in s.attributes) {
    const v = s.attributes[name];
    if (v === undefined || v === null) continue;
    // an array is compared by identity: a shape of one would never match again
    if (typeof v === 'object') return p;
    names.push(name);
    values.push(v);
  }
  shapes.set(s.name, {
    kind,
    service: s.service,
    code: s.code,
    names,
    values,
    bytes: copied(b, start, p),
    misses: shape?.misses ?? 0,
  });
  return p;
}

/** A KeyValue list as repeated `fieldKey` fields. */
function putAttributes(b: Buffer, at: number, fieldKey: number, attributes: Attributes): number {
  for (const name in attributes) {
    const v = attributes[name];
    if (v === undefined || v === null) continue;
    at = putKeyValue(b, at, fieldKey, name, v);
  }
  return at;
}

/** One span, as a ScopeSpans.spans field (the API's SpanKind counts from 0, OTLP's from 1). */
function putSpan(b: Buffer, at: number, s: RecordedSpan): number {
  const start = beginLen(b, at, SCOPE_SPANS_SPANS, 2);
  let p = s.traceBytes
    ? putIdBytes(b, start, SPAN_TRACE_ID, s.traceBytes, s.traceAt, 16)
    : putId(b, start, SPAN_TRACE_ID, s.traceId);
  p = s.spanBytes ? putIdBytes(b, p, SPAN_SPAN_ID, s.spanBytes, s.spanAt, 8) : putId(b, p, SPAN_SPAN_ID, s.spanId);
  if (s.traceState) p = putString(b, p, SPAN_TRACE_STATE, s.traceState);
  if (s.parentSpanId)
    p = s.parentBytes
      ? putIdBytes(b, p, SPAN_PARENT_SPAN_ID, s.parentBytes, s.parentAt, 8)
      : putId(b, p, SPAN_PARENT_SPAN_ID, s.parentSpanId);
  p = putNanos(b, p, SPAN_START, s.startMs);
  p = putNanos(b, p, SPAN_END, s.endMs);
  // the name, kind and attributes last (protobuf takes fields in any order): one copy when they are
  // what the span of that name had the time before
  p = putShape(b, p, s);
  // an unset status is OTLP's default: left out, as every default may be
  if (s.status.code !== 0 || s.status.message) {
    const status = beginLen(b, p, SPAN_STATUS);
    let q = s.status.message ? putString(b, status, STATUS_MESSAGE, s.status.message) : status;
    if (s.status.code !== 0) {
      room(q, 2);
      b[q] = STATUS_CODE;
      b[q + 1] = s.status.code;
      q += 2;
    }
    p = endLen(b, status, q);
  }
  return endLen(b, start, p, 2);
}

/** Runs `write` against the whole of `b` (the fixed parts, made once). */
function encoded(write: (b: Buffer) => number): Buffer {
  const b = Buffer.alloc(1 << 16);
  const saved = setLimit(b.length);
  try {
    return Buffer.from(b.subarray(0, write(b)));
  } finally {
    setLimit(saved);
  }
}

export class OtlpProtobuf implements OtlpEncoding {
  readonly contentType = 'application/x-protobuf';
  /** ResourceSpans.resource, whole. */
  private readonly resource: Buffer;
  /** ScopeSpans.scope, whole. */
  private readonly scope: Buffer;
  /** The room kept before the first span for what encloses the spans. */
  private readonly head: number;

  constructor(origin: OtlpOrigin) {
    this.resource = encoded((b) => {
      const start = beginLen(b, 0, RESOURCE_SPANS_RESOURCE);
      return endLen(b, start, putAttributes(b, start, RESOURCE_ATTRIBUTES, origin.resource));
    });
    this.scope = encoded((b) => {
      const start = beginLen(b, 0, SCOPE_SPANS_SCOPE);
      return endLen(b, start, putString(b, start, SCOPE_NAME, origin.scope));
    });
    // two keys and two lengths of at most 5 bytes each (a batch is far below 4 GiB)
    this.head = 12 + this.resource.length + this.scope.length;
  }

  begin(): number {
    return this.head;
  }

  write(buffer: Buffer, at: number, span: RecordedSpan): number {
    setLimit(buffer.length);
    try {
      return putSpan(buffer, at, span);
    } catch (e) {
      if (e === NO_ROOM) return -1;
      throw e;
    }
  }

  end(buffer: Buffer, end: number): Buffer {
    const scopeSpans = this.scope.length + end - this.head;
    const resourceSpans = this.resource.length + 1 + varintSize(scopeSpans) + scopeSpans;
    const start =
      this.head -
      (1 + varintSize(resourceSpans) + this.resource.length + 1 + varintSize(scopeSpans) + this.scope.length);
    setLimit(buffer.length);
    buffer[start] = REQUEST_RESOURCE_SPANS;
    let at = putVarint(buffer, start + 1, resourceSpans);
    at += this.resource.copy(buffer, at);
    buffer[at] = RESOURCE_SPANS_SCOPE_SPANS;
    at = putVarint(buffer, at + 1, scopeSpans);
    this.scope.copy(buffer, at);
    return buffer.subarray(start, end);
  }
}
