/**
 * A schedule's firing (docs/ARCHITECTURE.md, The life of one queue entry): when
 * the `overlap` policy leaves room, the schedule's message is enqueued through the queue's own add
 * path (stored, deduplicated and counted against Capacity like any add, waiting in a paused queue),
 * and the schedule's next firing and last entry are written in the entry's own transaction, so a
 * crash can neither lose the entry's record nor make it twice. Runs inside the queue actor.
 */
import { isSuccessCode } from '../../protocol/codes.js';
import { ConflictError, describeError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import type { ActorRef } from '../../supervisors/runtime.js';
import { EntryState } from './entry.js';
import type { QueueCore, QueueMsg, QueueState } from './queue-core.js';
import type { Schedule, ScheduleDoc } from './schedules.js';
import { followingFiring, putScheduleOp, roomFor } from './schedules.js';
import { Overlap } from './schedule-request.js';

/** States in which an entry still counts against `overlap`: not yet done (dead ones are out of the run). */
const IN_PROGRESS: ReadonlySet<EntryState> = new Set([
  EntryState.Pending,
  EntryState.Scheduled,
  EntryState.Waiting,
  EntryState.Delivering,
  EntryState.Retrying,
]);

/** Fires every schedule that is due (the timer woke the actor). */
export function fireDue(core: QueueCore, s: QueueState, self: ActorRef<QueueMsg>): void {
  s.schedules.woke();
  const now = Date.now();
  for (const schedule of s.schedules.due(now)) fire(core, s, schedule, self, now);
}

/** Keeps of the schedule's entries those still in progress: what `overlap` counts. */
function pruneLive(s: QueueState, doc: ScheduleDoc): void {
  doc.liveKeys = doc.liveKeys.filter((key) => {
    const state = s.entries.get(key)?.state;
    return state !== undefined && IN_PROGRESS.has(state);
  });
}

const earlier = (n: number): string => `${n} earlier entr${n === 1 ? 'y is' : 'ies are'} still in the queue`;

/**
 * Adds the schedule's message through the queue's add path and records the firing in the entry's
 * own transaction (a timed firing and a run now alike); `respond` gets the add's answer.
 */
function addFiring(
  core: QueueCore,
  s: QueueState,
  self: ActorRef<QueueMsg>,
  doc: ScheduleDoc,
  at: { now: number; respond: (r: Result) => void },
): void {
  const { now, respond } = at;
  core.add(s, [doc.message], self, respond, {
    alsoWrite: ([key]) => {
      doc.fired++;
      doc.lastFiredAt = now;
      doc.lastEntryKey = key!;
      // `allow` never waits for its entries: only the last is kept, for the listing
      doc.liveKeys = doc.overlap === Overlap.Allow ? [key!] : [...doc.liveKeys.filter((k) => k !== key), key!];
      return [putScheduleOp(doc)];
    },
  });
}

function fire(core: QueueCore, s: QueueState, schedule: Schedule, self: ActorRef<QueueMsg>, now: number): void {
  const { log } = core.deps;
  const doc = schedule.doc;
  // from now, not from the missed time: a late wake (or catchup one) makes one entry, not a burst
  doc.nextAt = followingFiring(schedule, Math.max(now, doc.nextAt));
  pruneLive(s, doc);
  if (!roomFor(doc.overlap, doc.liveKeys.length)) {
    doc.skipped++;
    log.debug(
      `queue schedule '${doc.name}' skipped a firing: ${earlier(doc.liveKeys.length)} (overlap ${doc.overlap})`,
    );
    return core.persist([putScheduleOp(doc)]);
  }
  const answered = (r: Result): void => {
    if (!isSuccessCode(r.Code))
      log.warn(`queue schedule '${doc.name}' could not add its entry: ${r.Code} ${r.Message}`);
  };
  try {
    addFiring(core, s, self, doc, { now, respond: answered });
  } catch (e) {
    // the queue refused the entry (full, or a control the queue now reads otherwise): the schedule goes on
    doc.skipped++;
    log.warn(`queue schedule '${doc.name}' could not add its entry: ${describeError(e)}`);
    core.persist([putScheduleOp(doc)]);
  }
}

/**
 * `run_schedule`: a firing now, on demand, under the same `overlap` rule as a timed one. Where a
 * timed firing would be skipped, the run is refused with 409 naming the entries in the way (the
 * operator can wait for them, or delete them); the timed firings go on as before either way. A
 * refusal of the add itself (full, 507) is the caller's answer too.
 */
export function runScheduleNow(
  core: QueueCore,
  s: QueueState,
  schedule: Schedule,
  self: ActorRef<QueueMsg>,
  respond: (r: Result) => void,
): void {
  const doc = schedule.doc;
  pruneLive(s, doc);
  if (!roomFor(doc.overlap, doc.liveKeys.length)) {
    const keys = doc.liveKeys.map((k) => `'${k}' (${s.entries.get(k)?.state ?? 'gone'})`).join(', ');
    throw new ConflictError(
      `schedule '${doc.name}' was not run: its overlap rule '${doc.overlap}' adds no entry while ${earlier(doc.liveKeys.length)}: ${keys}`,
    );
  }
  core.deps.log.info(`queue schedule '${doc.name}' run now`);
  addFiring(core, s, self, doc, { now: Date.now(), respond });
}
