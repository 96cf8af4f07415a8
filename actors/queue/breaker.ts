/**
 * Circuit breakers per target channel (README, The queue, Circuit breakers; docs/ARCHITECTURE.md,
 * The life of one queue entry). A breaker counts the outcomes of the deliveries to its channel over
 * the windows of the `Breaker` rules (breaker-rules.ts); when one trips it opens: entries for the
 * channel that come up for delivery are set aside, still `waiting`, their attempts untouched, in a
 * heap by seq that nothing visits while the breaker stays open. One unref'd timer per breaker ends
 * the `BreakerOpenFor`: it half-opens, and entries go out one at a time as probes; `BreakerProbes`
 * successes in a row close it and every held entry goes back to the ready heap in its FIFO place,
 * a failed probe opens it again. An operator opens one (it stays open until closed) or closes one
 * with the `breaker` command. All of it runs inside the queue actor; the states live as long as the
 * queue runs (a restart starts every breaker closed with empty windows), the held entries as long
 * as the actor's state (a restarted actor reloads them as waiting and holds them again).
 */
import { isRetryableCode } from '../../protocol/codes.js';
import type { Result } from '../../protocol/message.js';
import { isUnserved } from '../hive/transport.js';
import type { BreakerRule } from './breaker-rules.js';
import type { QueueEntry } from './entry.js';
import { MinHeap } from './heap.js';

export const BreakerState = { Closed: 'closed', Open: 'open', HalfOpen: 'half-open', Disabled: 'disabled' } as const;
export type BreakerState = (typeof BreakerState)[keyof typeof BreakerState];

/** The `breakers` status figure (and /metrics) gives each state as a number. */
const STATE_NUMBER: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2, disabled: 3 };

/** Tenths of a window: outcomes are counted per tenth, so a window slides a tenth at a time. */
const SLOTS = 10;

/**
 * Whether an outcome counts against the target's health: a 5xx, a timeout (408), throttling (425, 429),
 * or a channel nobody serves on a NATS hive. A 4xx the target answers about the entry itself (400,
 * 404, 422, …) says the target is up; it fails the entry, not the channel.
 */
export function isTargetError(result: Result): boolean {
  return result.Code >= 500 || isRetryableCode(result.Code) || isUnserved(result);
}

/** The counts of one rule over its window, in tenths that are reset as time passes them. */
class RuleWindow {
  private readonly slotMs: number;
  private readonly stamp = new Float64Array(SLOTS).fill(-1);
  private readonly n = new Float64Array(SLOTS);
  private readonly hits = new Float64Array(SLOTS);

  constructor(readonly rule: BreakerRule) {
    this.slotMs = Math.max(1, rule.windowMs / SLOTS);
  }

  add(now: number, failed: boolean, durationMs: number): void {
    const tick = Math.floor(now / this.slotMs);
    const i = tick % SLOTS;
    if (this.stamp[i] !== tick) {
      this.stamp[i] = tick;
      this.n[i] = 0;
      this.hits[i] = 0;
    }
    this.n[i]!++;
    if (this.rule.metric === 'errors' ? failed : durationMs > this.rule.slowerThanMs) this.hits[i]!++;
  }

  /** The window's deliveries and hits now. */
  totals(now: number): { n: number; hits: number } {
    const tick = Math.floor(now / this.slotMs);
    let n = 0;
    let hits = 0;
    for (let i = 0; i < SLOTS; i++) {
      if (this.stamp[i]! > tick - SLOTS) {
        n += this.n[i]!;
        hits += this.hits[i]!;
      }
    }
    return { n, hits };
  }

  /** A line saying why the rule tripped, or undefined if it does not hold now. */
  tripped(now: number): string | undefined {
    const { n, hits } = this.totals(now);
    if (n < this.rule.min || hits / n <= this.rule.fraction) return undefined;
    const what = this.rule.metric === 'errors' ? 'failed' : `took longer than ${this.rule.slowerThanMs} ms`;
    return `${this.rule.text}: ${hits} of ${n} deliveries ${what}`;
  }

  reset(): void {
    this.stamp.fill(-1);
  }
}

