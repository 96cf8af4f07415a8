/**
 * Go's Sprintf, Sprint and Sprintln over template values: flags '#0+- ', width and precision
 * (digits or '*'), explicit argument indexes [n], and the %!(...) reports for bad or missing input.
 */
import { clearFlags, ensureRoom, newFlags } from './flags.js';
import type { Flags } from './flags.js';
import { formatValue } from './value.js';
import { Kind, kindOf, typeName, TypedNumber } from '../values.js';
import type { RenderBudget } from '../budget.js';

/** Width or precision above this is reported as bad, as in Go. */
const TOO_LARGE = 1e6;

/**
 * The functions below take the render's budget when they format for one: every piece is checked
 * against the room left as the result grows, and padding before it is built.
 */

/** Sprint: operands separated by a space when neither side is a string. */
export function sprint(args: readonly unknown[], budget: RenderBudget | null = null): string {
  const f = newFlags(budget);
  let out = '';
  let prevString = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const isString = typeof a === 'string';
    if (i > 0 && !isString && !prevString) out += ' ';
    out += isString ? a : formatValue(f, a, 'v');
    ensureRoom(f, out.length);
    prevString = isString;
  }
  return out;
}

/** Sprintln: operands always separated by spaces, then a newline. */
export function sprintln(args: readonly unknown[], budget: RenderBudget | null = null): string {
  const f = newFlags(budget);
  let out = '';
  for (let i = 0; i < args.length; i++) {
    if (i > 0) out += ' ';
    const a = args[i];
    out += typeof a === 'string' ? a : formatValue(f, a, 'v');
    ensureRoom(f, out.length);
  }
  return out + '\n';
}

/** An int argument for '*' (any integer kind, within ±1e6). */
function intArg(a: unknown): number | undefined {
  const k = kindOf(a);
  if (k !== Kind.Int && k !== Kind.Uint) return undefined;
  const n = a instanceof TypedNumber ? a.value : Number(a);
  return n > TOO_LARGE || n < -TOO_LARGE ? undefined : n;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Reads digits at `i`: [value, next position, any digits]; an overlong number eats the rest, as in Go. */
function parseNum(s: string, i: number, end: number): [number, number, boolean] {
  let n = 0;
  let any = false;
  while (i < end && isDigit(s.charCodeAt(i))) {
    if (n > TOO_LARGE) return [0, end, false];
    n = n * 10 + (s.charCodeAt(i) - 48);
    any = true;
    i++;
  }
  return [n, i, any];
}

/** Printf state: the argument cursor and whether an explicit index was used. */
interface Cursor {
  argNum: number;
  reordered: boolean;
  goodArgNum: boolean;
}

/** Handles "[n]" at position i: moves the cursor; returns the new position and whether an index was read. */
function argIndex(format: string, i: number, c: Cursor, nargs: number): [number, boolean] {
  if (i >= format.length || format.charAt(i) !== '[') return [i, false];
  c.reordered = true;
  if (format.length - i < 3) {
    c.goodArgNum = false;
    return [i + 1, false];
  }
  const close = format.indexOf(']', i + 1);
  if (close < 0) {
    c.goodArgNum = false;
    return [i + 1, false];
  }
  const [n, next, ok] = parseNum(format, i + 1, close);
  if (!ok || next !== close) {
    c.goodArgNum = false;
    return [close + 1, false];
  }
  if (n - 1 >= 0 && n - 1 < nargs) {
    c.argNum = n - 1;
    return [close + 1, true];
  }
  c.goodArgNum = false;
  return [close + 1, true];
}

export function sprintf(format: string, args: readonly unknown[], budget: RenderBudget | null = null): string {
  const f: Flags = newFlags(budget);
  const c: Cursor = { argNum: 0, reordered: false, goodArgNum: true };
  let out = '';
  const end = format.length;
  let i = 0;
  while (i < end) {
    c.goodArgNum = true;
    const lasti = i;
    while (i < end && format.charCodeAt(i) !== 37) i++;
    if (i > lasti) out += format.slice(lasti, i);
    if (i >= end) break;
    i++; // skip '%'
    clearFlags(f);
    flags: for (; i < end; i++) {
      switch (format.charAt(i)) {
        case '#':
          f.sharp = true;
          break;
        case '0':
          f.zero = !f.minus;
          break;
        case '+':
          f.plus = true;
          break;
        case '-':
          f.minus = true;
          f.zero = false;
          break;
        case ' ':
          f.space = true;
          break;
        default:
          break flags;
      }
    }
    let afterIndex: boolean;
    [i, afterIndex] = argIndex(format, i, c, args.length);
    // width
    if (i < end && format.charAt(i) === '*') {
      i++;
      const w = c.argNum < args.length ? intArg(args[c.argNum]) : undefined;
      if (c.argNum < args.length) c.argNum++;
      if (w === undefined) out += '%!(BADWIDTH)';
      else {
        f.widPresent = true;
        f.wid = w;
        if (w < 0) {
          f.minus = true;
          f.zero = false;
          f.wid = -w;
        }
      }
      afterIndex = false;
    } else {
      const [w, next, ok] = parseNum(format, i, end);
      f.widPresent = ok;
      f.wid = w;
      i = next;
      if (afterIndex && ok) c.goodArgNum = false; // "%[3]2d"
    }
    // precision
    if (i + 1 < end && format.charAt(i) === '.') {
      i++;
      if (afterIndex) c.goodArgNum = false; // "%[3].2d"
      [i, afterIndex] = argIndex(format, i, c, args.length);
      if (i < end && format.charAt(i) === '*') {
        i++;
        const p = c.argNum < args.length ? intArg(args[c.argNum]) : undefined;
        if (c.argNum < args.length) c.argNum++;
        if (p === undefined || p < 0) out += '%!(BADPREC)';
        else {
          f.precPresent = true;
          f.prec = p;
        }
        afterIndex = false;
      } else {
        const [p, next] = parseNum(format, i, end);
        f.precPresent = true;
        f.prec = p;
        i = next;
      }
    }
    if (!afterIndex) [i, afterIndex] = argIndex(format, i, c, args.length);
    if (i >= end) {
      out += '%!(NOVERB)';
      break;
    }
    const cp = format.codePointAt(i) ?? 0;
    const verb = String.fromCodePoint(cp);
    i += verb.length;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (!c.goodArgNum) {
      out += '%!' + verb + '(BADINDEX)';
      continue;
    }
    if (c.argNum >= args.length) {
      out += '%!' + verb + '(MISSING)';
      continue;
    }
    const arg = args[c.argNum++];
    if (verb === 'v') {
      if (f.sharp) {
        f.sharp = false;
        f.sharpV = true;
      }
      if (f.plus) {
        f.plus = false;
        f.plusV = true;
      }
    }
    if (verb === 'w') {
      // %w is for errors only (Errorf)
      out +=
        arg === undefined || arg === null
          ? '%!w(<nil>)'
          : '%!w(' + typeName(arg) + '=' + formatValue(f, arg, 'v') + ')';
      continue;
    }
    out += formatValue(f, arg, verb);
    ensureRoom(f, out.length);
  }
  if (!c.reordered && c.argNum < args.length) {
    clearFlags(f);
    out += '%!(EXTRA ';
    for (let k = c.argNum; k < args.length; k++) {
      if (k > c.argNum) out += ', ';
      const a = args[k];
      if (a === undefined || a === null) out += '<nil>';
      else out += typeName(a) + '=' + formatValue(f, a, 'v');
    }
    out += ')';
  }
  return out;
}
