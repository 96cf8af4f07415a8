/**
 * hivenode/template: a Go text/template engine. Users' queue and exec templates are written in Go
 * syntax, so parsing, evaluation, functions and value formatting follow Go's documented semantics.
 */
export {
  Template,
  DEFAULT_MAX_CHARS,
  DEFAULT_MAX_ITEMS,
  DEFAULT_MAX_OUTPUT,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_ITERATIONS,
} from './template.js';
export type { TemplateOptions } from './template.js';
export { TemplateError, TemplatePhase, RenderBudgetError, BudgetLimit } from './errors.js';
export { RenderBudget } from './budget.js';
export type { BudgetOptions, LimitNames } from './budget.js';
export { MissingKey } from './state.js';
export { Param, FuncError } from './funcs.js';
export type { FuncSpec, FuncMap, TemplateFunc } from './funcs.js';
export { TypedNumber, NumberType } from './values.js';
export { sprintf, sprint, sprintln } from './fmt/printf.js';
export { valueString } from './exec.js';
export { htmlEscape, jsEscape, urlQueryEscape } from './escape.js';
export { renderQueueTemplate, QueueTemplate, QUEUE_DELIMS, DEFAULT_MAX_ENTRIES } from './dialects/queue.js';
export type { QueueRenderOptions, QueueRenderResult } from './dialects/queue.js';
export { renderExecTemplate, ExecTemplate, EXEC_DELIMS, DEFAULT_MAX_ARGS } from './dialects/exec.js';
export type { ExecRenderOptions, ExecRenderResult, EnvSource } from './dialects/exec.js';
export { renderTemplateFile, Dialect } from './render-command.js';
export type { RenderFileOptions } from './render-command.js';
