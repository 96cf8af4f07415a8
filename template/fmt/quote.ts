/**
 * Go's strconv quoting (Quote, QuoteToASCII, QuoteRune, CanBackquote) and unicode.IsPrint, used by
 * %q, %#U and the js escaper.
 */

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;
const MAX_RUNE = 0x10ffff;

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isPrint(r: number): boolean {
  if (r < 0x80) return r >= 0x20 && r < 0x7f;
  if (r > MAX_RUNE || (r >= 0xd800 && r <= 0xdfff)) return false;
  return PRINTABLE.test(String.fromCodePoint(r));
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** One rune inside a quoted literal whose delimiter is `quote`. */
function escapeRune(r: number, quote: number, asciiOnly: boolean): string {
  if (r === quote || r === 0x5c) return '\\' + String.fromCharCode(r);
  if (asciiOnly) {
    if (r < 0x80 && isPrint(r)) return String.fromCharCode(r);
  } else if (isPrint(r)) return String.fromCodePoint(r);
  switch (r) {
    case 0x07:
      return '\\a';
    case 0x08:
      return '\\b';
    case 0x0c:
      return '\\f';
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    case 0x0b:
      return '\\v';
  }
  if (r < 0x20 || r === 0x7f) return '\\x' + hex(r, 2);
  if (r > MAX_RUNE || (r >= 0xd800 && r <= 0xdfff)) r = 0xfffd;
  if (r < 0x10000) return '\\u' + hex(r, 4);
  return '\\U' + hex(r, 8);
}

/** strconv.Quote (asciiOnly: QuoteToASCII). */
export function quote(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) {
    const r = ch.codePointAt(0) ?? 0xfffd;
    if (r >= 0x20 && r < 0x7f && r !== 0x22 && r !== 0x5c) out += ch;
    else out += escapeRune(r, 0x22, asciiOnly);
  }
  return out + '"';
}

/** strconv.QuoteRune (asciiOnly: QuoteRuneToASCII); out-of-range runes print as U+FFFD. */
export function quoteRune(r: number, asciiOnly = false): string {
  if (r > MAX_RUNE || r < 0 || (r >= 0xd800 && r <= 0xdfff)) r = 0xfffd;
  return "'" + escapeRune(r, 0x27, asciiOnly) + "'";
}

/** strconv.CanBackquote: one line, no control characters other than tab, no backquote, no BOM. */
export function canBackquote(s: string): boolean {
  for (const ch of s) {
    const r = ch.codePointAt(0) ?? 0;
    if (r === 0x60 || r === 0xfeff) return false;
    if ((r < 0x20 && r !== 0x09) || r === 0x7f) return false;
    if (r >= 0xd800 && r <= 0xdfff) return false;
  }
  return true;
}

/** The string of one rune, U+FFFD for values that are not runes. */
export function runeString(r: number): string {
  if (r < 0 || r > MAX_RUNE || (r >= 0xd800 && r <= 0xdfff)) return '\ufffd';
  return String.fromCodePoint(r);
}