/** What `breaker status` and the console show of one breaker. */
export interface BreakerView {
  channel: string;
  state: BreakerState;
  /** Entries set aside while it is not closed. */
  held: number;
  /** Why it opened last (a rule with its counts, a failed probe, an operator). */
  reason: string;
  /** When it opened last (RFC 3339), '' if never. */
  opened: string;
  /** When an open breaker half-opens (RFC 3339); '' when it is not open or stays open until closed. */
  until: string;
  /** Successful probes so far while half-open. */
  probes: number;
  /** Times it opened since the queue started. */
  opens: number;
  /** Since when every delivery to the channel failed (RFC 3339), '' while the last one did not. */
  failingSince: string;
}

class Breaker {
  state: BreakerState = BreakerState.Closed;
  readonly windows: RuleWindow[];
  /** Held keys by seq, and the set of those still held (a key deleted or stepped meanwhile is dropped from it). */
  readonly heap = new MinHeap<string>();
  readonly held = new Set<string>();
  /** The key of the probe out now (half-open). */
  probe: string | undefined;
  probesOk = 0;
  reason = '';
  openedAt = 0;
  /** When it half-opens; 0: not open, or open until an operator closes it. */
  until = 0;
  opens = 0;
  /** When the current run of failures began (DisableAfter); 0 while the last outcome was not a failure. */
  failingSince = 0;
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly channel: string,
    rules: readonly BreakerRule[],
  ) {
    this.windows = rules.map((r) => new RuleWindow(r));
  }

  hold(e: QueueEntry): void {
    if (this.held.has(e.key)) return;
    this.held.add(e.key);
    this.heap.push(e.seq, e.key);
  }

  /** Pops the oldest key still held, or undefined. */
  popHeld(): string | undefined {
    for (;;) {
      const key = this.heap.pop();
      if (key === undefined) return undefined;
      if (this.held.delete(key)) return key;
    }
  }

  stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  view(): BreakerView {
    const iso = (t: number): string => (t > 0 ? new Date(t).toISOString() : '');
    return {
      channel: this.channel,
      state: this.state,
      held: this.held.size,
      reason: this.reason,
      opened: iso(this.openedAt),
      until: this.state === BreakerState.Open ? iso(this.until) : '',
      probes: this.probesOk,
      opens: this.opens,
      failingSince: iso(this.failingSince),
    };
  }
}

export interface BreakerOptions {
  rules: readonly BreakerRule[];
  openForMs: number;
  /** Successful probes in a row that close a half-open breaker. */
  probes: number;
  /** A state change, for the log and the journal (one line). */
  changed: (channel: string, state: BreakerState, line: string) => void;
  /** DisableAfter: failing this long without a break disables the channel (0: never). */
  disableAfterMs?: number;
  /** The channel was disabled (DisableAfter): the queue sends its one alert (AlertChannel). */
  disabled?: (view: BreakerView) => void;
}

/**
 * Puts a key back for delivery (into the queue's ready heap) if its entry still waits; false when
 * it is gone or no longer waiting, so the next held key is tried.
 */
export type Release = (key: string) => boolean;

/** The breakers of one queue, by channel: created when a channel has its first outcome (with rules) or an operator names it. */
export class Breakers {
  private readonly byChannel = new Map<string, Breaker>();
  /** Breakers not closed: the pump looks only when there is one. */
  private notClosed = 0;
  /** Asks the queue actor to half-open a channel's breaker (set by the actor at its start). */
  private wake: (channel: string) => void = () => undefined;

  constructor(private readonly opts: BreakerOptions) {}

  /** The queue actor's way to be woken by a breaker's timer. */
  setWake(wake: (channel: string) => void): void {
    this.wake = wake;
  }

  get size(): number {
    return this.byChannel.size;
  }

  /** Whether an entry may be delivered now: false when its channel's breaker holds it (it is then held). */
  admit(e: QueueEntry): boolean {
    if (this.notClosed === 0) return true;
    const b = this.byChannel.get(e.channel);
    if (!b || b.state === BreakerState.Closed) return true;
    if (b.state === BreakerState.HalfOpen && b.probe === undefined) {
      b.probe = e.key;
      return true;
    }
    b.hold(e);
    return false;
  }

