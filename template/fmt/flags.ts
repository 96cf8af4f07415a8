/**
 * The formatting state of one verb (Go fmt's flags, width and precision) and the padding rules
 * shared by every kind of value.
 */
import { runeCount } from '../utf8.js';
import type { RenderBudget } from '../budget.js';

export interface Flags {
  /** '+' flag (for %v it becomes plusV). */
  plus: boolean;
  /** '-' flag: pad on the right. */
  minus: boolean;
  /** '#' flag (for %v it becomes sharpV). */
  sharp: boolean;
  /** ' ' flag. */
  space: boolean;
  /** '0' flag: pad with leading zeros. */
  zero: boolean;
  /** %+v: field names / plus form. */
  plusV: boolean;
  /** %#v: Go-syntax form. */
  sharpV: boolean;
  /** Width given. */
  widPresent: boolean;
  /** Precision given. */
  precPresent: boolean;
  wid: number;
  prec: number;
  /** The render's budget, when formatting for one: padding and growing results are checked against it. */
  budget: RenderBudget | null;
}

export function newFlags(budget: RenderBudget | null = null): Flags {
  return {
    plus: false,
    minus: false,
    sharp: false,
    space: false,
    zero: false,
    plusV: false,
    sharpV: false,
    widPresent: false,
    precPresent: false,
    wid: 0,
    prec: 0,
    budget,
  };
}

/**
 * Fails when a string of `length` characters does not fit in the render's budget: called before
 * padding is built and as a result grows, so a width on every element of a long list cannot build
 * gigabytes first. Without a budget it checks nothing.
 */
export function ensureRoom(f: Flags, length: number): void {
  if (f.budget !== null) f.budget.ensure(length);
}

export function clearFlags(f: Flags): void {
  f.plus = f.minus = f.sharp = f.space = f.zero = f.plusV = f.sharpV = f.widPresent = f.precPresent = false;
  f.wid = f.prec = 0;
}

/** `n` padding characters: zeros when the zero flag is on, spaces otherwise. */
export function padding(f: Flags, n: number): string {
  if (n <= 0) return '';
  ensureRoom(f, n);
  return (f.zero ? '0' : ' ').repeat(n);
}

/** Pads `s` to the width (counted in runes) on the side the flags ask for. */
export function pad(f: Flags, s: string): string {
  if (!f.widPresent || f.wid === 0) return s;
  const n = f.wid - runeCount(s);
  if (n <= 0) return s;
  if (f.minus) {
    ensureRoom(f, n);
    return s + ' '.repeat(n);
  }
  return padding(f, n) + s;
}

/** Pads with spaces only (numbers handle their zero padding themselves). */
export function padSpaces(f: Flags, s: string): string {
  const zero = f.zero;
  f.zero = false;
  const out = pad(f, s);
  f.zero = zero;
  return out;
}
