/**
 * UTF-8 views of JS strings. Go strings are byte sequences, so len, index, slice, %x and error
 * columns count UTF-8 bytes while JS strings count UTF-16 units; these helpers bridge the two
 * without allocating for the common all-ASCII case.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

/** Number of UTF-8 bytes of `s` (lone surrogates count as U+FFFD, 3 bytes, as the encoder writes them). */
export function byteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** True when every unit is ASCII, so byte offsets equal string offsets. */
export function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

/** The UTF-8 bytes of `s`. */
export function toBytes(s: string): Uint8Array {
  return encoder.encode(s);
}

/** Decodes bytes; invalid sequences become U+FFFD (Go would keep the raw bytes, JS strings cannot). */
export function fromBytes(b: Uint8Array): string {
  return decoder.decode(b);
}

/** Number of code points (Go's utf8.RuneCountInString), used by width and precision of %s. */
export function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The first `n` code points of `s`. */
export function truncateRunes(s: string, n: number): string {
  let count = 0;
  let i = 0;
  while (i < s.length && count < n) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
    count++;
  }
  return s.slice(0, i);
}

/**
 * Compares strings in Go's byte order. UTF-16 order differs from UTF-8 order only when a surrogate
 * (U+10000 and up) meets a unit in U+E000..U+FFFF, so only that case needs the code point.
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      const px = a.codePointAt(i) ?? x;
      const py = b.codePointAt(i) ?? y;
      return px < py ? -1 : px > py ? 1 : 0;
    }
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}
