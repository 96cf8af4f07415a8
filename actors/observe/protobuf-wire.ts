/**
 * Protobuf's wire format written straight into a bounded buffer (https://protobuf.dev/programming-guides/encoding/):
 * field keys, varints, length-delimited fields, strings, bytes, fixed64 times. What the OTLP protobuf
 * encoding (otlp-protobuf.ts) writes its messages with; a write past the limit set with setLimit
 * throws NO_ROOM, so a span that does not fit leaves the batch as it was.
 *
 * A length-delimited field's length comes before its content and is known only after it: a byte (or
 * two) is kept for it, and the content is moved along in the rare case it needs another number.
 */

// wire types
export const VARINT = 0;
export const FIXED64 = 1;
export const LEN = 2;
export const key = (field: number, wire: number): number => (field << 3) | wire;

/** Thrown (one object, made once) when a write does not fit in what is left of the buffer. */
export const NO_ROOM = new Error('no room in the batch');

/** Where writing stops: the buffer's length, less what closing the batch takes. */
let limit = 0;

/** Sets where writing stops; returns where it stopped before. */
export function setLimit(end: number): number {
  const before = limit;
  limit = end;
  return before;
}

export const room = (at: number, bytes: number): void => {
  if (at + bytes > limit) throw NO_ROOM;
};

/** The bytes of `n` (0 to 2^53) as a varint: 7 bits a byte. */
export function varintSize(n: number): number {
  let size = 1;
  for (; n >= 0x80; size++) n = Math.floor(n / 0x80);
  return size;
}

