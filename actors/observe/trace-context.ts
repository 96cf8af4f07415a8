/**
 * W3C trace context (https://www.w3.org/TR/trace-context/): the `traceparent` value
 * `00-<trace id: 32 hex>-<parent span id: 16 hex>-<flags: 2 hex>` and `tracestate`, as they travel in
 * HTTP headers and in a message's Control (docs/ARCHITECTURE.md, Tracing). Parsing and making ids
 * is all that happens here: no OpenTelemetry object is built, so a node that exports nothing still
 * carries every message's trace for the price of a string.
 */
import { randomFillSync } from 'node:crypto';
import type { Admission } from './trace-ring.js';

/** The control (and HTTP header) names. */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/** What a span is begun from: its parent's trace id, span id and flags. */
export interface SpanParent {
  readonly traceId: string;
  readonly spanId: string;
  /** Trace flags; bit 0 is `sampled`. */
  readonly flags: number;
  /** Where the trace id's 16 bytes are (when a span of this process has them: recorded-span.ts): in this array, from traceAt. */
  readonly traceBytes?: Uint8Array | undefined;
  readonly traceAt?: number;
  /** Where the span id's 8 bytes are, as traceBytes. */
  readonly spanBytes?: Uint8Array | undefined;
  readonly spanAt?: number;
  /** Whether the trace came into this process's trace ring (a span of this process: trace-ring.ts, Admission). */
  readonly admission?: Admission;
}

/** A parsed traceparent. */
export interface TraceParent extends SpanParent {
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
  // what other hops send is already lower case: test it as it is first, so nothing is copied (a
  // version-00 value by its characters: the pattern cost twice as many instructions a hop)
  const asIs = value.length === LENGTH ? isVersion00(value) : TRACEPARENT_FORM.test(value);
  // ids are lower-case hex (HEXDIGLC): an upper-case value is invalid and starts a new trace, never continued
  const v = asIs ? value : value.trim();
  if (!asIs && !TRACEPARENT_FORM.test(v)) return undefined;
  const version = v.slice(0, 2);
  // version 00 is exactly 55 characters; a later version may append fields after a '-'; ff is invalid
  if (version === 'ff' || (version === '00' && v.length !== LENGTH)) return undefined;
  const traceId = v.slice(3, 35);
  const spanId = v.slice(36, 52);
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  const flags = parseInt(v.slice(53, 55), 16);
  return {
    traceId,
    spanId,
    flags,
    text: v.length === LENGTH && version === '00' ? v : formatTraceparent(traceId, spanId, flags),
  };
}

/** The most list-members and characters of a tracestate this process passes on (W3C Trace Context, tracestate limits). */
const TRACESTATE_MAX_MEMBERS = 32;
export const TRACESTATE_MAX_LENGTH = 512;
/** A list-member longer than this goes first when a tracestate is cut. */
const TRACESTATE_LONG_MEMBER = 128;

/**
 * A tracestate as it may be passed on: at most 32 list-members and 512 characters. A longer one is
 * cut as the specification asks: members over 128 characters go first, then members from the end;
 * empty members are dropped. Undefined when nothing is left. A value within the limits is returned
 * as it is (the common case: one length test and a count of commas).
 */
export function boundTracestate(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length <= TRACESTATE_MAX_LENGTH) {
    let commas = 0;
    for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) === 44) commas++;
    if (commas < TRACESTATE_MAX_MEMBERS) return value;
  }
  let members = value
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  const fits = (list: string[]): boolean =>
    list.length <= TRACESTATE_MAX_MEMBERS && list.join(',').length <= TRACESTATE_MAX_LENGTH;
  if (!fits(members)) members = members.filter((m) => m.length <= TRACESTATE_LONG_MEMBER);
  while (members.length > 0 && !fits(members)) members.pop();
  return members.length === 0 ? undefined : members.join(',');
}

const isHex = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 97 && c <= 102);

/** Whether a 55-character value is `00-<32 hex>-<16 hex>-<2 hex>` in lower case (TRACEPARENT_FORM for version 00). */
function isVersion00(v: string): boolean {
  if (
    v.charCodeAt(0) !== 48 ||
    v.charCodeAt(1) !== 48 ||
    v.charCodeAt(2) !== 45 ||
    v.charCodeAt(35) !== 45 ||
    v.charCodeAt(52) !== 45
  )
    return false;
  for (let i = 3; i < 35; i++) if (!isHex(v.charCodeAt(i))) return false;
  for (let i = 36; i < 52; i++) if (!isHex(v.charCodeAt(i))) return false;
  return isHex(v.charCodeAt(53)) && isHex(v.charCodeAt(54));
}

