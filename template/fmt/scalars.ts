/**
 * Formatting of one scalar (integer, float, string, bool) for one verb, with Go fmt's flag rules.
 * Each function returns undefined when the verb does not apply, so the caller writes %!verb(...).
 */
import { isPrint, quote, quoteRune, canBackquote, runeString } from './quote.js';
import { formatFloat } from './float.js';
import { ensureRoom, pad, padSpaces, padding } from './flags.js';
import type { Flags } from './flags.js';
import { toBytes, truncateRunes } from '../utf8.js';

const HEX_LOWER = '0123456789abcdef';
const HEX_UPPER = '0123456789ABCDEF';

/** Integer (int or uint8) `v` under `verb`; `unsigned` selects the %#v hex form. */
export function formatInteger(f: Flags, v: number | bigint, unsigned: boolean, verb: string): string | undefined {
  switch (verb) {
    case 'v':
      if (f.sharpV && unsigned) return fmtInt(f, v, 16, 'v', true);
      return fmtInt(f, v, 10, 'v', false);
    case 'd':
      return fmtInt(f, v, 10, verb, false);
    case 'b':
      return fmtInt(f, v, 2, verb, false);
    case 'o':
    case 'O':
      return fmtInt(f, v, 8, verb, false);
    case 'x':
    case 'X':
      return fmtInt(f, v, 16, verb, false);
    case 'c':
      return pad(f, runeString(Number(v)));
    case 'q':
      return pad(f, quoteRune(toRune(v), f.plus));
    case 'U':
      return fmtUnicode(f, v);
    default:
      return undefined;
  }
}

function toRune(v: number | bigint): number {
  const n = Number(v);
  return n > 0x10ffff || n < 0 ? 0xfffd : n;
}

/** The integer body: precision zeros, base prefix, sign, then space padding. */
function fmtInt(f: Flags, v: number | bigint, base: number, verb: string, forceHexPrefix: boolean): string {
  const negative = v < 0;
  if (f.precPresent && f.prec === 0 && (v === 0 || v === 0n)) return padSpaces(f, '');
  let digits = typeof v === 'bigint' ? (negative ? -v : v).toString(base) : Math.abs(v).toString(base);
  if (verb === 'X') digits = digits.toUpperCase();
  let prec = -1;
  if (f.precPresent) prec = f.prec;
  else if (f.zero && f.widPresent) {
    prec = f.wid;
    if (negative || f.plus || f.space) prec--;
  }
  if (prec > digits.length) {
    ensureRoom(f, prec);
    digits = '0'.repeat(prec - digits.length) + digits;
  }
  if (f.sharp || forceHexPrefix) {
    switch (base) {
      case 2:
        digits = '0b' + digits;
        break;
      case 8:
        if (digits.charAt(0) !== '0') digits = '0' + digits;
        break;
      case 16:
        digits = (verb === 'X' ? '0X' : '0x') + digits;
        break;
    }
  }
  if (verb === 'O') digits = '0o' + digits;
  if (negative) digits = '-' + digits;
  else if (f.plus) digits = '+' + digits;
  else if (f.space) digits = ' ' + digits;
  return padSpaces(f, digits);
}

/** %U: U+hex with at least four (or precision) digits; '#' adds the quoted character. */
function fmtUnicode(f: Flags, v: number | bigint): string {
  let digits = (typeof v === 'bigint' ? BigInt.asUintN(64, v) : v < 0 ? BigInt.asUintN(64, BigInt(v)) : v)
    .toString(16)
    .toUpperCase();
  const prec = f.precPresent && f.prec > 4 ? f.prec : 4;
  if (digits.length < prec) {
    ensureRoom(f, prec);
    digits = '0'.repeat(prec - digits.length) + digits;
  }
  let s = 'U+' + digits;
  const r = Number(v);
  if (f.sharp && r >= 0 && r <= 0x10ffff && isPrint(r)) s += " '" + String.fromCodePoint(r) + "'";
  return padSpaces(f, s);
}

/** Float `v` under `verb`. */
export function formatFloatVerb(f: Flags, v: number, verb: string): string | undefined {
  switch (verb) {
    case 'v':
      return fmtFloat(f, v, 'g', -1);
    case 'b':
    case 'g':
    case 'G':
    case 'x':
    case 'X':
      return fmtFloat(f, v, verb, -1);
    case 'f':
    case 'e':
    case 'E':
    case 'F':
      return fmtFloat(f, v, verb === 'F' ? 'f' : verb, 6);
    default:
      return undefined;
  }
}

