/**
 * The queue's `Breaker` expressions (README, The queue, Circuit breakers): when a channel's breaker
 * opens, read once at start. `errors>50%/30s,min=20` opens it when more than half of the deliveries
 * to the channel in the last 30 s failed, once at least 20 were made; `latency.p99>2s/30s` when the
 * 99th percentile of their durations passed 2 s — that is, when more than 1% of them took longer
 * than 2 s, which is what a percentile above a bound means and needs only a count per window, not
 * the durations themselves. Several expressions are separated by `;`: any one opens the breaker.
 */
import { parseDuration } from '../../config/values.js';

/** One expression: deliveries in the last `windowMs` of which more than `fraction` were `hits`. */
export interface BreakerRule {
  /** The expression as written (log lines and the journal name it). */
  readonly text: string;
  readonly metric: 'errors' | 'latency';
  /** latency: a delivery taking longer than this counts as a hit. */
  readonly slowerThanMs: number;
  /** The share of hits above which the rule trips: 0.5 for `errors>50%`, 0.01 for `latency.p99>…`. */
  readonly fraction: number;
  readonly windowMs: number;
  /** Deliveries the window must hold before the rule can trip. */
  readonly min: number;
}

/** Deliveries a window needs before an expression without `min=` can trip. */
const DEFAULT_BREAKER_MIN = 10;

/** The longest window: one counted in tenths stays well within a day of memory-free counters. */
const MAX_WINDOW_MS = 86_400_000;

/** What an expression looks like, for the message of one that cannot be read. */
export const BREAKER_FORM =
  "expressions separated by ';', each errors>N%/<window>[,min=N] or latency.pNN>duration/<window>[,min=N], such as errors>50%/30s,min=20;latency.p99>2s/30s";

function duration(text: string, what: string, clause: string): number {
  // a bare number would leave seconds or milliseconds to guessing
  if (/^\d+(\.\d+)?$/.test(text.trim())) throw new Error(`'${clause}' gives its ${what} '${text}' without a unit`);
  try {
    return parseDuration(text);
  } catch {
    throw new Error(`'${clause}' has no readable ${what} '${text}'`);
  }
}

function parseRule(clause: string): BreakerRule {
  const m = /^(errors|latency\.p(\d{2,3}))\s*>\s*([^/\s]+)\s*\/\s*([^,\s]+)\s*(?:,\s*min\s*=\s*(\d{1,9})\s*)?$/i.exec(
    clause,
  );
  if (!m) throw new Error(`'${clause}' is not an expression`);
  const windowMs = duration(m[4]!, 'window', clause);
  if (windowMs < 100) throw new Error(`'${clause}' has a window shorter than 100ms`);
  if (windowMs > MAX_WINDOW_MS) throw new Error(`'${clause}' has a window longer than 24h`);
  const min = m[5] === undefined ? DEFAULT_BREAKER_MIN : Number(m[5]);
  if (min < 1) throw new Error(`'${clause}' has min=0; a window needs at least one delivery`);
  if (m[1]!.toLowerCase() === 'errors') {
    const pct = /^(\d{1,2}(?:\.\d+)?)%$/.exec(m[3]!);
    if (!pct) throw new Error(`'${clause}' gives errors as '${m[3]}'; expected a share from 0% to 99%, such as 50%`);
    return { text: clause, metric: 'errors', slowerThanMs: 0, fraction: Number(pct[1]) / 100, windowMs, min };
  }
  // 1 - 0.99 in floating point is a hair above 0.01: rounded, exactly 1 slow in 100 stays within p99
  const fraction = Math.round((1 - Number(`0.${m[2]}`)) * 1e9) / 1e9;
  return {
    text: clause,
    metric: 'latency',
    slowerThanMs: duration(m[3]!, 'latency bound', clause),
    fraction,
    windowMs,
    min,
  };
}

/** The rules of a Breaker text ('' has none); throws an Error naming the expression it cannot read. */
export function parseBreaker(text: string): BreakerRule[] {
  const rules: BreakerRule[] = [];
  for (const raw of text.split(';')) {
    const clause = raw.trim();
    if (clause !== '') rules.push(parseRule(clause));
  }
  return rules;
}
