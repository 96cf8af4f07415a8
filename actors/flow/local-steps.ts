/**
 * What the steps that need no hive render (README, Flows: choice, wait, fail, the run's answer): pure
 * functions of the definition and a run's scope, used by the run state machine (flow-core.ts).
 * A template that fails throws the template engine's error: the run fails at that step.
 */
import { Code } from '../../protocol/codes.js';
import { parseDuration } from '../../config/values.js';
import { BadInputError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import { failure, success } from '../../protocol/message.js';
import type { ChoiceStep, FailStep, FlowDefinition, WaitStep } from './definition.js';
import type { FlowScope } from './flow-text.js';
import { holds } from './flow-text.js';
import { fallThrough } from './graph.js';
import type { Run } from './run.js';
import { renderMap } from './step-send.js';

/** The step a choice leads to: the first branch whose condition holds, else its default, else on in the list. */
export function choose(def: FlowDefinition, step: ChoiceStep, scope: FlowScope): string | undefined {
  const branch = step.branches.find((b) => holds(b.when.render(scope)));
  return branch?.next ?? step.otherwise ?? fallThrough(def, step);
}

/** A wait step's due time (epoch ms) from now: its duration, a rendered duration, or a rendered time. */
export function dueOf(step: WaitStep, scope: FlowScope, now = Date.now()): number {
  if (step.forMs !== undefined) return now + step.forMs;
  if (step.forText) {
    const text = step.forText.render(scope);
    try {
      return now + parseDuration(text);
    } catch {
      throw new BadInputError(`wait.for rendered '${text}', which is not a duration such as 5s, 10m or 2h`);
    }
  }
  const text = step.until!.render(scope).trim();
  const at = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text);
  if (!Number.isFinite(at))
    throw new BadInputError(`wait.until rendered '${text}', which is neither an RFC 3339 time nor epoch seconds`);
  return at;
}

/** A fail step's Result: its rendered Code (500 unless three digits) and Message. */
export function failResult(step: FailStep, scope: FlowScope): Result {
  const text = step.code.render(scope).trim();
  const code = /^\d{3}$/.test(text) ? Number(text) : Code.ServiceError;
  return failure(code, step.message.render(scope));
}

/** The answer of a run that succeeded: the flow's result template, else the last kept Result. */
export function successAnswer(def: FlowDefinition, run: Run, scope: FlowScope): Result {
  if (def.result) return success(renderMap(def.result, scope));
  const last = run.last === undefined ? undefined : run.steps[run.last];
  return last ?? success();
}
