/**
 * Formatting of any template value for one verb, following Go fmt: slices as [a b], maps as
 * map[k:v] in sorted key order, nil as <nil>, wrong verbs as %!verb(type=value), and %#v in Go syntax.
 */
import { Kind, kindOf, typeName, mapKeys, mapGet, sliceItems, TypedNumber } from '../values.js';
import { formatBool, formatFloatVerb, formatInteger, formatString } from './scalars.js';
import { ensureRoom, pad } from './flags.js';
import type { Flags } from './flags.js';
import { assertNever } from '../../protocol/never.js';

const NIL = '<nil>';

/** Formats `v` for `verb` at nesting `depth` (elements of slices and maps have depth > 0). */
export function formatValue(f: Flags, v: unknown, verb: string, depth = 0): string {
  // %T prints the type name like a %s string: precision truncates, width pads
  if (verb === 'T' && depth === 0) return formatString(f, typeName(v), 's') ?? '';
  const k = kindOf(v);
  switch (k) {
    case Kind.Invalid:
    case Kind.Nil:
      // a nil element of a list or map is written unpadded, as Go does
      if (depth > 0) return f.sharpV ? 'interface {}(nil)' : NIL;
      if (verb === 'v') return pad(f, NIL);
      return badVerb(f, v, verb);
    case Kind.Bool:
      return formatBool(f, v as boolean, verb) ?? badVerb(f, v, verb);
    case Kind.Int: {
      const n = typeof v === 'number' || typeof v === 'bigint' ? v : 0;
      return formatInteger(f, n, false, verb) ?? badVerb(f, v, verb);
    }
    case Kind.Uint:
      return formatInteger(f, (v as TypedNumber).value, true, verb) ?? badVerb(f, v, verb);
    case Kind.Float: {
      const x = v instanceof TypedNumber ? v.value : (v as number);
      return formatFloatVerb(f, x, verb) ?? badVerb(f, v, verb);
    }
    case Kind.String:
      return formatString(f, v as string, verb) ?? badVerb(f, v, verb);
    case Kind.Slice:
      // %p would print an address in Go; there is none to show here
      if (verb === 'p') return badVerb(f, v, verb);
      return formatSlice(f, sliceItems(v), verb, depth);
    case Kind.Map:
      if (verb === 'p') return badVerb(f, v, verb);
      return formatMap(f, v as object, verb, depth);
    case Kind.Func:
      // functions have no textual form in templates; Go would print an address
      return verb === 'v' ? pad(f, '<func>') : badVerb(f, v, verb);
    default:
      return assertNever(k, 'value kind');
  }
}

function formatSlice(f: Flags, items: readonly unknown[], verb: string, depth: number): string {
  if (f.sharpV) {
    let s = '[]interface {}{';
    for (let i = 0; i < items.length; i++) {
      if (i > 0) s += ', ';
      s += formatValue(f, items[i], verb, depth + 1);
      ensureRoom(f, s.length);
    }
    return s + '}';
  }
  let s = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) s += ' ';
    s += formatValue(f, items[i], verb, depth + 1);
    // a width pads every element: a long list must not build past the budget first
    ensureRoom(f, s.length);
  }
  return s + ']';
}

function formatMap(f: Flags, m: object, verb: string, depth: number): string {
  const keys = mapKeys(m);
  let s = f.sharpV ? 'map[string]interface {}{' : 'map[';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (i > 0) s += f.sharpV ? ', ' : ' ';
    s += formatValue(f, key, verb, depth + 1);
    s += ':';
    s += formatValue(f, mapGet(m, key), verb, depth + 1);
    ensureRoom(f, s.length);
  }
  return s + (f.sharpV ? '}' : ']');
}

/** %!verb(type=value), the value printed with %v under the same flags. */
function badVerb(f: Flags, v: unknown, verb: string): string {
  if (v === undefined || v === null) return '%!' + verb + '(' + NIL + ')';
  return '%!' + verb + '(' + typeName(v) + '=' + formatValue(f, v, 'v', 0) + ')';
}
