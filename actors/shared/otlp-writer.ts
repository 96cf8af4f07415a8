/**
 * A span's OTLP/JSON (otlp-json.ts says what it is) written byte by byte into the exporter's batch
 * buffer, without the span's text being made first. Putting the text together from its parts and
 * copying it into the buffer (spanJson, then Buffer.write) was two thirds of what exporting cost a
 * request on the gateway bench under callgrind (~20,000 of ~64,000 instructions a request for two
 * spans: each part a new string, then the whole flattened and copied); the parts here go straight
 * into the buffer, one character code at a time, and only the names' and values' JSON (memoized, or
 * small) is a string of its own. otlp-json.ts gives the same bytes as text.
 */
import type { AttributeValue, Attributes } from '@opentelemetry/api';
import type { RecordedSpan } from './recorded-span.js';

// the text is written as pure ASCII (what JSON.stringify leaves as it is above U+007F is escaped as
// \uXXXX), so each character code is one byte of the batch: no UTF-8 encoding (the UTF-8 write was
// the largest single cost of exporting on the gateway bench before)
const NON_ASCII = /[\u0080-\uffff]/;
const NON_ASCII_ALL = /[\u0080-\uffff]/g;
const escapeUnit = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` as a JSON string of ASCII characters only. */
export function asciiJson(text: string): string {
  const json = JSON.stringify(text);
  return NON_ASCII.test(json) ? json.replace(NON_ASCII_ALL, escapeUnit) : json;
}

// the JSON of the few names, keys and short values a process writes again and again, each made once
const MEMO_SIZE = 2000;
const memo = new Map<string, string>();
export function jsonString(text: string): string {
  if (text.length > 64) return asciiJson(text);
  let json = memo.get(text);
  if (json === undefined) {
    json = asciiJson(text);
    if (memo.size < MEMO_SIZE) memo.set(text, json);
  }
  return json;
}

/** A place in a buffer that ASCII text is written to; `overflow` once something did not fit before `end`. */
export class AsciiWriter {
  at = 0;
  end = 0;
  overflow = false;
  buffer: Buffer = Buffer.alloc(0);

  /** Starts writing at `at` of `buffer`, up to `end`. */
  reset(buffer: Buffer, at: number, end: number): void {
    this.buffer = buffer;
    this.at = at;
    this.end = end;
    this.overflow = false;
  }

  /** ASCII text (every character below U+0080, as otlp-json.ts writes it). */
  text(s: string): void {
    const at = this.at;
    if (at + s.length > this.end) {
      this.overflow = true;
      return;
    }
    const b = this.buffer;
    for (let i = 0; i < s.length; i++) b[at + i] = s.charCodeAt(i);
    this.at = at + s.length;
  }

  /** A non-negative integer below 10^width, zero-padded to `width` digits. */
  padded(n: number, width: number): void {
    const at = this.at;
    if (at + width > this.end) {
      this.overflow = true;
      return;
    }
    const b = this.buffer;
    for (let i = width - 1; i >= 0; i--) {
      b[at + i] = 48 + (n % 10);
      n = Math.floor(n / 10);
    }
    this.at = at + width;
  }
}

// the second's digits, written once a second rather than once a span
let second = -1;
let secondText = '';

/** Milliseconds since the epoch as decimal nanoseconds, to the microsecond (what the span's clock resolves). */
export function writeNanos(w: AsciiWriter, ms: number): void {
  let s = Math.floor(ms / 1000);
  let us = Math.round((ms - s * 1000) * 1000);
  if (us >= 1e6) {
    s++;
    us -= 1e6;
  }
  if (s === 0) {
    w.text(String(us * 1000));
    return;
  }
  if (s !== second) {
    second = s;
    secondText = String(s);
  }
  w.text(secondText);
  w.padded(us, 6);
  w.text('000');
}

function writeValue(w: AsciiWriter, v: AttributeValue): void {
  switch (typeof v) {
    case 'string':
      w.text('{"stringValue":');
      w.text(jsonString(v));
      w.text('}');
      return;
    case 'boolean':
      w.text(v ? '{"boolValue":true}' : '{"boolValue":false}');
      return;
    case 'number':
      w.text(Number.isInteger(v) ? '{"intValue":' : '{"doubleValue":');
      w.text(Number.isFinite(v) ? String(v) : `"${String(v)}"`);
      w.text('}');
      return;
    default: {
      w.text('{"arrayValue":{"values":[');
      const list = v as Array<string | number | boolean | null | undefined>;
      for (let i = 0; i < list.length; i++) {
        if (i > 0) w.text(',');
        const x = list[i];
        if (x === null || x === undefined) w.text('{}');
        else writeValue(w, x);
      }
      w.text(']}}');
    }
  }
}

/** An attribute list's members: `{"key":…,"value":{…}}`, comma-separated. */
export function writeAttributes(w: AsciiWriter, attributes: Attributes): void {
  let first = true;
  for (const key in attributes) {
    const v = attributes[key];
    if (v === undefined || v === null) continue;
    w.text(first ? '{"key":' : ',{"key":');
    first = false;
    w.text(jsonString(key));
    w.text(',"value":');
    writeValue(w, v);
    w.text('}');
  }
}

const KIND_TEXT = ['0', '1', '2', '3', '4', '5', '6'];

/** Writes the span's OTLP/JSON at the writer's place; sets `overflow` (and stops short) when it does not fit. */
export function writeSpan(w: AsciiWriter, s: RecordedSpan): void {
  w.text('{"traceId":"');
  w.text(s.traceId);
  w.text('","spanId":"');
  w.text(s.spanId);
  w.text('"');
  if (s.traceState) {
    w.text(',"traceState":');
    w.text(asciiJson(s.traceState));
  }
  if (s.parentSpanId) {
    w.text(',"parentSpanId":"');
    w.text(s.parentSpanId);
    w.text('"');
  }
  w.text(',"name":');
  w.text(jsonString(s.name));
  w.text(',"kind":');
  w.text(KIND_TEXT[s.kind + 1] ?? String(s.kind + 1));
  w.text(',"startTimeUnixNano":"');
  writeNanos(w, s.startMs);
  w.text('","endTimeUnixNano":"');
  writeNanos(w, s.endMs);
  w.text('","attributes":[');
  writeAttributes(w, s.attributes);
  w.text(']');
  // an unset status is OTLP's default: left out, as every default may be
  if (s.status.message) {
    w.text(',"status":{"code":');
    w.text(String(s.status.code));
    w.text(',"message":');
    w.text(asciiJson(s.status.message));
    w.text('}');
  } else if (s.status.code !== 0) {
    w.text(',"status":{"code":');
    w.text(String(s.status.code));
    w.text('}');
  }
  w.text('}');
}
