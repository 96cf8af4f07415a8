/**
 * How long a failed entry waits before its next attempt (README, The queue, Retry schedules):
 * `requeue_timer` (fixed, or doubling with RequeueBackoff exponential), or a `requeue_schedule` —
 * a list of durations, `5s,5m,30m,2h,5h,10h,10h` (Svix's), where the attempt that failed picks the
 * wait and an entry that fails past the end of the list is dead. Either way a target that said when
 * to come back (a 429 or 503 with Retry-After: the HTTP client hands it on as Data `retry_after`,
 * whole seconds) is not tried before that, when it is later than the queue's own wait.
 */
import { ACCEPTED_DURATION, parseDuration } from '../../config/values.js';
import { BadInputError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import { MAX_RETRY_WAIT_MS } from './control-ranges.js';
import type { QueueEntry } from './entry.js';

/** Most waits in one schedule (each is a retry: as many as anyone writes by hand, and a bound on the stored entry). */
const MAX_SCHEDULE_STEPS = 100;

/** The waits of a requeue_schedule text, ms; throws BadInputError naming `what` (the control or parameter) and the bad step. */
export function parseRequeueSchedule(text: string, what: string): number[] {
  const steps = text.split(',').map((s) => s.trim());
  if (steps.length === 1 && steps[0] === '')
    throw new BadInputError(`${what} is empty; give waits separated by commas, such as 5s,5m,30m,2h,5h,10h,10h`);
  if (steps.length > MAX_SCHEDULE_STEPS)
    throw new BadInputError(`${what} has ${steps.length} waits; at most ${MAX_SCHEDULE_STEPS}`);
  return steps.map((step, i) => {
    let ms: number;
    try {
      ms = parseDuration(step);
    } catch {
      throw new BadInputError(`${what}: wait ${i + 1} '${step}' is not ${ACCEPTED_DURATION}`);
    }
    if (ms > MAX_RETRY_WAIT_MS)
      throw new BadInputError(`${what}: wait ${i + 1} '${step}' is longer than a year and a day`);
    return ms;
  });
}

/** What a failed delivery's Result says about when to come back (Data `retry_after`, whole seconds), ms; undefined when it says nothing readable. */
export function retryAfterOf(result: Result): number | undefined {
  const v = result.Data.retry_after?.[0];
  if (v === undefined || !/^\d{1,10}$/.test(v.trim())) return undefined;
  return Number(v.trim()) * 1000;
}

/** The wait before the next attempt of an entry whose attempt `e.attempts` just failed with `result`. */
export function retryWaitMs(e: QueueEntry, result: Result, exponential: boolean): number {
  let wait: number;
  if (e.requeueSchedule !== undefined)
    wait = e.requeueSchedule[Math.min(e.attempts, e.requeueSchedule.length) - 1] ?? 0;
  else if (exponential) wait = e.requeueTimerMs * 2 ** (e.attempts - 1) * (0.8 + Math.random() * 0.4);
  else wait = e.requeueTimerMs;
  const asked = retryAfterOf(result);
  if (asked !== undefined && asked > wait) wait = asked;
  // capped: doubling a long timer over many attempts passes any date (a due time must stay a time)
  return Math.round(Math.min(MAX_RETRY_WAIT_MS, wait));
}

/** DefaultRequeueSchedule read once per text (every entry without its own schedule reads it). */
let defaultText: string | undefined;
let defaultSteps: number[] | undefined;

/** The waits of DefaultRequeueSchedule, or undefined when it is empty; throws naming the parameter. */
export function defaultRequeueSchedule(text: string): number[] | undefined {
  if (text.trim() === '') return undefined;
  if (text !== defaultText) {
    defaultSteps = parseRequeueSchedule(text, 'DefaultRequeueSchedule');
    defaultText = text;
  }
  return defaultSteps;
}