function fmtFloat(f: Flags, v: number, verb: string, defaultPrec: number): string {
  const prec = f.precPresent ? f.prec : defaultPrec;
  // %f and %e print every digit of the precision: check before building them
  if (verb === 'f' || verb === 'e' || verb === 'E') ensureRoom(f, prec);
  let num = formatFloat(v, verb, prec);
  let sign = '+';
  if (num.charAt(0) === '-' || num.charAt(0) === '+') {
    sign = num.charAt(0);
    num = num.slice(1);
  }
  if (f.space && sign === '+' && !f.plus) sign = ' ';
  if (num === 'Inf' || num === 'NaN') {
    // not numbers: never zero padded, and NaN shows a sign only when asked
    const body = num === 'NaN' && !f.space && !f.plus ? num : sign + num;
    return padSpaces(f, body);
  }
  if (f.sharp && verb !== 'b') num = sharpFloat(num, verb, prec);
  if (f.plus || sign !== '+') {
    const total = num.length + 1;
    if (f.zero && f.widPresent && f.wid > total) return sign + padding(f, f.wid - total) + num;
    return pad(f, sign + num);
  }
  if (f.zero && f.widPresent && f.wid > num.length) return padding(f, f.wid - num.length) + num;
  return pad(f, num);
}

/** '#': always a decimal point; %g/%x keep trailing zeros up to the precision (6 by default). */
function sharpFloat(num: string, verb: string, prec: number): string {
  // Go pads to the precision for g, G, x and v but not X (which only gains a point)
  let want = verb === 'g' || verb === 'G' || verb === 'x' || verb === 'v' ? (prec === -1 ? 6 : prec) : 0;
  const hex = verb === 'x' || verb === 'X';
  let cut = num.length;
  for (let i = 0; i < num.length; i++) {
    const c = num.charAt(i);
    if (c === 'p' || c === 'P' || (!hex && (c === 'e' || c === 'E'))) {
      cut = i;
      break;
    }
  }
  let body = num.slice(0, cut);
  const tail = num.slice(cut);
  // Go counts the x of a 0x prefix as a significant digit; we do the same to print identically
  let seenNonZero = false;
  for (let i = 0; i < body.length; i++) {
    const c = body.charAt(i);
    if (c === '.') continue;
    if (c !== '0') seenNonZero = true;
    if (seenNonZero) want--;
  }
  if (!body.includes('.')) {
    if (body === '0') want--;
    body += '.';
  }
  if (want > 0) body += '0'.repeat(want);
  return body + tail;
}

/** String `s` under `verb`. */
export function formatString(f: Flags, s: string, verb: string): string | undefined {
  switch (verb) {
    case 'v':
      if (f.sharpV) return pad(f, quote(f.precPresent ? truncateRunes(s, f.prec) : s));
      return pad(f, f.precPresent ? truncateRunes(s, f.prec) : s);
    case 's':
      return pad(f, f.precPresent ? truncateRunes(s, f.prec) : s);
    case 'q': {
      const t = f.precPresent ? truncateRunes(s, f.prec) : s;
      if (f.sharp && canBackquote(t)) return pad(f, '`' + t + '`');
      return pad(f, quote(t, f.plus));
    }
    case 'x':
    case 'X':
      return hexBytes(f, toBytes(s), verb === 'X');
    default:
      return undefined;
  }
}

/** %x of a string: two hex digits per byte, ' ' separates bytes, '#' adds 0x prefixes. */
function hexBytes(f: Flags, bytes: Uint8Array, upper: boolean): string {
  const digits = upper ? HEX_UPPER : HEX_LOWER;
  const n = f.precPresent && f.prec < bytes.length ? f.prec : bytes.length;
  let s = '';
  for (let i = 0; i < n; i++) {
    if (f.space && i > 0) s += ' ';
    if (f.sharp && (f.space || i === 0)) s += upper ? '0X' : '0x';
    const b = bytes[i] ?? 0;
    s += digits.charAt(b >> 4) + digits.charAt(b & 15);
  }
  if (n === 0 && f.widPresent) return padding(f, f.wid);
  return pad(f, s);
}

/** Bool `b` under `verb`. */
export function formatBool(f: Flags, b: boolean, verb: string): string | undefined {
  if (verb === 't' || verb === 'v') return pad(f, b ? 'true' : 'false');
  return undefined;
}
