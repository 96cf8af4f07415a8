/**
 * SourceRate (README, Syslog: reliable delivery): per-source limits, `cidr=N/s;cidr=N/s;…`. Each
 * source address takes the first rule whose CIDR holds it and may send N messages per second (a token
 * bucket holding one second's worth, so a burst of N passes); an address no rule holds is not limited.
 * The limit is per address, not per rule: `0.0.0.0/0=100/s` gives every IPv4 host its own 100/s, so
 * one noisy host cannot starve the others. Over UDP and TCP a message over the limit is dropped and
 * counted per source; over RELP and TCPAck, which promise no drops, it waits for its token instead
 * (the sender slows down). At most MAX_BUCKETS addresses hold a bucket; past that the least recently
 * seen is forgotten (it starts again with a full bucket), so spoofed UDP sources cannot grow memory.
 */
import { ConfigError } from '../../protocol/errors.js';
import { AllowList, sourceAddress } from './allow-from.js';

const MAX_BUCKETS = 4096;
const RULE = /^\s*([^=\s]+)\s*=\s*(\d+(?:\.\d+)?)\s*\/\s*s\s*$/;

interface Rule {
  cidr: string;
  match: AllowList;
  perSecond: number;
}

interface Bucket {
  tokens: number;
  at: number;
  perSecond: number;
}

export class SourceRate {
  private readonly buckets = new Map<string, Bucket>();

  private constructor(readonly rules: readonly Rule[]) {}

  /** The limits of a SourceRate value, or undefined for '' (no limits); a bad rule is a ConfigError naming it. */
  static parse(text: string): SourceRate | undefined {
    const parts = text
      .split(';')
      .map((p) => p.trim())
      .filter((p) => p !== '');
    if (parts.length === 0) return undefined;
    const rules = parts.map((part): Rule => {
      const m = RULE.exec(part);
      if (!m) throw new ConfigError(`SourceRate rule '${part}' is not 'cidr=N/s' (for example '10.0.0.0/8=500/s')`);
      const perSecond = Number(m[2]);
      if (!(perSecond > 0))
        throw new ConfigError(
          `SourceRate rule '${part}': the rate must be above 0 per second (leave the source out of AllowFrom to refuse it)`,
        );
      let match: AllowList;
      try {
        match = AllowList.parse(m[1]!)!;
      } catch (e) {
        throw new ConfigError(
          `SourceRate rule '${part}': ${(e as Error).message.replace(/^AllowFrom entry/, 'the CIDR')}`,
        );
      }
      return { cidr: m[1]!, match, perSecond };
    });
    return new SourceRate(rules);
  }

  /** A message from `address` now: true when it is within its limit (its token taken). */
  take(address: string, now = Date.now()): boolean {
    return this.wait(address, now) === 0;
  }

  /**
   * Milliseconds a message from `address` must wait for its token (0: none, taken now). A positive
   * wait reserves the token, so waiting messages of one source go out at its rate, in order.
   */
  reserve(address: string, now = Date.now()): number {
    const b = this.bucket(address, now);
    if (!b) return 0;
    b.tokens -= 1;
    return b.tokens >= 0 ? 0 : Math.ceil((-b.tokens / b.perSecond) * 1000);
  }

  private wait(address: string, now: number): number {
    const b = this.bucket(address, now);
    if (!b) return 0;
    if (b.tokens < 1) return Math.ceil(((1 - b.tokens) / b.perSecond) * 1000);
    b.tokens -= 1;
    return 0;
  }

  /** The address's bucket refilled to now, or undefined when no rule limits it. */
  private bucket(address: string, now: number): Bucket | undefined {
    const a = sourceAddress(address);
    let b = this.buckets.get(a);
    if (b) {
      // most recently seen last: the first key is the one to forget
      this.buckets.delete(a);
      this.buckets.set(a, b);
      b.tokens = Math.min(b.perSecond, b.tokens + ((now - b.at) / 1000) * b.perSecond);
      b.at = now;
      return b;
    }
    const rule = this.rules.find((r) => r.match.allows(a));
    if (!rule) return undefined;
    if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
    b = { tokens: rule.perSecond, at: now, perSecond: rule.perSecond };
    this.buckets.set(a, b);
    return b;
  }
}
