/**
 * A flow's texts (README, Flows): every channel, data value, control, class, operation, condition
 * and result of a definition is a Go template (the project's engine, `{{ }}`), parsed once when the
 * definition is checked and rendered against a run's scope: `.Input` (the message that started the
 * run) and `.Steps.<name>` (each finished step's kept Result). A text without `{{` is a constant.
 */
import type { BudgetOptions } from '../../template/budget.js';
import { Template } from '../../template/template.js';
import { marshalJSON } from '../../template/dialects/json.js';
import { Param } from '../../template/funcs.js';
import type { FuncMap } from '../../template/funcs.js';
import { describeError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';

/** What a template of a flow sees (dot). */
export interface FlowScope {
  /** The message that started the run. */
  readonly Input: Message;
  /** Each finished step's kept Result, by step name. */
  readonly Steps: Readonly<Record<string, Result>>;
  /** In a step's `result`: the Result the step got, before shaping. */
  readonly Result?: Result;
  /** In a map's sub-step: the element and its index. */
  readonly Item?: unknown;
  readonly Index?: number;
}

/** Functions a flow's templates have beside Go's: `json` writes a value as JSON (a map's items from a List). */
const FLOW_FUNCS: FuncMap = { json: { fn: (v: unknown) => marshalJSON(v), params: [Param.Any] } };

/** A definition's text that cannot be parsed: names where it is. */
class FlowTextError extends Error {
  override readonly name = 'FlowTextError';
}

/** One text of a definition: a constant or a parsed template. */
export class FlowText {
  private readonly template: Template | undefined;

  /** Parses `source`; a parse error throws FlowTextError naming `where` (the step and field). */
  constructor(
    readonly source: string,
    readonly where: string,
    budget: BudgetOptions = {},
  ) {
    if (!source.includes('{{')) return;
    try {
      this.template = new Template(where, { ...budget, funcs: FLOW_FUNCS }).parse(source);
    } catch (e) {
      throw new FlowTextError(`${where}: ${describeError(e)}`);
    }
  }

  /** Whether the text is a template (else `source` is its value). */
  get isTemplate(): boolean {
    return this.template !== undefined;
  }

  /** The text for a run; a failing render throws the engine's TemplateError (Code 400) or RenderBudgetError (413). */
  render(scope: FlowScope): string {
    return this.template === undefined ? this.source : this.template.execute(scope);
  }
}

/** Whether a rendered condition holds: `true` (spaces around it ignored), as README, Flows says. */
export function holds(rendered: string): boolean {
  return rendered.trim() === 'true';
}
