/**
 * W3C trace context (https://www.w3.org/TR/trace-context/): the `traceparent` value
 * `00-<trace id: 32 hex>-<parent span id: 16 hex>-<flags: 2 hex>` and `tracestate`, as they travel in
 * HTTP headers and in a message's Control (docs/ARCHITECTURE.md, Tracing). Parsing and making ids
 * is all that happens here: no OpenTelemetry object is built, so a node that exports nothing still
 * carries every message's trace for the price of a string.
 */
import { randomFillSync } from 'node:crypto';

/** The control (and HTTP header) names. */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/** A parsed traceparent. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  /** Trace flags; bit 0 is `sampled`. */
  flags: number;
  /** The value in its version-00 form: the text itself when it already is (passed on without a copy). */
  text: string;
}

// one test for the whole value: version, trace id, parent id, flags, and what a later version may add
// (the parts are then sliced at their fixed places: no capture groups to allocate on every hop)
const TRACEPARENT_FORM = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(?:-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** The length of a version-00 traceparent. */
const LENGTH = 55;

/**
 * Parses a traceparent; undefined when it is not one (a malformed value is ignored, as the
 * specification asks: the receiver then starts a new trace). Versions above 00 are read by their
 * 00 prefix; version ff is invalid.
 */
export function parseTraceparent(value: string | undefined): TraceParent | undefined {
  if (value === undefined || value.length < LENGTH) return undefined;
  // what other hops send is already lower case: test it as it is first, so nothing is copied
  const asIs = TRACEPARENT_FORM.test(value);
  const v = asIs ? value : value.trim().toLowerCase();
  if (!asIs && !TRACEPARENT_FORM.test(v)) return undefined;
  const version = v.slice(0, 2);
  // version 00 is exactly 55 characters; a later version may append fields after a '-'; ff is invalid
  if (version === 'ff' || (version === '00' && v.length !== LENGTH)) return undefined;
  const traceId = v.slice(3, 35);
  const spanId = v.slice(36, 52);
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  const flags = parseInt(v.slice(53, 55), 16);
  return { traceId, spanId, flags, text: v.length === LENGTH && version === '00' ? v : formatTraceparent(traceId, spanId, flags) };
}

/** The traceparent text of a trace id, span id and flags. */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}

// ids come from one pooled random buffer, turned into hex once per refill: a randomFillSync per id
// costs a system call each, and a hex conversion per id a call into the runtime; an id is a slice
const POOL = Buffer.alloc(4096);
let hexPool = '';
let offset = 0;

/** Where `chars` fresh hex characters start in the pool (refilled when they would not fit). */
function draw(chars: number): number {
  if (offset + chars > hexPool.length) {
    randomFillSync(POOL);
    hexPool = POOL.toString('hex');
    offset = 0;
  }
  const at = offset;
  offset += chars;
  return at;
}

// an all-zero id is invalid; drawing one is a 2^-64 chance, but it must never go out
function randomHex(bytes: number, zero: string): string {
  for (;;) {
    const at = draw(bytes * 2);
    const hex = hexPool.slice(at, at + bytes * 2);
    if (hex !== zero) return hex;
  }
}

export const newTraceId = (): string => randomHex(16, ZERO_TRACE);
export const newSpanId = (): string => randomHex(8, ZERO_SPAN);

// a new trace's traceparent is cut from a pooled string of them, formatted a pool at a time: one put
// together per request (`00-${id}-${id}-00`) is a tree of parts that the response header's check
// and the socket write must first copy into one string, while a cut of a flat string is flat
// already (measured with the gateway bench's hop work alone: the check was a third of it)
const TRACEPARENTS_PER_POOL = 128;
let traceparentPool = '';
let traceparentAt = 0;

function refillTraceparents(): void {
  const parts: string[] = [];
  // an all-zero id is invalid; a pool's hex with no run of 16 zeros anywhere holds none, and has the
  // ids unchecked: comparing each cut id with the zero ids was as much as cutting them (callgrind)
  const at = draw(TRACEPARENTS_PER_POOL * 48);
  if (!hexPool.slice(at, at + TRACEPARENTS_PER_POOL * 48).includes(ZERO_SPAN)) {
    for (let i = at; parts.length < TRACEPARENTS_PER_POOL; i += 48) parts.push(`00-${hexPool.slice(i, i + 32)}-${hexPool.slice(i + 32, i + 48)}-00`);
  }
  while (parts.length < TRACEPARENTS_PER_POOL) {
    const at = draw(48);
    const traceId = hexPool.slice(at, at + 32);
    const spanId = hexPool.slice(at + 32, at + 48);
    if (traceId !== ZERO_TRACE && spanId !== ZERO_SPAN) parts.push(`00-${traceId}-${spanId}-00`);
  }
  traceparentPool = parts.join('');
  traceparentAt = 0;
}

/** A traceparent for a new trace (not sampled: nothing recorded its first span). */
export function newTraceparent(): string {
  if (traceparentAt === traceparentPool.length) refillTraceparents();
  const at = traceparentAt;
  traceparentAt += LENGTH;
  return traceparentPool.slice(at, at + LENGTH);
}

/** The trace id of a Control's traceparent, or undefined when it has none or a malformed one. */
export function traceIdOf(control: Record<string, string[] | undefined>): string | undefined {
  const v = Object.hasOwn(control, TRACEPARENT) ? control[TRACEPARENT]?.[0] : undefined;
  return v === undefined ? undefined : parseTraceparent(v)?.traceId;
}