/** The traceparent text of a trace id, span id and flags. */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  // the two flags a recorder writes without turning a number into hex (a span of every hop)
  const f = flags === 1 ? '01' : flags === 0 ? '00' : (flags & 0xff).toString(16).padStart(2, '0');
  return `00-${traceId}-${spanId}-${f}`;
}

// new ids are written a pool at a time into one buffer of their text, read out as one flat string
// and cut per id (a cut of a flat string is flat: the response header's write copies nothing). The
// hex digits go straight from the random bytes into the buffer, four at a time: two random bytes
// read as one 16-bit word, each byte's two digits from a table of 256 pairs, stored as one 32-bit
// word. Turning the bytes into a hex string with Buffer.toString, cutting the ids from it and putting
// each traceparent together from parts cost about twice the instructions a request (callgrind,
// bench/gateway-tracing-instructions.ts), and the parts had to be flattened again for the header; a
// 16-bit store per byte cost ~1,050 instructions a traceparent, the 32-bit stores ~770 (a table of
// all 65,536 byte pairs would take ~600, for 256 KiB and 3 ms of start-up).
/** Random bytes a pool takes: 256 traceparents of 24 (16 for the trace id, 8 for the span id), or 768 span ids. */
const POOL_RANDOM_BYTES = 256 * 24;
// random bytes for 8 pools at a time: a randomFillSync call costs ~14,000 instructions besides its
// bytes, as much as the bytes of a pool themselves
const random = Buffer.alloc(8 * POOL_RANDOM_BYTES);
const words = new Uint32Array(random.buffer, random.byteOffset, random.length / 4);
const randomView = new DataView(random.buffer, random.byteOffset, random.length);
let randomAt = random.length;
// a byte's two hex digits as one 16-bit value, low byte first (DataView takes the stores at odd places too)
const DIGITS = '0123456789abcdef';
const PAIRS = Uint16Array.from({ length: 256 }, (_, b) => DIGITS.charCodeAt(b >> 4) | (DIGITS.charCodeAt(b & 15) << 8));

/** The random bytes of the next pool: refilled 8 pools at a time. */
function poolRandom(): number {
  if (randomAt === random.length) {
    randomFillSync(random);
    // an all-zero id is invalid: every aligned 8 bytes (a span id, half a trace id) are drawn again
    // while all zero (a 2^-64 chance), so no id made of them can be
    for (let w = 0; w < words.length; w += 2)
      while ((words[w]! | words[w + 1]!) === 0) randomFillSync(random, w * 4, 8);
    randomAt = 0;
  }
  const at = randomAt;
  randomAt += POOL_RANDOM_BYTES;
  return at;
}

/**
 * New ids in hex, made a pool at a time: each record is `template` with the hex of `firstBytes`
 * random bytes at `firstAt` and of `secondBytes` (none when 0) at `secondAt`.
 */
class IdPool {
  private readonly length: number;
  private readonly recordBytes: number;
  private readonly text: Buffer;
  private readonly view: DataView;
  /**
   * The random bytes of the pool's records, `recordBytes` each (the first id's, then the second's):
   * what the OTLP encoder writes as the ids. A new array each pool, so a span can keep a reference to
   * its ids' bytes for as long as it lives.
   */
  bytes = new Uint8Array(0);
  private pool = '';
  private at = 0;

  private readonly firstAt: number;
  private readonly firstBytes: number;
  private readonly secondAt: number;
  private readonly secondBytes: number;

  constructor(
    template: string,
    /** Whether `bytes` is kept: only spans read it. */
    private readonly keepsBytes: boolean,
    random: { firstAt: number; firstBytes: number; secondAt?: number; secondBytes?: number },
  ) {
    ({
      firstAt: this.firstAt,
      firstBytes: this.firstBytes,
      secondAt: this.secondAt = 0,
      secondBytes: this.secondBytes = 0,
    } = random);
    const { firstBytes, secondBytes } = this;
    this.length = template.length;
    this.recordBytes = firstBytes + secondBytes;
    this.text = Buffer.alloc((POOL_RANDOM_BYTES / this.recordBytes) * this.length);
    this.view = new DataView(this.text.buffer, this.text.byteOffset, this.text.byteLength);
    // the characters every record has in the same place, written once
    for (let at = 0; at < this.text.length; at += this.length) this.text.write(template, at, 'latin1');
  }

