/**
 * What the exec and queue dialects share: a template parsed once with the dialect's functions, which
 * read the state of the render under way (a render's context), and the cache key of its options.
 */
import { budgetOptions } from '../budget.js';
import type { BudgetOptions } from '../budget.js';
import { FuncError } from '../funcs.js';
import type { FuncMap } from '../funcs.js';
import type { MissingKey } from '../state.js';
import { Template } from '../template.js';

/** Options every dialect takes; the budget options bound what one render builds (see BudgetOptions). */
export interface DialectOptions extends BudgetOptions {
  /** Delimiters; each dialect has its default. */
  delims?: [string, string];
  /** Template name used in error messages; default the dialect's name. */
  name?: string;
  missingkey?: MissingKey;
}

/** A dialect's parsed template: `run` renders with a fresh context its functions read. */
export abstract class DialectTemplate<Context> {
  private context: Context | undefined;
  protected readonly template: Template;

  constructor(
    dialect: string,
    defaultDelims: [string, string],
    funcs: (current: () => Context) => FuncMap,
    source: string,
    opts: DialectOptions,
  ) {
    const current = (): Context => {
      if (this.context === undefined) throw new FuncError(`${dialect} functions are only available while rendering`);
      return this.context;
    };
    this.template = new Template(opts.name ?? dialect, {
      delims: opts.delims ?? defaultDelims,
      funcs: funcs(current),
      ...budgetOptions(opts),
      ...(opts.missingkey !== undefined ? { missingkey: opts.missingkey } : {}),
    }).parse(source);
  }

  /** Runs `render` with `context` as the current one (a template may render inside another's render). */
  protected run<R>(context: Context, render: () => R): R {
    const outer = this.context;
    this.context = context;
    try {
      return render();
    } finally {
      this.context = outer;
    }
  }
}

/** Cache key of a compiled template: the options that change compilation, then the source. */
export function dialectCacheKey(source: string, opts: DialectOptions, limit: number | undefined): string {
  const { delims, name, missingkey } = opts;
  const budget = budgetOptions(opts);
  if (
    delims === undefined &&
    name === undefined &&
    limit === undefined &&
    missingkey === undefined &&
    Object.keys(budget).length === 0
  )
    return '\u0000' + source;
  return JSON.stringify([delims, name, limit, missingkey, budget]) + source;
}
