/**
 * Supervision policies as data (docs/ARCHITECTURE.md, Supervision and observability): how an
 * actor's crash is answered. A policy is validated once; deciding never throws and always yields
 * one of the valid decisions, because nact hangs an actor forever on an invalid or missing
 * decision.
 */
import { ConfigError } from '../protocol/errors.js';

/** What to do with a crashed actor. `resume` is deliberately absent: after an escalation nact
 * resumes the parent, not the faulted child, leaving the child busy forever. */
export const Decision = {
  /** Re-create the actor's state after the backoff and go on with its mailbox. */
  Restart: 'restart',
  /** Stop the actor and its children. */
  Stop: 'stop',
  /** Hand the fault to the parent's policy. */
  Escalate: 'escalate',
} as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

/** Restart with exponential backoff, at most `maxRestarts` within `withinMs`, then `onExhausted`. */
export interface RestartPolicy {
  /** Wait before the first restart. */
  initialMs: number;
  /** Each further restart within the window waits `factor` times longer. */
  factor: number;
  /** Upper bound of the wait. */
  maxMs: number;
  /** Restarts allowed within `withinMs` before giving up. */
  maxRestarts: number;
  /** Length of the window restarts are counted in. */
  withinMs: number;
  /** Decision once restarts are exhausted. */
  onExhausted: Exclude<Decision, 'restart'>;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = Object.freeze({
  initialMs: 10,
  factor: 2,
  maxMs: 5_000,
  maxRestarts: 10,
  withinMs: 60_000,
  onExhausted: Decision.Escalate,
});

/** Validates a policy once; invalid numbers stop the start with a message naming the field. */
export function validatePolicy(input: Partial<RestartPolicy>, where = 'restart policy'): RestartPolicy {
  const p: RestartPolicy = { ...DEFAULT_RESTART_POLICY, ...input };
  const nonNegative = (name: keyof RestartPolicy, v: number): void => {
    if (!Number.isFinite(v) || v < 0) throw new ConfigError(`${where}: ${name} must be a number >= 0, got ${v}`);
  };
  nonNegative('initialMs', p.initialMs);
  nonNegative('maxMs', p.maxMs);
  nonNegative('withinMs', p.withinMs);
  if (!Number.isFinite(p.factor) || p.factor < 1)
    throw new ConfigError(`${where}: factor must be >= 1, got ${p.factor}`);
  if (!Number.isInteger(p.maxRestarts) || p.maxRestarts < 0)
    throw new ConfigError(`${where}: maxRestarts must be a whole number >= 0, got ${p.maxRestarts}`);
  if (p.maxMs < p.initialMs) throw new ConfigError(`${where}: maxMs (${p.maxMs}) is below initialMs (${p.initialMs})`);
  if (p.onExhausted !== Decision.Stop && p.onExhausted !== Decision.Escalate) {
    throw new ConfigError(`${where}: onExhausted must be 'stop' or 'escalate', got ${String(p.onExhausted)}`);
  }
  return Object.freeze(p);
}

/** The verdict for one crash: what to do, after how long, and how many restarts the window holds. */
export interface Verdict {
  decision: Decision;
  delayMs: number;
  restartsInWindow: number;
}

/**
 * Remembers the crash times of one actor and turns each new crash into a verdict.
 * Kept per actor (not per state), so a restart does not forget earlier restarts.
 */
export class RestartTracker {
  private times: number[] = [];
  constructor(private readonly policy: RestartPolicy) {}

  /** The verdict for a crash at `now`; never throws. */
  onCrash(now: number): Verdict {
    const cutoff = now - this.policy.withinMs;
    this.times = this.times.filter((t) => t > cutoff);
    if (this.times.length >= this.policy.maxRestarts) {
      return { decision: this.policy.onExhausted, delayMs: 0, restartsInWindow: this.times.length };
    }
    const delay = Math.min(this.policy.maxMs, this.policy.initialMs * this.policy.factor ** this.times.length);
    this.times.push(now);
    return { decision: Decision.Restart, delayMs: delay, restartsInWindow: this.times.length };
  }

  /** Forgets earlier crashes (after a parent restarted the whole subtree). */
  reset(): void {
    this.times = [];
  }
}
