/**
 * The comparison builtins eq, ne, lt, le, gt, ge with Go's rules: only basic kinds compare, kinds
 * must match except signed against unsigned integers, and a missing value equals only another
 * missing value.
 */
import { Kind, kindOf, TypedNumber, typeName } from './values.js';
import { FuncError } from './funcs.js';
import { compareStrings } from './utf8.js';
import { sprintf } from './fmt/printf.js';

const BAD_TYPE = 'invalid type for comparison';
const INCOMPATIBLE = 'incompatible types for comparison';
const NO_COMPARISON = 'missing argument for comparison';

type Basic = typeof Kind.Bool | typeof Kind.Int | typeof Kind.Uint | typeof Kind.Float | typeof Kind.String | 'other';

/** A nil interface compares like the invalid value (Go's indirectInterface). */
function deref(v: unknown): unknown {
  return v === null ? undefined : v;
}

function basicKind(v: unknown): Basic {
  const k = kindOf(v);
  switch (k) {
    case Kind.Bool:
    case Kind.Int:
    case Kind.Uint:
    case Kind.Float:
    case Kind.String:
      return k;
    default:
      return 'other';
  }
}

function num(v: unknown): number | bigint {
  if (v instanceof TypedNumber) return v.value;
  return v as number | bigint;
}

/** Compares two integers that may be number or bigint: -1, 0, 1. */
function cmpInt(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function nonComparable(a: unknown, b: unknown): FuncError {
  if (typeName(a) !== typeName(b)) {
    return new FuncError(
      `non-comparable types ${sprintf('%s', [a])}: ${typeName(a)}, ${typeName(b)}: ${sprintf('%v', [b])}`,
    );
  }
  return new FuncError(`non-comparable type ${sprintf('%s', [b])}: ${typeName(b)}`);
}

/** eq: true when arg1 equals any of the others. */
export function eq(arg1: unknown, ...rest: unknown[]): boolean {
  const a = deref(arg1);
  if (rest.length === 0) throw new FuncError(NO_COMPARISON);
  const k1 = basicKind(a);
  for (const raw of rest) {
    const b = deref(raw);
    const k2 = basicKind(b);
    let truth = false;
    if (k1 !== k2) {
      if (k1 === Kind.Int && k2 === Kind.Uint) truth = cmpInt(num(a), 0) >= 0 && cmpInt(num(a), num(b)) === 0;
      else if (k1 === Kind.Uint && k2 === Kind.Int) truth = cmpInt(num(b), 0) >= 0 && cmpInt(num(a), num(b)) === 0;
      else if (a !== undefined && b !== undefined) throw new FuncError(INCOMPATIBLE);
    } else {
      switch (k1) {
        case Kind.Bool:
        case Kind.String:
          truth = a === b;
          break;
        case Kind.Int:
        case Kind.Uint:
          truth = cmpInt(num(a), num(b)) === 0;
          break;
        case Kind.Float:
          truth = num(a) === num(b);
          break;
        default:
          // slices, maps and the missing value: only "missing equals missing" can be decided
          if (a === undefined || b === undefined) truth = a === b;
          else throw nonComparable(a, b);
      }
    }
    if (truth) return true;
  }
  return false;
}

export function ne(a: unknown, b: unknown): boolean {
  return !eq(a, b);
}

export function lt(arg1: unknown, arg2: unknown): boolean {
  const a = deref(arg1);
  const b = deref(arg2);
  const k1 = basicKind(a);
  if (k1 === 'other') throw new FuncError(BAD_TYPE);
  const k2 = basicKind(b);
  if (k2 === 'other') throw new FuncError(BAD_TYPE);
  if (k1 !== k2) {
    if (k1 === Kind.Int && k2 === Kind.Uint) return cmpInt(num(a), 0) < 0 || cmpInt(num(a), num(b)) < 0;
    if (k1 === Kind.Uint && k2 === Kind.Int) return cmpInt(num(b), 0) >= 0 && cmpInt(num(a), num(b)) < 0;
    throw new FuncError(INCOMPATIBLE);
  }
  switch (k1) {
    case Kind.Bool:
      throw new FuncError(BAD_TYPE);
    case Kind.String:
      return compareStrings(a as string, b as string) < 0;
    case Kind.Int:
    case Kind.Uint:
      return cmpInt(num(a), num(b)) < 0;
    case Kind.Float:
      return num(a) < num(b);
  }
}

export function le(a: unknown, b: unknown): boolean {
  return lt(a, b) || eq(a, b);
}

export function gt(a: unknown, b: unknown): boolean {
  return !le(a, b);
}

export function ge(a: unknown, b: unknown): boolean {
  return !lt(a, b);
}
