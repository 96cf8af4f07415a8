/**
 * Go's json.Marshal / json.MarshalIndent over template values, for the exec dialect's marshal and
 * marshalIndent: map keys sorted, <, >, & and U+2028/U+2029 escaped as \u003c etc. (Go escapes
 * them so JSON can sit inside HTML), NaN and infinities rejected, whole numbers without a point.
 */
import { Kind, kindOf, mapGet, mapKeys, sliceItems, TypedNumber } from '../values.js';
import { FuncError } from '../funcs.js';
import type { RenderBudget } from '../budget.js';
import { assertNever } from '../../protocol/never.js';

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

function quoteJSON(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s.charAt(i);
    const code = s.charCodeAt(i);
    const esc = ESCAPES[ch];
    if (esc !== undefined) out += esc;
    else if (code < 0x20) out += '\\u00' + code.toString(16).padStart(2, '0');
    else if (code >= 0xd800 && code <= 0xdfff) {
      // lone surrogates are invalid UTF-8 in Go and become U+FFFD
      const next = s.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        out += ch + s.charAt(i + 1);
        i++;
      } else out += '\ufffd';
    } else out += ch;
  }
  return out + '"';
}

function number(v: number): string {
  if (!Number.isFinite(v))
    throw new FuncError(`json: unsupported value: ${Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf'}`);
  return JSON.stringify(v);
}

/**
 * Encodes `v`; `indent` '' gives compact output. With a budget the text is checked as it grows
 * (indentation repeats on every element of every level).
 */
export function marshalJSON(v: unknown, indent = '', budget?: RenderBudget): string {
  return encode(v, indent, 0, budget);
}

function encode(v: unknown, indent: string, depth: number, budget: RenderBudget | undefined): string {
  if (depth > 1000) throw new FuncError('json: value nested too deeply');
  const k = kindOf(v);
  const nl = indent === '' ? '' : '\n' + indent.repeat(depth + 1);
  const close = indent === '' ? '' : '\n' + indent.repeat(depth);
  switch (k) {
    case Kind.Invalid:
    case Kind.Nil:
      return 'null';
    case Kind.Bool:
      return v ? 'true' : 'false';
    case Kind.Int:
      return typeof v === 'bigint' ? v.toString() : number(v as number);
    case Kind.Uint:
    case Kind.Float:
      return number(v instanceof TypedNumber ? v.value : (v as number));
    case Kind.String:
      return quoteJSON(v as string);
    case Kind.Slice: {
      const items = sliceItems(v);
      if (items.length === 0) return '[]';
      let s = '[';
      for (let i = 0; i < items.length; i++) {
        s += (i > 0 ? ',' : '') + nl + encode(items[i], indent, depth + 1, budget);
        budget?.ensure(s.length);
      }
      return s + close + ']';
    }
    case Kind.Map: {
      const keys = mapKeys(v as object);
      if (keys.length === 0) return '{}';
      const sep = indent === '' ? ':' : ': ';
      let s = '{';
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        s +=
          (i > 0 ? ',' : '') +
          nl +
          quoteJSON(String(key)) +
          sep +
          encode(mapGet(v as object, key), indent, depth + 1, budget);
        budget?.ensure(s.length);
      }
      return s + close + '}';
    }
    case Kind.Func:
      throw new FuncError('json: unsupported type: func');
    default:
      return assertNever(k, 'value kind');
  }
}