  /**
   * Holds an entry whose channel's breaker is open, or half-open with its probe out (true); false
   * otherwise, without taking it as a probe: the group gate reads entries before it picks one to
   * start, and only `admit` of the one it starts may make a probe of it.
   */
  holds(e: QueueEntry): boolean {
    if (this.notClosed === 0) return false;
    const b = this.byChannel.get(e.channel);
    if (!b || b.state === BreakerState.Closed || (b.state === BreakerState.HalfOpen && b.probe === undefined))
      return false;
    b.hold(e);
    return true;
  }

  /** An entry left the queue or was delivered by `step`: it is held no more. */
  forget(key: string): void {
    if (this.notClosed === 0) return;
    for (const b of this.byChannel.values()) b.held.delete(key);
  }

  /** A restarted queue actor reloads every entry: what was held is found again as it comes up for delivery. */
  forgetHeld(): void {
    for (const b of this.byChannel.values()) {
      b.held.clear();
      b.heap.clear();
    }
  }

  /**
   * Counts a delivery's outcome. `channel` is undefined when the entry is gone (deleted while out):
   * only a probe's outcome is then still read, by its key. May open, close or re-open the breaker;
   * closing releases its held entries.
   */
  record(
    key: string,
    channel: string | undefined,
    ended: { result: Result; durationMs: number },
    release: Release,
    now = Date.now(),
  ): void {
    const { result, durationMs } = ended;
    const failed = isTargetError(result);
    const probed = this.probeOf(key);
    const disables = (this.opts.disableAfterMs ?? 0) > 0;
    const b =
      probed ??
      (channel !== undefined && (this.opts.rules.length > 0 || disables) ? this.breakerOf(channel) : undefined);
    if (!b) return;
    if (disables && this.failingTooLong(b, failed, result, now)) return;
    if (probed) return this.probeAnswered(probed, failed, result, release, now);
    if (this.opts.rules.length === 0) return;
    // outcomes of deliveries that went out before it opened say nothing the probes will not
    if (b.state !== BreakerState.Closed) return;
    for (const w of b.windows) w.add(now, failed, durationMs);
    for (const w of b.windows) {
      // a success never trips an error rule (it only lowers the share); a slow one may trip a latency rule
      if (w.rule.metric === 'errors' && !failed) continue;
      const why = w.tripped(now);
      if (why) return this.open(b, why, now, true);
    }
  }

  /**
   * DisableAfter: a run of failures to the channel (every outcome a target error, probes included)
   * lasting that long disables it — held like an open breaker, but until an operator resumes it
   * (`resume` with `channel`, or `breaker close`), with one alert. True when it was disabled now.
   */
  private failingTooLong(b: Breaker, failed: boolean, result: Result, now: number): boolean {
    if (!failed) {
      b.failingSince = 0;
      return false;
    }
    if (b.failingSince === 0) b.failingSince = now;
    if (b.state === BreakerState.Disabled || now - b.failingSince < this.opts.disableAfterMs!) return false;
    if (b.state === BreakerState.Closed) this.notClosed++;
    b.stopTimer();
    b.state = BreakerState.Disabled;
    b.probe = undefined;
    b.until = 0;
    b.openedAt = now;
    b.opens++;
    b.reason = `disabled after ${Math.round((now - b.failingSince) / 1000)} s of failures (DisableAfter), the last ${result.Code} ${result.Message}`;
    this.opts.changed(b.channel, BreakerState.Disabled, `${b.reason}; held until resumed`);
    this.opts.disabled?.(b.view());
    return true;
  }

  /** The `breaker` command's `open`: held until an operator closes it (no timer half-opens it). */
  openByCommand(channel: string, now = Date.now()): BreakerView {
    const b = this.breakerOf(channel);
    this.open(b, 'opened by command (stays open until closed)', now, false);
    return b.view();
  }

  /** The `breaker` command's `close`, or the last good probe: every held entry goes back in FIFO order. */
  close(channel: string, release: Release, line = 'closed by command'): BreakerView {
    const b = this.breakerOf(channel);
    const released = this.toClosed(b, release);
    this.opts.changed(
      channel,
      BreakerState.Closed,
      `${line}; ${released} held entr${released === 1 ? 'y' : 'ies'} released`,
    );
    return b.view();
  }

