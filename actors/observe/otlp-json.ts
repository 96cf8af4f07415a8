/**
 * OTLP/HTTP JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding), the encoding
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json chooses (http/protobuf, otlp-protobuf.ts, costs a third as
 * much a span), of a batch of recorded spans: one ExportTraceServiceRequest with the node's resource and one scope, in ASCII. Written as
 * text straight from the spans' fields (ids in hex, times as decimal nanosecond strings, as OTLP/JSON
 * wants them), a span at a time; the SDK's transformer built an object tree per span and then
 * stringified it, most of the export's cost on the gateway bench.
 */
import type { AttributeValue, Attributes } from '@opentelemetry/api';
import type { OtlpEncoding, OtlpOrigin } from './otlp-encoding.js';
import type { RecordedSpan } from './recorded-span.js';
import { allAttributes } from './recorded-span.js';

// the second's digits, written once a second rather than once a span (a number past 2^31 is slow to write)
let second = -1;
let secondText = '';

/**
 * Milliseconds since the epoch as a decimal string of nanoseconds, to the microsecond (what the
 * span's clock, performance.now on the process's origin, resolves).
 */
export function nanos(ms: number): string {
  let s = Math.floor(ms / 1000);
  let us = Math.round((ms - s * 1000) * 1000);
  if (us >= 1e6) {
    s++;
    us -= 1e6;
  }
  if (s !== second) {
    second = s;
    secondText = String(s);
  }
  if (s === 0) return String(us * 1000);
  return `${secondText}${us < 100_000 ? String(us).padStart(6, '0') : us}000`;
}

// the text is written as pure ASCII (what JSON.stringify leaves as it is above U+007F is escaped as
// \uXXXX), so the exporter copies a span's text into its batch byte for byte (latin1) instead of
// encoding it as UTF-8: the UTF-8 write was the largest single cost of exporting (gateway bench)
const NON_ASCII = /[\u0080-\uffff]/;
const NON_ASCII_ALL = /[\u0080-\uffff]/g;
const escapeUnit = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` as a JSON string of ASCII characters only. */
function asciiJson(text: string): string {
  const json = JSON.stringify(text);
  return NON_ASCII.test(json) ? json.replace(NON_ASCII_ALL, escapeUnit) : json;
}

// the JSON of the few names, keys and short values a process writes again and again, each made once
const MEMO_SIZE = 2000;
const memo = new Map<string, string>();
function jsonString(text: string): string {
  if (text.length > 64) return asciiJson(text);
  let json = memo.get(text);
  if (json === undefined) {
    json = asciiJson(text);
    if (memo.size < MEMO_SIZE) memo.set(text, json);
  }
  return json;
}

function anyValue(v: AttributeValue): string {
  switch (typeof v) {
    case 'string':
      return `{"stringValue":${jsonString(v)}}`;
    case 'boolean':
      return `{"boolValue":${v}}`;
    case 'number':
      // beyond 2^53 a number is not an exact integer (nor within int64 from 2^63): written as a double
      return Number.isSafeInteger(v)
        ? `{"intValue":${v}}`
        : Number.isFinite(v)
          ? `{"doubleValue":${v}}`
          : `{"doubleValue":"${String(v)}"}`;
    default:
      return `{"arrayValue":{"values":[${(v as Array<string | number | boolean | null | undefined>).map((x) => (x === null || x === undefined ? '{}' : anyValue(x))).join(',')}]}}`;
  }
}

function attributeList(attributes: Attributes): string {
  let out = '';
  for (const key in attributes) {
    const v = attributes[key];
    if (v === undefined || v === null) continue;
    out += `${out === '' ? '' : ','}{"key":${jsonString(key)},"value":${anyValue(v)}}`;
  }
  return out;
}

/** One span's JSON (the API's SpanKind counts from 0, OTLP's from 1: unspecified is 0 there). */
export function spanJson(s: RecordedSpan): string {
  // an unset status is OTLP's default: left out, as every default may be
  const status = s.status.message
    ? `,"status":{"code":${s.status.code},"message":${asciiJson(s.status.message)}}`
    : s.status.code === 0
      ? ''
      : `,"status":{"code":${s.status.code}}`;
  return (
    `{"traceId":"${s.traceId}","spanId":"${s.spanId}"${s.traceState ? `,"traceState":${asciiJson(s.traceState)}` : ''}` +
    `${s.parentSpanId ? `,"parentSpanId":"${s.parentSpanId}"` : ''},"name":${jsonString(s.name)},"kind":${s.kind + 1}` +
    `,"startTimeUnixNano":"${nanos(s.startMs)}","endTimeUnixNano":"${nanos(s.endMs)}","attributes":[${attributeList(allAttributes(s))}]${status}}`
  );
}

/** What comes before a request's spans: its resource (service.name) and scope. */
export function otlpHead(resource: Attributes, scope: string): string {
  return `{"resourceSpans":[{"resource":{"attributes":[${attributeList(resource)}]},"scopeSpans":[{"scope":{"name":${asciiJson(scope)}},"spans":[`;
}

/** What comes after a request's spans. */
export const OTLP_TAIL = ']}]}]}';

/** The JSON encoding of a batch (spans written into its buffer as latin1: the text is ASCII). */
export class OtlpJson implements OtlpEncoding {
  readonly contentType = 'application/json';
  private readonly head: string;

  constructor(origin: OtlpOrigin) {
    this.head = otlpHead(origin.resource, origin.scope);
  }

  begin(buffer: Buffer): number {
    return buffer.write(this.head, 0, 'latin1');
  }

  write(buffer: Buffer, at: number, span: RecordedSpan, first: boolean): number {
    const json = spanJson(span);
    // the separator and the tail must fit after it
    if (at + json.length + 1 + OTLP_TAIL.length > buffer.length) return -1;
    if (!first) buffer[at++] = 0x2c; // ','
    return at + buffer.write(json, at, 'latin1');
  }

  end(buffer: Buffer, end: number): Buffer {
    return buffer.subarray(0, end + buffer.write(OTLP_TAIL, end, 'latin1'));
  }
}
