/**
 * TemplateError: every failure of parsing or executing a template. Messages follow Go's wording
 * ("template: NAME:LINE: ..." for parse errors, "template: NAME:LINE:COL: executing ..." for
 * execution errors) so templates written for the Go services report the same diagnostics.
 */
import { HiveError } from '../protocol/errors.js';
import { Code } from '../protocol/codes.js';

/** Which phase failed. */
export const TemplatePhase = {
  Parse: 'parse',
  Exec: 'exec',
} as const;
export type TemplatePhase = (typeof TemplatePhase)[keyof typeof TemplatePhase];

/** A template failure; a bad template is bad input (Code 400). */
export class TemplateError extends HiveError {
  override readonly name: string = 'TemplateError';
  override readonly code: number = Code.BadRequest;
  /** Output written before the failure (Go keeps partial output too). */
  output: string;
  /** Parse or execution. */
  readonly phase: TemplatePhase;
  constructor(message: string, phase: TemplatePhase, output = '', cause?: unknown) {
    super(message, cause === undefined ? {} : { cause });
    this.phase = phase;
    this.output = output;
  }
}

/** Which limit of a render's budget was exceeded. */
export const BudgetLimit = {
  /** Characters (UTF-16 code units) built in all. */
  Chars: 'chars',
  /** Arguments, values, keys and entries added in all. */
  Items: 'items',
} as const;
export type BudgetLimit = (typeof BudgetLimit)[keyof typeof BudgetLimit];

/**
 * A render that would build more than its budget allows (Code 413): too many characters in its
 * output and in what its functions keep, or too many arguments, values and entries.
 */
export class RenderBudgetError extends TemplateError {
  override readonly name = 'RenderBudgetError';
  override readonly code: number = Code.TooLarge;
  constructor(
    message: string,
    output: string,
    readonly limit: BudgetLimit,
    /** The limit's value. */
    readonly max: number,
  ) {
    super(message, TemplatePhase.Exec, output);
  }
}

/**
 * Thrown inside the evaluator with the Go message body only; the executor adds the
 * "template: NAME:LINE:COL: executing ..." prefix from the node being evaluated.
 */
export class ExecFailure extends Error {
  /** When true the message is already complete (no location prefix is added). */
  constructor(
    message: string,
    readonly bare = false,
  ) {
    super(message);
  }
}

/** A parse failure carrying the Go message body and the line it belongs to. */
export class ParseFailure extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/** Thrown inside the executor when the render's budget is spent; Template reports it as a RenderBudgetError. */
export class BudgetExceeded extends ExecFailure {
  constructor(
    message: string,
    readonly limit: BudgetLimit,
    readonly max: number,
  ) {
    super(message);
  }
}
