/**
 * How crashes are decided (docs/ARCHITECTURE.md, Supervision and observability): an actor's own
 * crash against its restart policy, and a child that escalated against its parent's child policy.
 * Both always yield a valid decision (nact hangs an actor on a missing one), record every step in
 * the journal and wait out the restart backoff before answering. runtime.ts turns the decision into
 * nact's.
 */
import { ServiceFailureError } from '../protocol/errors.js';
import type { ActorCell } from './actor-cell.js';
import type { Journal } from './journal.js';
import { JournalEvent, errorSummary } from './journal.js';
import type { RestartPolicy } from './policies.js';
import { Decision, RestartTracker } from './policies.js';
import { failMessage } from './undelivered.js';
import { crashCause, crashTrace } from './crash-cause.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a decision is taken: the crashed actor's path and whether the system root is its parent. */
export interface CrashSite {
  path: string;
  /** The system root would print and stop: top-level actors stop, logged, instead of escalating. */
  topLevel: boolean;
  journal: Journal;
}

/**
 * An actor's own crash: the message it was handling is answered with the error, then the policy
 * decides. `cell` is absent when the actor failed before it was registered.
 */
export async function decideOwnCrash(
  site: CrashSite,
  cell: ActorCell<unknown, unknown> | undefined,
  policy: RestartPolicy,
  error: unknown,
): Promise<Decision> {
  const { path, journal } = site;
  const current = cell?.takeCurrent();
  const cause = crashCause(current);
  const trace = crashTrace(current);
  journal.record({
    event: JournalEvent.Crash,
    path,
    error: errorSummary(error),
    ...(cause === undefined ? {} : { cause }),
    ...(trace === undefined ? {} : { trace_id: trace }),
  });
  if (cell)
    failMessage(current, new ServiceFailureError(`${path} crashed: ${errorSummary(error).message}`, { cause: error }));
  const verdict = (cell?.tracker ?? new RestartTracker(policy)).onCrash(Date.now());
  const decision = verdict.decision === Decision.Escalate && site.topLevel ? Decision.Stop : verdict.decision;
  journal.record({
    event: JournalEvent.Decision,
    path,
    decision,
    delayMs: verdict.delayMs,
    restarts: verdict.restartsInWindow,
  });
  if (decision === Decision.Restart) {
    if (verdict.delayMs > 0) await sleep(verdict.delayMs);
    journal.record({ event: JournalEvent.Restart, path, restarts: verdict.restartsInWindow });
  } else if (decision === Decision.Escalate) {
    // the suspended actor's mail waits for the parent's verdict
    journal.record({ event: JournalEvent.Escalation, path, error: errorSummary(error) });
  }
  return decision;
}

/**
 * A child whose own restarts are exhausted escalated to `site` (its parent): the parent's child
 * policy, with a restart count per child name, decides for it.
 */
export async function decideForChild(
  site: CrashSite,
  child: ActorCell<unknown, unknown> | undefined,
  tracker: RestartTracker,
  error: unknown,
): Promise<Decision> {
  const { path, journal } = site;
  const childPath = child?.path ?? `${path}/?`;
  const verdict = tracker.onCrash(Date.now());
  const decision = verdict.decision === Decision.Escalate && site.topLevel ? Decision.Stop : verdict.decision;
  journal.record({
    event: JournalEvent.Decision,
    path: childPath,
    decision: `${decision} (by ${path})`,
    delayMs: verdict.delayMs,
    restarts: verdict.restartsInWindow,
  });
  if (decision === Decision.Restart) {
    if (verdict.delayMs > 0) await sleep(verdict.delayMs);
    child?.tracker.reset();
    journal.record({ event: JournalEvent.Restart, path: childPath, restarts: verdict.restartsInWindow });
  } else if (decision === Decision.Escalate) {
    journal.record({ event: JournalEvent.Escalation, path, error: errorSummary(error) });
  }
  return decision;
}
