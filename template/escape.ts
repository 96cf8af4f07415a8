/**
 * The html, js and urlquery builtins: Go's HTMLEscapeString, JSEscapeString and url.QueryEscape
 * applied to the arguments printed as by fmt.Sprint (a single string argument is used as is).
 */
import { sprint } from './fmt/printf.js';
import { isPrint } from './fmt/quote.js';
import { toBytes } from './utf8.js';

/** The text of escaper arguments; nil arguments read as "<no value>" like Go's printableValue. */
export function escaperText(args: readonly unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args.map((a) => (a === undefined || a === null ? '<no value>' : a)));
}

export function htmlEscape(s: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    let rep: string;
    switch (s.charCodeAt(i)) {
      case 0x22:
        rep = '&#34;';
        break;
      case 0x27:
        rep = '&#39;';
        break;
      case 0x26:
        rep = '&amp;';
        break;
      case 0x3c:
        rep = '&lt;';
        break;
      case 0x3e:
        rep = '&gt;';
        break;
      case 0:
        rep = '\ufffd';
        break;
      default:
        continue;
    }
    out += s.slice(last, i) + rep;
    last = i + 1;
  }
  return last === 0 ? s : out + s.slice(last);
}

function hex4(r: number): string {
  return r.toString(16).toUpperCase().padStart(4, '0');
}

export function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const r = ch.codePointAt(0) ?? 0xfffd;
    switch (r) {
      case 0x5c:
        out += '\\\\';
        continue;
      case 0x27:
        out += "\\'";
        continue;
      case 0x22:
        out += '\\"';
        continue;
      case 0x3c:
        out += '\\u003C';
        continue;
      case 0x3e:
        out += '\\u003E';
        continue;
      case 0x26:
        out += '\\u0026';
        continue;
      case 0x3d:
        out += '\\u003D';
        continue;
    }
    if (r < 0x20) out += '\\u' + hex4(r);
    else if (r < 0x80 || isPrint(r)) out += ch;
    else out += '\\u' + hex4(r);
  }
  return out;
}

const HEX = '0123456789ABCDEF';

function unreserved(b: number): boolean {
  return (
    (b >= 0x30 && b <= 0x39) ||
    (b >= 0x41 && b <= 0x5a) ||
    (b >= 0x61 && b <= 0x7a) ||
    b === 0x2d ||
    b === 0x2e ||
    b === 0x5f ||
    b === 0x7e
  );
}

export function urlQueryEscape(s: string): string {
  let out = '';
  for (const b of toBytes(s)) {
    if (unreserved(b)) out += String.fromCharCode(b);
    else if (b === 0x20) out += '+';
    else out += '%' + HEX.charAt(b >> 4) + HEX.charAt(b & 15);
  }
  return out;
}