/** Writes `n` (0 to 2^53) as a varint. */
export function putVarint(b: Buffer, at: number, n: number): number {
  room(at, n < 0x80 ? 1 : varintSize(n));
  while (n >= 0x80) {
    b[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  b[at++] = n;
  return at;
}

/** A negative integer as int64 wants it: its ten-byte two's complement varint. */
export function putNegativeVarint(b: Buffer, at: number, n: number): number {
  let v = BigInt.asUintN(64, BigInt(n));
  room(at, 10);
  while (v >= 0x80n) {
    b[at++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  b[at++] = Number(v);
  return at;
}

/**
 * Starts a length-delimited field: its key and `kept` bytes kept for the length (1, or 2 for a span,
 * which is mostly 128 bytes to 16 KiB long); returns where the content goes. endLen then writes the
 * length.
 */
export function beginLen(b: Buffer, at: number, fieldKey: number, kept = 1): number {
  room(at, 1 + kept);
  b[at] = fieldKey;
  return at + 1 + kept;
}

/**
 * Ends the field whose content began at `start` (after `kept` bytes kept for its length) and ends at
 * `end`; returns its new end. The content moves along only when its length takes another number of
 * bytes than were kept (a span of every request moved by one byte cost ~700 instructions a request).
 */
export function endLen(b: Buffer, start: number, end: number, kept = 1): number {
  const length = end - start;
  if (kept === 1 && length < 0x80) {
    b[start - 1] = length;
    return end;
  }
  if (kept === 2 && length >= 0x80 && length < 0x4000) {
    b[start - 2] = (length & 0x7f) | 0x80;
    b[start - 1] = length >> 7;
    return end;
  }
  const shift = varintSize(length) - kept;
  if (shift > 0) room(end, shift);
  b.copyWithin(start + shift, start, end);
  putVarint(b, start - kept, length);
  return end + shift;
}

/** Writes `text` as UTF-8: byte by byte while it is ASCII (names, keys and most values are). */
function putText(b: Buffer, at: number, text: string): number {
  const n = text.length;
  room(at, n);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) {
      const bytes = Buffer.byteLength(text, 'utf8');
      room(at, bytes);
      return at + b.write(text, at, bytes, 'utf8');
    }
    b[at + i] = c;
  }
  return at + n;
}

// the UTF-8 of the few names, keys and short values a process writes again and again, each encoded
// once: reading a string's characters one by one costs several times a copy of its bytes when the
// string is a slice or a concatenation (a span's name, a path cut from a URL), which most are
export const MEMO_SIZE = 2000;
export const MEMO_LONGEST = 64;
const memo = new Map<string, Uint8Array>();

/** A string field. */
export function putString(b: Buffer, at: number, fieldKey: number, text: string): number {
  if (text.length > MEMO_LONGEST) {
    const start = beginLen(b, at, fieldKey);
    return endLen(b, start, putText(b, start, text));
  }
  let bytes = memo.get(text);
  if (bytes === undefined) {
    bytes = Buffer.from(text, 'utf8');
    if (memo.size < MEMO_SIZE) memo.set(text, bytes);
  }
  // at most 64 characters of at most 3 bytes: the length is one byte or two
  const n = bytes.length;
  room(at, n + 3);
  b[at++] = fieldKey;
  if (n < 0x80) b[at++] = n;
  else {
    b[at++] = (n & 0x7f) | 0x80;
    b[at++] = n >> 7;
  }
  // one typed-array copy: a JavaScript loop over the bytes cost ~3 times the instructions (callgrind)
  b.set(bytes, at);
  return at + n;
}

// a hex digit's value by its character code (ids are lower-case hex: parsed traceparents, made ids)
const HEX = new Uint8Array(128);
for (let d = 0; d < 16; d++) HEX['0123456789abcdef'.charCodeAt(d)] = d;
HEX.set([10, 11, 12, 13, 14, 15], 65);

/** A bytes field of an id given in hex (its bytes are half its digits: always under 128). */
export function putId(b: Buffer, at: number, fieldKey: number, hex: string): number {
  const n = hex.length >> 1;
  room(at, n + 2);
  b[at] = fieldKey;
  b[at + 1] = n;
  at += 2;
  for (let i = 0; i < n; i++) b[at + i] = (HEX[hex.charCodeAt(2 * i)]! << 4) | HEX[hex.charCodeAt(2 * i + 1)]!;
  return at + n;
}

/** A bytes field of an id whose bytes the recorder pointed the span at (recorded-span.ts: traceBytes…): `count` bytes from `from` of `ids`. */
// eslint-disable-next-line max-params -- per id of every exported span, beside putBytes: no options object per field written
export function putIdBytes(
  b: Buffer,
  at: number,
  fieldKey: number,
  ids: Uint8Array,
  from: number,
  count: number,
): number {
  room(at, count + 2);
  b[at] = fieldKey;
  b[at + 1] = count;
  at += 2;
  for (let i = 0; i < count; i++) b[at + i] = ids[from + i]!;
  return at + count;
}

const TWO_32 = 0x100000000;

/** `n` (0 to 2^32 - 1) as 4 bytes, little-endian; room checked by the caller (Buffer's writeUInt32LE checks it all again). */
function putUint32(b: Buffer, at: number, n: number): void {
  b[at] = n;
  b[at + 1] = n >>> 8;
  b[at + 2] = n >>> 16;
  b[at + 3] = n >>> 24;
}

// the second the last time written fell in, and its nanoseconds as two 32-bit halves: the spans of a
// second share them, and working them out for each of a span's two times was ~450 instructions a span
let secondMs = Number.NaN;
let secondLow = 0;
let secondHigh = 0;

/** Sets the second of putNanos to `s` (seconds since the epoch). */
function nanosOfSecond(s: number): void {
  // s × 10^9 passes 2^53, so the two 32-bit halves are put together from parts that each stay exact
  // in a double: s × 10^9 = sHigh × 10^9 × 2^16 + sLow × 10^9, and sHigh × 10^9 × 2^16 = (aHigh × 2^32) + aLow × 2^16
  const sHigh = Math.floor(s / 0x10000);
  const a = sHigh * 1e9;
  const aHigh = Math.floor(a / 0x10000);
  const low = (a - aHigh * 0x10000) * 0x10000 + (s - sHigh * 0x10000) * 1e9;
  const carry = Math.floor(low / TWO_32);
  secondLow = low - carry * TWO_32;
  secondHigh = aHigh + carry;
  secondMs = s * 1000;
}

/** Milliseconds since the epoch as fixed64 nanoseconds, to the microsecond (what the span's clock resolves). */
export function putNanos(b: Buffer, at: number, fieldKey: number, ms: number): number {
  room(at, 9);
  let us = Math.round((ms - secondMs) * 1000);
  // another second than the last time (NaN before the first: the comparison is false)
  if (!(us >= 0 && us < 1e6)) {
    let s = Math.floor(ms / 1000);
    us = Math.round((ms - s * 1000) * 1000);
    if (us >= 1e6) {
      s++;
      us -= 1e6;
    }
    nanosOfSecond(s);
  }
  let low = secondLow + us * 1000;
  let high = secondHigh;
  if (low >= TWO_32) {
    low -= TWO_32;
    high++;
  }
  b[at] = fieldKey;
  putUint32(b, at + 1, low);
  putUint32(b, at + 5, high);
  return at + 9;
}

/** Copies `bytes` (kept encoded) into the buffer at `at`; returns where they end. */
export function putBytes(b: Buffer, at: number, bytes: Uint8Array): number {
  room(at, bytes.length);
  b.set(bytes, at);
  return at + bytes.length;
}

/** A copy of what was written from `start` to `end`, to be kept: the buffer is written over by the next batches. */
export const copied = (b: Buffer, start: number, end: number): Uint8Array => new Uint8Array(b.subarray(start, end));
