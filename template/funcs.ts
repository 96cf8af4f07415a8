/**
 * Function descriptions. Go functions have typed parameters and the executor converts and checks
 * arguments by those types (with Go's messages); a JS function has none, so a FuncSpec states them.
 */

/** How an argument is prepared before the call. */
export const Param = {
  /** interface{}: a missing value arrives as null (Go nil). */
  Any: 'any',
  /** reflect.Value (builtins only): a missing value arrives as undefined. */
  Value: 'value',
  /** string: only strings are accepted. */
  String: 'string',
  /** int: only integers are accepted. */
  Int: 'int',
  /** bool: only booleans are accepted. */
  Bool: 'bool',
} as const;
export type Param = (typeof Param)[keyof typeof Param];

/** A template function: the JS implementation and its Go-like signature. */
export interface FuncSpec {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- arguments are checked by `params`
  fn: (...args: any[]) => unknown;
  /** Types of the fixed parameters. */
  params: readonly Param[];
  /** Type of further arguments, when the function is variadic. */
  variadic?: Param;
  /**
   * When true, the function receives the render's RenderBudget before its arguments, to charge
   * what it keeps (RenderBudget.charge) or check a large string before building it (ensure).
   */
  budget?: boolean;
}

/** What users may register: a FuncSpec, or a plain function (fn.length fixed args, then any number). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- user functions take arbitrary values
export type TemplateFunc = FuncSpec | ((...args: any[]) => unknown);

export type FuncMap = Record<string, TemplateFunc>;

/** Thrown by a function to fail the call with "error calling NAME: message". */
export class FuncError extends Error {}

function isFuncSpec(f: TemplateFunc): f is FuncSpec {
  return typeof f === 'object' && f !== null && typeof f.fn === 'function';
}

/** A plain function as a spec: its declared parameters are fixed, extra arguments allowed. */
export function toSpec(f: TemplateFunc): FuncSpec {
  if (isFuncSpec(f)) return f;
  return { fn: f, params: new Array<Param>(f.length).fill(Param.Any), variadic: Param.Any };
}
