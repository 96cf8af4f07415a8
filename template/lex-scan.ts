/**
 * Character-level scanners of the lexer: character classes, Go number syntax and quoted literals.
 * They work on (input, position) and return where the item ends, so the lexer only decides what
 * kind of token to emit.
 */
import { isPrint } from './fmt/quote.js';

const ALNUM = /[\p{L}\p{Nd}_]/u;

/** Go's template white space: space, tab, carriage return, newline. */
export function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n';
}

/** Letters, decimal digits and '_' (Go's unicode.IsLetter / IsDigit). */
export function isAlphaNumeric(c: string): boolean {
  if (c.length === 0) return false;
  const code = c.charCodeAt(0);
  if (code < 0x80)
    return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
  return ALNUM.test(c);
}

/** The character (whole code point) at `pos`, or '' at the end. */
export function charAt(input: string, pos: number): string {
  if (pos >= input.length) return '';
  return String.fromCodePoint(input.codePointAt(pos) ?? 0);
}

/** Go's %#U: U+0029 ')' (the character only when printable). */
export function describeRune(c: string): string {
  const r = c.codePointAt(0) ?? 0;
  const hex = 'U+' + r.toString(16).toUpperCase().padStart(4, '0');
  return isPrint(r) ? `${hex} '${c}'` : hex;
}

/** Where a number starting at `pos` ends, and whether it is well formed (no letter right after it). */
export function scanNumber(input: string, pos: number): { end: number; ok: boolean } {
  let i = pos;
  const accept = (valid: string): boolean => {
    const c = input.charAt(i);
    if (c !== '' && valid.includes(c)) {
      i++;
      return true;
    }
    return false;
  };
  const acceptRun = (valid: string): void => {
    while (accept(valid));
  };
  accept('+-');
  let digits = '0123456789_';
  if (accept('0')) {
    if (accept('xX')) digits = '0123456789abcdefABCDEF_';
    else if (accept('oO')) digits = '01234567_';
    else if (accept('bB')) digits = '01_';
  }
  acceptRun(digits);
  if (accept('.')) acceptRun(digits);
  if (digits.length === 11 && accept('eE')) {
    accept('+-');
    acceptRun('0123456789_');
  }
  if (digits.length === 23 && accept('pP')) {
    accept('+-');
    acceptRun('0123456789_');
  }
  accept('i');
  const next = charAt(input, i);
  // as in Go, the offending character is part of the reported text
  if (isAlphaNumeric(next)) return { end: i + next.length, ok: false };
  return { end: i, ok: true };
}

/**
 * The end (after the closing quote) of a "..." or '...' literal whose opening quote is at pos-1,
 * or -1 when a newline or the end of input comes first. Backslash escapes the next character.
 */
export function scanQuoted(input: string, pos: number, quote: string): number {
  let i = pos;
  for (;;) {
    let c = charAt(input, i);
    i += c.length;
    if (c === '\\') {
      c = charAt(input, i);
      i += c.length;
      if (c !== '' && c !== '\n') continue;
    }
    if (c === '' || c === '\n') return -1;
    if (c === quote) return i;
  }
}

/** Newlines in s[from, to), for token line numbers. */
export function countNewlines(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = s.indexOf('\n', from); i >= 0 && i < to; i = s.indexOf('\n', i + 1)) n++;
  return n;
}
