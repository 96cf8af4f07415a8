/**
 * The budget of one render: everything an execution builds — its text output, and every string and
 * item the dialect functions keep (exec arguments, queue values and entries, the exec scratch map) —
 * is charged to one pair of counters, so no combination of functions can grow a render past it.
 * Functions that build one large temporary string (printf padding, replace, marshal) check the room
 * left before they build it. A charge is an add and a compare, cheap enough for every write.
 */
import { BudgetExceeded, BudgetLimit } from './errors.js';

/** How error messages name the two limits: the API's option names, or a service's parameters. */
export interface LimitNames {
  chars: string;
  items: string;
}

export const DEFAULT_LIMIT_NAMES: LimitNames = { chars: 'maxChars', items: 'maxItems' };

export class RenderBudget {
  /** Characters charged so far. */
  chars = 0;
  /** Items charged so far. */
  items = 0;

  constructor(
    readonly maxChars: number,
    readonly maxItems: number,
    readonly names: LimitNames = DEFAULT_LIMIT_NAMES,
  ) {}

  /** Characters that can still be built. */
  get room(): number {
    return this.maxChars - this.chars;
  }

  /** Charges what a function keeps; beyond a limit the render fails. A negative count gives back. */
  charge(chars: number, items: number): void {
    this.chars += chars;
    this.items += items;
    if (this.chars > this.maxChars) this.tooManyChars();
    if (this.items > this.maxItems) this.tooManyItems();
  }

  /** Fails unless a string of `length` characters still fits; charges nothing (checked before building a temporary string). */
  ensure(length: number): void {
    if (length > this.maxChars - this.chars) this.tooManyChars();
  }

  tooManyChars(): never {
    throw new BudgetExceeded(
      `the render builds more than ${this.maxChars} characters (the limit ${this.names.chars})`,
      BudgetLimit.Chars,
      this.maxChars,
    );
  }

  tooManyItems(): never {
    throw new BudgetExceeded(
      `the render adds more than ${this.maxItems} arguments, values and entries (the limit ${this.names.items})`,
      BudgetLimit.Items,
      this.maxItems,
    );
  }
}

/** The budget options a dialect passes through to its Template. */
export interface BudgetOptions {
  /** Characters one render may build in all (default 16 MiB). */
  maxChars?: number;
  /** @deprecated The older name of maxChars. */
  maxOutput?: number;
  /** Arguments, values, keys and entries one render may add in all (default 1 million). */
  maxItems?: number;
  /** How budget errors name the limits (a service passes its parameter names). */
  limitNames?: LimitNames;
}

/** The options of `opts` that are set, to spread into TemplateOptions. */
export function budgetOptions(opts: BudgetOptions): BudgetOptions {
  const out: BudgetOptions = {};
  const maxChars = opts.maxChars ?? opts.maxOutput;
  if (maxChars !== undefined) out.maxChars = maxChars;
  if (opts.maxItems !== undefined) out.maxItems = opts.maxItems;
  if (opts.limitNames !== undefined) out.limitNames = opts.limitNames;
  return out;
}
/** The total length of `strings`, what keeping them costs the budget. */
export function charsOf(strings: readonly string[]): number {
  let n = 0;
  for (const x of strings) n += x.length;
  return n;
}
