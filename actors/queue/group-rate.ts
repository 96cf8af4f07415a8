/**
 * GroupRate (group limits): at most `count` deliveries of one group started per `windowMs`,
 * kept as a token bucket per group that holds up to `count` tokens and refills continuously at
 * `count` per window. A group idle for a window may therefore start `count` deliveries at once (the
 * burst), and no window of that length ever sees more than `count` + the refill within it.
 */
import { parseDuration } from '../../config/values.js';

export interface GroupRate {
  count: number;
  windowMs: number;
}

/** The forms GroupRate accepts, for the message of a value it refuses. */
export const GROUP_RATE_FORM = "<count>/<window>, such as 10/s, 600/1m, 5/10s or 1000/h ('' for no limit)";

/** One-letter windows (`10/s`), and durations with their unit (`600/1m`, `5/10s`, `100/500ms`). */
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The rate a GroupRate text gives, or undefined for '' (no limit). Throws an Error with the reason
 * for anything else: a count that is not a whole number above 0, a window without a unit (`10/5`
 * would leave seconds or milliseconds to guessing), or a window of 0.
 */
/** Longest GroupRate window: 24 days, within what one timer waits. */
const MAX_WINDOW_MS = 24 * 86_400_000;

export function parseGroupRate(text: string): GroupRate | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const m = /^(\d+)\s*\/\s*(\S+)$/.exec(t);
  if (!m) throw new Error(`'${text}' is not a rate`);
  const count = Number(m[1]);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new Error(`'${text}' starts no delivery per window; the count must be 1 or more`);
  const window = m[2]!;
  if (/^\d+(\.\d+)?$/.test(window)) throw new Error(`'${text}' gives its window without a unit`);
  let windowMs: number;
  try {
    windowMs = UNIT_MS[window] ?? parseDuration(window);
  } catch {
    throw new Error(`'${text}' has no readable window '${window}'`);
  }
  if (windowMs < 1) throw new Error(`'${text}' has an empty window`);
  // a token's wait is a timer: beyond setTimeout's reach (about 24.8 days) Node fires it at once, a busy loop
  if (windowMs > MAX_WINDOW_MS) throw new Error(`'${text}' has a window longer than 24d`);
  return { count, windowMs };
}

/** The tokens of one group; time is passed in, so the bucket is tested without waiting. */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly rate: GroupRate,
    now: number,
  ) {
    this.tokens = rate.count;
    this.at = now;
  }

  private refill(now: number): void {
    if (now <= this.at) return;
    this.tokens = Math.min(this.rate.count, this.tokens + ((now - this.at) * this.rate.count) / this.rate.windowMs);
    this.at = now;
  }

  /** Whether a delivery may start now. */
  has(now: number): boolean {
    this.refill(now);
    return this.tokens >= 1;
  }

  /** Takes a token if one is there (a `step` takes one too, but never waits for one). */
  take(now: number): void {
    this.refill(now);
    if (this.tokens >= 1) this.tokens -= 1;
  }

  /** When the next token is there (now, if one is). */
  nextAt(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? now : this.at + Math.ceil(((1 - this.tokens) * this.rate.windowMs) / this.rate.count);
  }

  /** When the bucket is full again: from then on it is the same as a new one. */
  fullAt(now: number): number {
    this.refill(now);
    return this.at + Math.ceil(((this.rate.count - this.tokens) * this.rate.windowMs) / this.rate.count);
  }
}
