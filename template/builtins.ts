/**
 * The predefined functions of text/template. Functions taking Param.Value see Go's invalid value as
 * undefined and a nil interface as null, because len, index and friends treat the two differently.
 */
import { Param, FuncError } from './funcs.js';
import type { FuncSpec } from './funcs.js';
import type { RenderBudget } from './budget.js';
import { Kind, kindOf, isTrue, mapGet, mapSize, sliceItems, typeName, TypedNumber, NumberType } from './values.js';
import { byteLength, isAscii, toBytes, fromBytes } from './utf8.js';
import { sprint, sprintf, sprintln } from './fmt/printf.js';
import { escaperText, htmlEscape, jsEscape, urlQueryEscape } from './escape.js';
import { eq, ne, lt, le, gt, ge } from './compare.js';

/** Go's indirectInterface: a nil interface reads as the invalid value. */
function deref(v: unknown): unknown {
  return v === null ? undefined : v;
}

/**
 * Marks a slice index that arrived as an interface value (an element of a map or list): Go's
 * slice does not look inside those and rejects them by their static type.
 */
export const IFACE_INDEX: unique symbol = Symbol('interface index');

/** An index argument: any integer kind, within [0, cap]. */
function indexArg(index: unknown, cap: number): number {
  if (index === IFACE_INDEX) throw new FuncError('cannot index slice/array with type interface {}');
  const v = deref(index);
  const k = kindOf(v);
  if (k === Kind.Invalid) throw new FuncError('cannot index slice/array with nil');
  if (k !== Kind.Int && k !== Kind.Uint) throw new FuncError(`cannot index slice/array with type ${typeName(v)}`);
  const x = v instanceof TypedNumber ? v.value : Number(v as number | bigint);
  if (x < 0 || x > cap) throw new FuncError(`index out of range: ${String(v instanceof TypedNumber ? v.value : v)}`);
  return x;
}

function byteAt(s: string, i: number): number {
  return isAscii(s) ? s.charCodeAt(i) : (toBytes(s)[i] ?? 0);
}

function index(item: unknown, ...indexes: unknown[]): unknown {
  let cur = deref(item);
  if (cur === undefined) throw new FuncError('index of untyped nil');
  for (const idx of indexes) {
    cur = deref(cur);
    const k = kindOf(cur);
    switch (k) {
      case Kind.Slice: {
        const items = sliceItems(cur);
        const x = indexArg(idx, items.length);
        if (x === items.length) throw new FuncError('reflect: slice index out of range');
        cur = items[x];
        break;
      }
      case Kind.String: {
        const s = cur as string;
        const n = byteLength(s);
        const x = indexArg(idx, n);
        if (x === n) throw new FuncError('reflect: string index out of range');
        cur = new TypedNumber(NumberType.Uint8, byteAt(s, x));
        break;
      }
      case Kind.Map: {
        const key = deref(idx);
        if (key === undefined) throw new FuncError('value is nil; should be of type string');
        if (typeof key !== 'string' && !(cur instanceof Map)) {
          throw new FuncError(`value has type ${typeName(key)}; should be string`);
        }
        const v = mapGet(cur as object, key);
        cur = v === undefined ? null : v;
        break;
      }
      case Kind.Invalid:
        throw new FuncError('index of nil pointer');
      default:
        throw new FuncError(`can't index item of type ${typeName(cur)}`);
    }
  }
  return cur;
}

function slice(item: unknown, ...indexes: unknown[]): unknown {
  const v = deref(item);
  if (v === undefined) throw new FuncError('slice of untyped nil');
  if (indexes.length > 3) throw new FuncError(`too many slice indexes: ${indexes.length}`);
  const k = kindOf(v);
  let len: number;
  if (k === Kind.String) {
    if (indexes.length === 3) throw new FuncError('cannot 3-index slice a string');
    len = byteLength(v as string);
  } else if (k === Kind.Slice) len = sliceItems(v).length;
  else throw new FuncError(`can't slice item of type ${typeName(v)}`);
  const idx = [0, len, len];
  for (let i = 0; i < indexes.length; i++) idx[i] = indexArg(indexes[i], len);
  const [from = 0, to = len, max = len] = idx;
  if (from > to) throw new FuncError(`invalid slice index: ${from} > ${to}`);
  if (indexes.length === 3 && to > max) throw new FuncError(`invalid slice index: ${to} > ${max}`);
  if (k === Kind.String) {
    const s = v as string;
    return isAscii(s) ? s.slice(from, to) : fromBytes(toBytes(s).subarray(from, to));
  }
  return sliceItems(v).slice(from, to);
}

function length(item: unknown): number {
  if (item === undefined) throw new FuncError('reflect: call of reflect.Value.Type on zero Value');
  if (item === null) throw new FuncError('len of nil pointer');
  switch (kindOf(item)) {
    case Kind.String:
      return byteLength(item as string);
    case Kind.Slice:
      return sliceItems(item).length;
    case Kind.Map:
      return mapSize(item as object);
    default:
      throw new FuncError(`len of type ${typeName(item)}`);
  }
}

function call(fn: unknown): never {
  const f = deref(fn);
  if (f === undefined) throw new FuncError('call of nil');
  if (typeof f === 'function') throw new FuncError('calling functions found in data is not allowed');
  throw new FuncError(`non-function of type ${typeName(f)}`);
}

const V = Param.Value;
const A = Param.Any;

/** and/or are evaluated lazily by the executor; these bodies serve direct calls only. */
export const BUILTINS: ReadonlyMap<string, FuncSpec> = new Map<string, FuncSpec>([
  ['and', { fn: (...a: unknown[]) => a.find((x) => !isTrue(x)) ?? a[a.length - 1], params: [V], variadic: V }],
  ['or', { fn: (...a: unknown[]) => a.find((x) => isTrue(x)) ?? a[a.length - 1], params: [V], variadic: V }],
  ['not', { fn: (a: unknown) => !isTrue(a), params: [V] }],
  ['len', { fn: length, params: [V] }],
  ['index', { fn: index, params: [V], variadic: V }],
  ['slice', { fn: slice, params: [V], variadic: V }],
  ['call', { fn: call, params: [V], variadic: V }],
  ['print', { fn: (b: RenderBudget, ...a: unknown[]) => sprint(a, b), params: [], variadic: A, budget: true }],
  [
    'printf',
    {
      fn: (b: RenderBudget, f: string, ...a: unknown[]) => sprintf(f, a, b),
      params: [Param.String],
      variadic: A,
      budget: true,
    },
  ],
  ['println', { fn: (b: RenderBudget, ...a: unknown[]) => sprintln(a, b), params: [], variadic: A, budget: true }],
  ['html', { fn: (...a: unknown[]) => htmlEscape(escaperText(a)), params: [], variadic: A }],
  ['js', { fn: (...a: unknown[]) => jsEscape(escaperText(a)), params: [], variadic: A }],
  ['urlquery', { fn: (...a: unknown[]) => urlQueryEscape(escaperText(a)), params: [], variadic: A }],
  ['eq', { fn: eq, params: [V], variadic: V }],
  ['ne', { fn: ne, params: [V, V] }],
  ['lt', { fn: lt, params: [V, V] }],
  ['le', { fn: le, params: [V, V] }],
  ['gt', { fn: gt, params: [V, V] }],
  ['ge', { fn: ge, params: [V, V] }],
]);
