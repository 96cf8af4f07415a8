/**
 * Rate limits held for the whole hive (README, Rate limits): the gateways of one NAME on a NATS hive
 * tell each other, every SYNC_MS, how many tokens each took per bucket, through one key of the
 * hive's JetStream KV bucket hivenode_ratelimits written by compare-and-set (each gateway's entry:
 * its tokens taken per bucket since it started). Each gateway charges its own buckets with what the
 * others took since it last looked (rate-limits.ts, `charge`): every bucket refills at the limit on
 * every node and is emptied by what the whole hive took, so the hive admits the limit whichever
 * node the requests reach.
 *
 * The approximation: a token refilled is seen by every gateway at once and may be spent on several
 * before they hear of each other, so over any window the hive admits at most the limit plus
 * burst + (G − 1) × limit × D (G gateways, D the time one takes to hear of another's tokens: SYNC_MS
 * plus a KV round trip); the debt is then charged, so over time the rate is the limit
 * (spec/adapters/nats/gateway-rate-limits.spec.ts measures it on two nodes). A gateway not heard
 * from for STALE_MS (stopped, cut off) is dropped from the key; one cut off from the hive counts on
 * its own until it is back.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { describeError } from '../../protocol/errors.js';
import type { SharedBucket } from '../hive/transport.js';
import { sharedNameWord } from '../hive/transport.js';
import type { Logger } from '../observe/logger.js';
import type { RateLimiter } from './rate-limits.js';

export const RATE_BUCKET = 'hivenode_ratelimits';
/** How often a gateway tells and hears (the D of the bound above is this plus a KV round trip). */
const SYNC_MS = 50;
/** A gateway's entry is dropped when it has not written for this long. */
const STALE_MS = 10_000;
/** A bucket key not used for this long leaves a gateway's entry (the others forget it too). */
const IDLE_MS = 60_000;
/** Bucket keys one gateway's entry carries at most (the most recently used): the key stays well within a NATS message. */
const MAX_KEYS = 5_000;
const TRIES = 3;

interface Entry {
  /** When the gateway wrote it (its own clock: a stamp that changes while it lives). */
  at: number;
  /** Tokens taken per bucket key since the gateway started. */
  taken: Record<string, number>;
}

export class RateSync {
  private readonly id = `${hostname()}#${process.pid}#${randomUUID().slice(0, 8)}`;
  /** What each other gateway had taken per key when last read. */
  private readonly seen = new Map<string, Map<string, number>>();
  /** Each other gateway's last stamp and when (this clock) it changed: staleness is judged here, never by comparing clocks. */
  private readonly heard = new Map<string, { stamp: number; since: number }>();
  private timer: NodeJS.Timeout | undefined;
  private syncing = false;
  private failedOnce = false;
  /** Whether the key was read once: what the others took before this gateway started is not its to charge. */
  private looked = false;
  /** Rounds completed (the status figure `rateSyncs`). */
  rounds = 0;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly bucket: SharedBucket,
    gatewayName: string,
    private readonly log: Logger,
  ) {
    this.key = `gateway.${sharedNameWord(gatewayName)}`;
  }

  private readonly key: string;

  start(): void {
    this.timer = setInterval(() => void this.round(), SYNC_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One round: read the key, charge what the others took since the last read, write this gateway's entry back. */
  async round(now = Date.now()): Promise<void> {
    if (this.syncing) return;
    this.syncing = true;
    try {
      for (let i = 0; i < TRIES; i++) {
        const current = await this.bucket.get(this.key);
        const all = current ? parse(current.value) : {};
        this.absorb(all, now);
        for (const [id, e] of Object.entries(all)) {
          if (id === this.id) continue;
          const h = this.heard.get(id);
          if (!h || h.stamp !== e.at) this.heard.set(id, { stamp: e.at, since: now });
          else if (now - h.since > STALE_MS) {
            delete all[id];
            this.heard.delete(id);
          }
        }
        all[this.id] = { at: now, taken: this.mine(now) };
        const text = JSON.stringify(all);
        const written = current
          ? await this.bucket.update(this.key, text, current.revision)
          : await this.bucket.create(this.key, text);
        if (written !== undefined) break;
      }
      this.rounds++;
      if (this.failedOnce) this.log.info('rate limits are shared through the hive again');
      this.failedOnce = false;
    } catch (e) {
      // the hive cut off: each gateway counts on its own meanwhile (logged once, until a round succeeds)
      if (!this.failedOnce)
        this.log.warn(
          `rate limits: sharing through the hive failed (${describeError(e)}); this gateway counts on its own until it is back`,
        );
      this.failedOnce = true;
    } finally {
      this.syncing = false;
    }
  }

  /** Charges this gateway's buckets with what each other gateway took since it was last read (a retried round charges nothing twice). */
  private absorb(all: Record<string, Entry>, now: number): void {
    for (const [id, entry] of Object.entries(all)) {
      if (id === this.id) continue;
      const before = this.seen.get(id) ?? new Map<string, number>();
      const after = new Map<string, number>();
      for (const [key, n] of Object.entries(entry.taken)) {
        const was = before.get(key) ?? 0;
        // fewer than before: that gateway forgot the key (idle) and counts it from 0 again
        const delta = n >= was ? n - was : n;
        if (delta > 0 && this.looked) this.limiter.charge(key, delta, now);
        after.set(key, n);
      }
      this.seen.set(id, after);
    }
    for (const id of this.seen.keys()) if (!(id in all)) this.seen.delete(id);
    // from now on a gateway first seen started after this one: all it took is news
    this.looked = true;
  }

  /** This gateway's counts, idle keys forgotten, at most MAX_KEYS of the most recently used. */
  private mine(now: number): Record<string, number> {
    const taken = this.limiter.taken;
    for (const [key, t] of taken) if (now - t.at > IDLE_MS) taken.delete(key);
    let entries = [...taken];
    if (entries.length > MAX_KEYS) entries = entries.sort((a, b) => b[1].at - a[1].at).slice(0, MAX_KEYS);
    return Object.fromEntries(entries.map(([k, t]) => [k, t.n]));
  }
}

function parse(text: string): Record<string, Entry> {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, Entry>) : {};
  } catch {
    return {};
  }
}
