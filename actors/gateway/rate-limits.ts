/**
 * Rate limits per route (`RateLimits`, README, Rate limits): token buckets, one per entry and per
 * route, user or client address (`by`), holding `burst` tokens (default N) refilled at N per second
 * or per minute. A request takes one token; with none left it is answered 429 with Retry-After (the
 * seconds until a token is back). Every answer of a limited route carries the IETF RateLimit-Policy
 * and RateLimit headers (draft-ietf-httpapi-ratelimit-headers: quota and window, remaining and the
 * seconds until the bucket is full again). Buckets live in this node; on a NATS hive the gateways of
 * one NAME tell each other what they took (rate-sync.ts), and each charges its buckets with what the
 * others took, so the limit holds for the whole hive within a bounded error (README, Rate limits).
 */
import type { PatternEntry, PatternTable } from './route-patterns.js';
import { parsePatternTable } from './route-patterns.js';

type RateBy = 'route' | 'user' | 'ip';

export interface RateRule {
  /** Tokens added per window. */
  readonly limit: number;
  readonly windowS: 1 | 60;
  readonly burst: number;
  readonly by: RateBy;
}

const FORM = 'pattern=N/s|N/m[,burst=M][,by=user|ip|route]';
/** Buckets kept at most: beyond, full ones (which hold nothing worth keeping) are dropped first, then the oldest. */
const MAX_BUCKETS = 100_000;

function parseRule(raw: string): RateRule {
  const [rate, ...options] = raw.split(',').map((p) => p.trim());
  const m = /^(\d{1,9})\s*\/\s*(s|m)$/i.exec(rate ?? '');
  if (!m || Number(m[1]) < 1)
    throw new Error(`'${(rate ?? '').slice(0, 40)}' is not a rate (N/s or N/m, N at least 1)`);
  const limit = Number(m[1]);
  let burst = limit;
  let by: RateBy = 'route';
  for (const option of options) {
    const o = /^(burst|by)\s*=\s*(\S+)$/i.exec(option);
    if (!o) throw new Error(`'${option.slice(0, 40)}' is not an option (burst=M or by=user|ip|route)`);
    if (o[1]!.toLowerCase() === 'burst') {
      if (!/^\d{1,9}$/.test(o[2]!) || Number(o[2]) < 1)
        throw new Error(`burst '${o[2]!.slice(0, 20)}' is not a whole number of at least 1`);
      burst = Number(o[2]);
    } else {
      const v = o[2]!.toLowerCase();
      if (v !== 'route' && v !== 'user' && v !== 'ip')
        throw new Error(`by '${o[2]!.slice(0, 20)}' is not user, ip or route`);
      by = v;
    }
  }
  return { limit, windowS: m[2]!.toLowerCase() === 's' ? 1 : 60, burst, by };
}

/** Parses RateLimits; throws an Error naming the bad entry. */
export function parseRateLimits(text: string): PatternTable<RateRule> {
  return parsePatternTable(text, FORM, parseRule);
}

export interface RateVerdict {
  allowed: boolean;
  /** Headers for the answer: RateLimit-Policy and RateLimit, and Retry-After when refused. */
  headers: Record<string, string>;
}

interface Bucket {
  tokens: number;
  at: number;
  readonly rule: RateRule;
}

/** Tokens a bucket may owe at most (what other gateways took before this one heard of it), in bursts. */
const MAX_DEBT_BURSTS = 4;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** With `counting`: tokens taken here per bucket key since the start, and when last (what rate-sync.ts tells the other gateways). */
  readonly taken = new Map<string, { n: number; at: number }>();
  private readonly rules = new Map<string, RateRule>();

  constructor(
    private readonly table: PatternTable<RateRule>,
    /** Count the tokens taken per bucket (the limit is shared through the hive). */
    private readonly counting = false,
  ) {
    for (const e of table.entries) this.rules.set(e.pattern, e.value);
  }

  /** Takes a token for a request to route cls/operation from `user` at `ip`; undefined when no entry limits the route. */
  take(
    cls: string,
    operation: string,
    user: string | undefined,
    ip: string,
    now = Date.now(),
  ): RateVerdict | undefined {
    const entry = this.table.match(cls, operation);
    if (!entry) return undefined;
    const rule = entry.value;
    const key = `${entry.pattern}\n${rule.by === 'route' ? `${cls.toLowerCase()}/${operation.toLowerCase()}` : rule.by === 'user' ? `u:${user ?? ''}` : `i:${ip}`}`;
    const perMs = rule.limit / (rule.windowS * 1000);
    const bucket = this.refilled(key, rule, now);
    const allowed = bucket.tokens >= 1;
    if (allowed) {
      bucket.tokens -= 1;
      if (this.counting) {
        const t = this.taken.get(key);
        if (t) {
          t.n++;
          t.at = now;
        } else this.taken.set(key, { n: 1, at: now });
      }
    }
    return { allowed, headers: this.headers(entry, bucket.tokens, perMs, allowed) };
  }

  /**
   * Charges a bucket with `n` tokens another gateway of the hive took (rate-sync.ts). The bucket may
   * go below zero — the tokens were spent twice, here and there — and admits again once refilled past
   * one, so what the hive admits over time stays the limit; the debt is bounded so a burst of news
   * about an old past does not lock a route for long.
   */
  charge(key: string, n: number, now = Date.now()): void {
    const rule = this.rules.get(key.slice(0, key.indexOf('\n')));
    if (!rule) return;
    const bucket = this.refilled(key, rule, now);
    bucket.tokens = Math.max(-MAX_DEBT_BURSTS * rule.burst, bucket.tokens - n);
  }

  private refilled(key: string, rule: RateRule, now: number): Bucket {
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= MAX_BUCKETS) this.evict(now);
      b = { tokens: rule.burst, at: now, rule };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(rule.burst, b.tokens + Math.max(0, now - b.at) * (rule.limit / (rule.windowS * 1000)));
    b.at = now;
    return b;
  }

  /** Makes room: buckets untouched for an hour (refilled whatever their rate), else the oldest tenth. */
  private evict(now: number): void {
    for (const [k, b] of this.buckets) if (now - b.at > 3_600_000) this.buckets.delete(k);
    if (this.buckets.size < MAX_BUCKETS) return;
    let n = Math.ceil(MAX_BUCKETS / 10);
    for (const k of this.buckets.keys()) {
      if (n-- <= 0) break;
      this.buckets.delete(k);
    }
  }

  private headers(
    entry: PatternEntry<RateRule>,
    tokens: number,
    perMs: number,
    allowed: boolean,
  ): Record<string, string> {
    const { limit, windowS, burst } = entry.value;
    const name = entry.pattern.replace(/["\\]/g, '');
    const full = Math.ceil((burst - tokens) / perMs / 1000);
    const headers: Record<string, string> = {
      'ratelimit-policy': `"${name}";q=${limit};w=${windowS}${burst === limit ? '' : `;burst=${burst}`}`,
      ratelimit: `"${name}";r=${Math.max(0, Math.floor(tokens))};t=${full}`,
    };
    if (!allowed) headers['retry-after'] = String(Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)));
    return headers;
  }
}
