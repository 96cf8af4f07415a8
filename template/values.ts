/**
 * The Go view of JS values. Templates see data as Go would see JSON decoded into interface{}:
 * objects and Maps are map[string]interface {}, arrays are []interface {}, whole numbers are int,
 * other numbers float64. Two Go states have no JS twin and get a representation here:
 *  - `undefined` is Go's invalid reflect.Value ("<no value>", e.g. a missing map key), while
 *    `null` is a nil interface ("<nil>");
 *  - TypedNumber carries numbers whose Go type is not implied by the JS number: a float64 constant
 *    with a whole value (`1.0`) and the uint8 bytes produced by indexing a string.
 */
import { compareStrings } from './utf8.js';
import { assertNever } from '../protocol/never.js';

/** Go number types a JS number alone cannot express. */
export const NumberType = {
  /** A float64 whose value happens to be whole (from a constant like 1.0 or 1e3). */
  Float64: 'float64',
  /** A byte, the result of indexing a string. */
  Uint8: 'uint8',
} as const;
export type NumberType = (typeof NumberType)[keyof typeof NumberType];

/** A number with an explicit Go type. */
export class TypedNumber {
  constructor(
    readonly type: NumberType,
    readonly value: number,
  ) {}
}

/** The reflect kinds the engine distinguishes (Go's basicKind plus the composite ones we support). */
export const Kind = {
  Invalid: 'invalid',
  Nil: 'nil',
  Bool: 'bool',
  Int: 'int',
  Uint: 'uint',
  Float: 'float',
  String: 'string',
  Slice: 'slice',
  Map: 'map',
  Func: 'func',
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/** Keys that are never read from data, even as own properties, so no prototype can be reached. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

export function isForbiddenName(name: string): boolean {
  return FORBIDDEN.has(name);
}

/** Go int range: whole JS numbers outside it are float64. */
const INT64_LIMIT = 2 ** 63;

export function kindOf(v: unknown): Kind {
  switch (typeof v) {
    case 'string':
      return Kind.String;
    case 'number':
      return Number.isInteger(v) && v < INT64_LIMIT && v >= -INT64_LIMIT ? Kind.Int : Kind.Float;
    case 'boolean':
      return Kind.Bool;
    case 'bigint':
      return Kind.Int;
    case 'undefined':
      return Kind.Invalid;
    case 'function':
      return Kind.Func;
    case 'object':
      if (v === null) return Kind.Nil;
      if (Array.isArray(v) || ArrayBuffer.isView(v)) return Kind.Slice;
      if (v instanceof TypedNumber) return v.type === NumberType.Float64 ? Kind.Float : Kind.Uint;
      return Kind.Map;
    default:
      // symbols: not data; shown as an unsupported map-less value
      return Kind.Func;
  }
}

/** Go's type name, as %T and error messages print it. */
export function typeName(v: unknown): string {
  const k = kindOf(v);
  switch (k) {
    case Kind.Invalid:
    case Kind.Nil:
      return '<nil>';
    case Kind.Bool:
      return 'bool';
    case Kind.Int:
      return 'int';
    case Kind.Uint:
      return 'uint8';
    case Kind.Float:
      return 'float64';
    case Kind.String:
      return 'string';
    case Kind.Slice:
      return '[]interface {}';
    case Kind.Map:
      return 'map[string]interface {}';
    case Kind.Func:
      return 'func(...interface {}) interface {}';
    default:
      return assertNever(k, 'value kind');
  }
}

/** Elements of a slice value. */
export function sliceItems(v: unknown): readonly unknown[] {
  if (Array.isArray(v)) return v;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>);
  return [];
}

/** The value under `key`, or undefined (Go's invalid value) when the map has no such own entry. */
export function mapGet(m: object, key: unknown): unknown {
  if (m instanceof Map) return m.get(key);
  if (typeof key !== 'string' || FORBIDDEN.has(key) || !Object.hasOwn(m, key)) return undefined;
  return (m as Record<string, unknown>)[key];
}

/** Own entry count, forbidden names excluded. */
export function mapSize(m: object): number {
  if (m instanceof Map) return m.size;
  let n = 0;
  for (const k of Object.keys(m)) if (!FORBIDDEN.has(k)) n++;
  return n;
}

/** Keys in Go's sorted order (fmt and range both sort map keys). */
export function mapKeys(m: object): unknown[] {
  if (m instanceof Map) return [...m.keys()].sort(compareKeys);
  const keys = Object.keys(m).filter((k) => !FORBIDDEN.has(k));
  return keys.sort(compareStrings);
}

/** Orders keys of mixed types: by kind first, then by value, like Go's internal/fmtsort. */
function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  const na = typeof a === 'number' || typeof a === 'bigint' ? Number(a) : NaN;
  const nb = typeof b === 'number' || typeof b === 'bigint' ? Number(b) : NaN;
  if (!Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
  return compareStrings(typeof a, typeof b);
}

/**
 * Go's truth: false, 0, nil, the invalid value and empty strings, slices and maps are false.
 * Every kind we support has a truth value, so no "can't use" failure is possible here.
 */
export function isTrue(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
      return v.length > 0;
    case 'number':
      // NaN != 0 in Go too, so NaN is true
      return v !== 0;
    case 'boolean':
      return v;
    case 'bigint':
      return v !== 0n;
    case 'undefined':
      return false;
    case 'function':
      return true;
    case 'object':
      if (v === null) return false;
      if (Array.isArray(v)) return v.length > 0;
      if (v instanceof TypedNumber) return v.value !== 0;
      if (ArrayBuffer.isView(v)) return v.byteLength > 0;
      return mapSize(v) > 0;
    default:
      return true;
  }
}