  next(): string {
    if (this.at === this.pool.length) this.refill();
    const at = this.at;
    this.at += this.length;
    return this.pool.slice(at, at + this.length);
  }

  /** Where in `bytes` the random bytes of the record next() returned last begin. */
  lastAt(): number {
    return (this.at / this.length - 1) * this.recordBytes;
  }

  private refill(): void {
    let r = poolRandom();
    // a copy: the shared random bytes are drawn again while this pool's ids are handed out (none for
    // a pool whose ids no span records: the unsampled traceparents of tracing off)
    if (this.keepsBytes) this.bytes = new Uint8Array(random.subarray(r, r + POOL_RANDOM_BYTES));
    for (let at = 0; at < this.text.length; at += this.length) {
      r = this.writeHex(at + this.firstAt, r, this.firstBytes);
      if (this.secondBytes > 0) r = this.writeHex(at + this.secondAt, r, this.secondBytes);
    }
    this.pool = this.text.toString('latin1');
    this.at = 0;
  }

  /** Writes `count` random bytes (an even number, from an even `from`) as hex at `at` of the text; returns where the random bytes go on. */
  private writeHex(at: number, from: number, count: number): number {
    const view = this.view;
    const pairs = PAIRS;
    const bytes = randomView;
    for (let p = at, r = from, end = from + count; r < end; r += 2, p += 4) {
      // little-endian on every platform: the first byte is the word's low one, its digits the first written
      const two = bytes.getUint16(r, true);
      view.setUint32(p, pairs[two & 0xff]! | (pairs[two >> 8]! << 16), true);
    }
    return from + count;
  }
}

const unsampled = new IdPool(`00-${ZERO_TRACE}-${ZERO_SPAN}-00`, false, {
  firstAt: 3,
  firstBytes: 16,
  secondAt: 36,
  secondBytes: 8,
});
const sampled = new IdPool(`00-${ZERO_TRACE}-${ZERO_SPAN}-01`, true, {
  firstAt: 3,
  firstBytes: 16,
  secondAt: 36,
  secondBytes: 8,
});
// a span id alone: 8 random bytes and 16 digits, where one cut from a traceparent took 24 and 48
const spanIds = new IdPool(ZERO_SPAN, true, { firstAt: 0, firstBytes: 8 });

/** A traceparent for a new trace, not sampled (nothing recorded its first span). */
export const newTraceparent = (): string => unsampled.next();
/**
 * A traceparent for a new trace whose first span is recorded: the span's ids are cut from it, and it
 * goes on as it is (not put together again from the ids: one draw of random bytes, no concatenation).
 */
export const newSampledTraceparent = (): string => sampled.next();

/** A new random span id (16 hex digits, never all zero). */
export const newSpanId = (): string => spanIds.next();

// Where the bytes of the ids made last are, for the OTLP encoder (reading the hex digits of sliced
// strings back cost ~50 instructions a digit): to be read before the next id is made.

/** The array holding the trace id (16 bytes) and span id (8) of the traceparent newSampledTraceparent returned last. */
export const sampledBytes = (): Uint8Array => sampled.bytes;
/** Where in sampledBytes() that trace id begins (its span id 16 bytes on). */
export const sampledAt = (): number => sampled.lastAt();
/** The array holding the span id (8 bytes) newSpanId returned last. */
export const spanIdBytes = (): Uint8Array => spanIds.bytes;
/** Where in spanIdBytes() that span id begins. */
export const spanIdAt = (): number => spanIds.lastAt();

/** The trace id of a Control's traceparent, or undefined when it has none or a malformed one. */
export function traceIdOf(control: Record<string, string[] | undefined>): string | undefined {
  const v = Object.hasOwn(control, TRACEPARENT) ? control[TRACEPARENT]?.[0] : undefined;
  return v === undefined ? undefined : parseTraceparent(v)?.traceId;
}
