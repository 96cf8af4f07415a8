/**
 * Go's strconv.Unquote for the string literals of templates ("...", `...`) and UnquoteChar for
 * character constants. Byte escapes (\xff, \377) build UTF-8 bytes, decoded at the end; bytes that
 * are not valid UTF-8 cannot live in a JS string and become U+FFFD.
 */
import { fromBytes } from './utf8.js';

/** Thrown on malformed literals; Go's message is "invalid syntax". */
export class SyntaxFailure extends Error {
  constructor() {
    super('invalid syntax');
  }
}

const encoder = new TextEncoder();

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** One (possibly escaped) character at `i` of `s`: [code point or byte, is byte, next index]. */
export function unquoteChar(s: string, i: number, quote: string): [number, boolean, number] {
  const c = s.charAt(i);
  if (c === '') throw new SyntaxFailure();
  if (c === quote && (quote === "'" || quote === '"')) throw new SyntaxFailure();
  if (c !== '\\') {
    const cp = s.codePointAt(i) ?? 0;
    return [cp, false, i + (cp > 0xffff ? 2 : 1)];
  }
  const e = s.charAt(i + 1);
  switch (e) {
    case 'a':
      return [7, false, i + 2];
    case 'b':
      return [8, false, i + 2];
    case 'f':
      return [12, false, i + 2];
    case 'n':
      return [10, false, i + 2];
    case 'r':
      return [13, false, i + 2];
    case 't':
      return [9, false, i + 2];
    case 'v':
      return [11, false, i + 2];
    case '\\':
      return [92, false, i + 2];
    case "'":
    case '"':
      if (e !== quote) throw new SyntaxFailure();
      return [e.charCodeAt(0), false, i + 2];
    case 'x':
    case 'u':
    case 'U': {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      let v = 0;
      for (let k = 0; k < n; k++) {
        const h = hexVal(s.charCodeAt(i + 2 + k));
        if (h < 0) throw new SyntaxFailure();
        v = v * 16 + h;
      }
      if (e === 'x') return [v, true, i + 2 + n];
      if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) throw new SyntaxFailure();
      return [v, false, i + 2 + n];
    }
    default: {
      if (e >= '0' && e <= '7') {
        let v = 0;
        for (let k = 0; k < 3; k++) {
          const d = s.charCodeAt(i + 1 + k) - 48;
          if (d < 0 || d > 7) throw new SyntaxFailure();
          v = v * 8 + d;
        }
        if (v > 255) throw new SyntaxFailure();
        return [v, true, i + 4];
      }
      throw new SyntaxFailure();
    }
  }
}

/** The value of a quoted string token (with its quotes). */
export function unquoteString(lit: string): string {
  const q = lit.charAt(0);
  if (lit.length < 2 || lit.charAt(lit.length - 1) !== q) throw new SyntaxFailure();
  const body = lit.slice(1, -1);
  if (q === '`') {
    if (body.includes('`')) throw new SyntaxFailure();
    return body.includes('\r') ? body.replaceAll('\r', '') : body;
  }
  if (q !== '"') throw new SyntaxFailure();
  if (!body.includes('\\') && !body.includes('"')) return body;
  // escapes may spell raw bytes, so the value is built as UTF-8 and decoded once
  const bytes: number[] = [];
  let i = 0;
  while (i < body.length) {
    const [v, isByte, next] = unquoteChar(body, i, '"');
    if (isByte) bytes.push(v);
    else for (const b of encoder.encode(String.fromCodePoint(v))) bytes.push(b);
    i = next;
  }
  return fromBytes(Uint8Array.from(bytes));
}
