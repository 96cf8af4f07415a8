/**
 * Numeric constants in Go syntax: decimal, 0x/0o/0b and leading-0 octal integers, underscores
 * between digits, decimal and hexadecimal floats, and character constants. As in Go, a constant
 * spelled as an integer is an int and anything else a float64.
 */
import { TypedNumber, NumberType } from './values.js';
import { unquoteChar } from './unquote.js';
import { quote } from './fmt/quote.js';

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const UINT64_MAX = (1n << 64n) - 1n;

/** A parsed constant: its value, or that it is an unsigned integer beyond int64. */
export interface NumberInfo {
  value: unknown;
  overflows: boolean;
}

export class NumberSyntaxError extends Error {}

/** Underscores only between digits (or right after a base prefix), as Go's underscoreOK. */
function underscoresOK(s: string): boolean {
  let i = 0;
  if (s.charAt(0) === '+' || s.charAt(0) === '-') i = 1;
  let saw = '^';
  let hex = false;
  const p = s.charAt(i + 1).toLowerCase();
  if (s.charAt(i) === '0' && (p === 'b' || p === 'o' || p === 'x')) {
    i += 2;
    saw = '0';
    hex = p === 'x';
  }
  for (; i < s.length; i++) {
    const c = s.charAt(i).toLowerCase();
    if ((c >= '0' && c <= '9') || (hex && c >= 'a' && c <= 'f')) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/** strconv.ParseInt/ParseUint with base 0; undefined on bad syntax. */
function parseInteger(text: string): bigint | undefined {
  let s = text;
  let neg = false;
  if (s.charAt(0) === '+' || s.charAt(0) === '-') {
    neg = s.charAt(0) === '-';
    s = s.slice(1);
  }
  if (s.includes('_')) {
    if (!underscoresOK(text)) return undefined;
    s = s.replaceAll('_', '');
  }
  let digits = s;
  let prefix = '';
  const p = s.charAt(1).toLowerCase();
  if (s.charAt(0) === '0' && s.length > 1) {
    if (p === 'x' || p === 'o' || p === 'b') {
      prefix = '0' + p;
      digits = s.slice(2);
    } else {
      prefix = '0o';
      digits = s.slice(1);
    }
  }
  const valid =
    prefix === '0x' ? /^[0-9a-fA-F]+$/ : prefix === '0o' ? /^[0-7]+$/ : prefix === '0b' ? /^[01]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return undefined;
  const v = BigInt(prefix + digits);
  return neg ? -v : v;
}

/** strconv.ParseFloat (64 bit); undefined on bad syntax or out of range. */
function parseFloat64(text: string): number | undefined {
  let s = text;
  if (s.includes('_')) {
    if (!underscoresOK(text)) return undefined;
    s = s.replaceAll('_', '');
  }
  let sign = 1;
  if (s.charAt(0) === '+' || s.charAt(0) === '-') {
    if (s.charAt(0) === '-') sign = -1;
    s = s.slice(1);
  }
  let v: number;
  if (/^0[xX]/.test(s)) {
    const m = /^0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)$/.exec(s);
    if (m === null || (m[1] ?? '') + (m[2] ?? '') === '') return undefined;
    const frac = m[2] ?? '';
    const mant = BigInt('0x' + (m[1] ?? '') + frac + (m[1] === '' && frac === '' ? '0' : ''));
    v = Number(mant) * 2 ** (Number(m[3]) - 4 * frac.length);
  } else {
    if (!/^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(s)) return undefined;
    v = Number(s);
  }
  if (!Number.isFinite(v)) return undefined;
  return sign * v;
}

/** Evaluates a number or character-constant token. */
export function parseNumber(text: string, isChar: boolean): NumberInfo {
  if (isChar) {
    const [r, , next] = unquoteChar(text, 1, "'");
    if (text.slice(next) !== "'") throw new NumberSyntaxError(`malformed character constant: ${text}`);
    return { value: r, overflows: false };
  }
  const n = parseInteger(text);
  if (n !== undefined) {
    if (n >= INT64_MIN && n <= INT64_MAX) {
      const small = n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER);
      return { value: small ? Number(n) : n, overflows: false };
    }
    if (n >= 0n && n <= UINT64_MAX) return { value: undefined, overflows: true };
  }
  const f = parseFloat64(text);
  if (f === undefined) throw new NumberSyntaxError(`illegal number syntax: ${quote(text)}`);
  if (!/[.eEpP]/.test(text)) throw new NumberSyntaxError(`integer overflow: ${quote(text)}`);
  return { value: Number.isInteger(f) ? new TypedNumber(NumberType.Float64, f) : f, overflows: false };
}