  /** An open breaker's time is up (its timer): half-open, and the oldest held entry goes out as the first probe. */
  halfOpen(channel: string, release: Release, now = Date.now()): void {
    const b = this.byChannel.get(channel);
    // a wake that was on its way when the breaker changed (closed and opened again) is not this opening's
    if (!b || b.state !== BreakerState.Open || b.until === 0 || b.until > now + 50) return;
    b.stopTimer();
    b.state = BreakerState.HalfOpen;
    b.probe = undefined;
    b.probesOk = 0;
    this.opts.changed(
      channel,
      BreakerState.HalfOpen,
      `half-open after ${this.opts.openForMs} ms: sending ${this.opts.probes} probe(s), one at a time`,
    );
    this.releaseOne(b, release);
  }

  view(channel: string): BreakerView | undefined {
    return this.byChannel.get(channel)?.view();
  }

  views(): BreakerView[] {
    return [...this.byChannel.values()].map((b) => b.view()).sort((a, b) => a.channel.localeCompare(b.channel));
  }

  /** The status figures: each breaker's state (0 closed, 1 half-open, 2 open) and held entries, by channel. */
  figures(): { breakers?: Record<string, number>; breakerHeld?: Record<string, number> } {
    if (this.byChannel.size === 0) return {};
    const states: Record<string, number> = {};
    const held: Record<string, number> = {};
    for (const b of this.byChannel.values()) {
      states[b.channel] = STATE_NUMBER[b.state];
      held[b.channel] = b.held.size;
    }
    return { breakers: states, breakerHeld: held };
  }

  /** Stops every timer (the queue stops). */
  stop(): void {
    for (const b of this.byChannel.values()) b.stopTimer();
  }

  private breakerOf(channel: string): Breaker {
    let b = this.byChannel.get(channel);
    if (!b) {
      b = new Breaker(channel, this.opts.rules);
      this.byChannel.set(channel, b);
    }
    return b;
  }

  private probeOf(key: string): Breaker | undefined {
    if (this.notClosed === 0) return undefined;
    for (const b of this.byChannel.values()) if (b.probe === key) return b;
    return undefined;
  }

  private probeAnswered(b: Breaker, failed: boolean, result: Result, release: Release, now: number): void {
    b.probe = undefined;
    if (b.state !== BreakerState.HalfOpen) return; // opened or closed by command meanwhile
    if (failed) return this.open(b, `probe failed: ${result.Code} ${result.Message}`, now, true);
    b.probesOk++;
    if (b.probesOk >= this.opts.probes) {
      this.close(b.channel, release, `closed after ${b.probesOk} good probe(s)`);
      return;
    }
    this.releaseOne(b, release);
  }

  private open(b: Breaker, reason: string, now: number, timed: boolean): void {
    if (b.state === BreakerState.Closed) this.notClosed++;
    b.stopTimer();
    b.state = BreakerState.Open;
    b.reason = reason;
    b.openedAt = now;
    b.opens++;
    b.probesOk = 0;
    b.until = timed ? now + this.opts.openForMs : 0;
    if (timed) {
      // unref: an open breaker alone never keeps a stopping process alive
      b.timer = setTimeout(() => {
        b.timer = undefined;
        this.wake(b.channel);
      }, this.opts.openForMs).unref();
    }
    this.opts.changed(
      b.channel,
      BreakerState.Open,
      `opened: ${reason}${timed ? `; half-opens in ${this.opts.openForMs} ms` : ''}`,
    );
  }

  private toClosed(b: Breaker, release: Release): number {
    if (b.state !== BreakerState.Closed) this.notClosed--;
    b.stopTimer();
    b.state = BreakerState.Closed;
    b.probe = undefined;
    b.probesOk = 0;
    b.until = 0;
    b.failingSince = 0;
    for (const w of b.windows) w.reset();
    let released = 0;
    for (let key = b.popHeld(); key !== undefined; key = b.popHeld()) if (release(key)) released++;
    return released;
  }

  /** Puts the oldest held entry that still waits back for delivery: the pump takes it as the probe. */
  private releaseOne(b: Breaker, release: Release): void {
    for (let key = b.popHeld(); key !== undefined; key = b.popHeld()) if (release(key)) return;
  }
}
