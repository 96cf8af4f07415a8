/**
 * Bounds of the queue's numeric controls and parameters, checked where a request or a configuration
 * comes in (docs/ARCHITECTURE.md, The life of one queue entry): a value the queue cannot turn into a
 * time is refused with 400 naming the control, so no entry ever holds a due time that Date cannot
 * represent or the store cannot write. Also the selectors (`key`, `groupby`, `state`) read strictly:
 * given but empty is a 400, never "match everything".
 */
import { BadInputError } from '../../protocol/errors.js';
import type { ValueMap } from '../../protocol/message.js';

/** Longest wait between retries (requeue_timer, DefaultRequeueTime): a year and a day, as far as `delay` reaches. */
export const MAX_REQUEUE_SECONDS = 366 * 24 * 3600;
/** Most retries of one entry (requeue_count, DefaultRequeueCount). */
export const MAX_REQUEUE_COUNT = 1_000_000;
/** Longest wait before one retry however the backoff grows (exponential): the same year and a day. */
export const MAX_RETRY_WAIT_MS = MAX_REQUEUE_SECONDS * 1000;

/** A whole number control in [min, max]; 400 naming the control and the range otherwise. */
export function wholeInRange(text: string, name: string, min: number, max: number, unit: string): number {
  const t = text.trim();
  const n = /^\d{1,16}$/.test(t) ? Number(t) : NaN;
  if (!(n >= min && n <= max))
    throw new BadInputError(`control ${name} must be a whole number of ${unit} from ${min} to ${max}, got '${text}'`);
  return n;
}

/**
 * A selector control: undefined when absent, its value when given; a selector given with an empty
 * value is refused (400), since reading it as absent would widen a command to every entry.
 */
export function selector(controls: ValueMap, name: string, what: string): string | undefined {
  if (!Object.hasOwn(controls, name)) return undefined;
  const v = controls[name]?.[0] ?? '';
  if (v.trim() === '') throw new BadInputError(`control ${name} is empty; give ${what}, or leave the control out`);
  return v;
}

/** Longest duration parameter that only dates are computed from (DedupWindow, retentions, PageHorizon): 100 years. */
const MAX_SPAN_MS = 36_500 * 86_400_000;
/** Longest duration parameter a timer waits for (CallTimeout, AckWait): what setTimeout honours, about 24.8 days. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The queue's duration parameters beyond what it can compute with: one line per parameter naming it,
 * or undefined when all fit. A timer longer than setTimeout's limit would fire at once; a span beyond
 * 100 years makes times before any date the store holds.
 */
export function durationParamProblem(
  config: Readonly<
    Record<
      'DedupWindow' | 'DeadRetention' | 'DoneRetention' | 'PageHorizon' | 'AckWait' | 'CallTimeout' | 'BatchWindow',
      number
    >
  >,
): string | undefined {
  const bounds = [
    ['DedupWindow', MAX_SPAN_MS, '36500d'],
    ['DeadRetention', MAX_SPAN_MS, '36500d'],
    ['DoneRetention', MAX_SPAN_MS, '36500d'],
    ['PageHorizon', MAX_SPAN_MS, '36500d'],
    ['AckWait', MAX_TIMER_MS, '24d'],
    ['CallTimeout', MAX_TIMER_MS, '24d'],
    ['BatchWindow', MAX_TIMER_MS, '24d'],
  ] as const;
  for (const [name, max, shown] of bounds)
    if (config[name] > max) return `${name} is ${config[name]} ms; it may be at most ${shown}`;
  return undefined;
}
