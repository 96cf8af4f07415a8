/**
 * The schedule commands, run inside the queue actor: `schedule` stores a cron
 * schedule (replacing one of the same name), `schedules` lists them, `unschedule` removes one,
 * `run_schedule` fires one now under its overlap rule (schedule-firing.ts).
 * Changes are answered once durable. The answers: docs/ARCHITECTURE.md, Result shapes.
 */
import { BadInputError, NotFoundError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import { success } from '../../protocol/message.js';
import type { QueueCommand } from './command-parser.js';
import { entrySettings } from './command-parser.js';
import { nextFiring } from './cron.js';
import { idempotencyKeyOf } from '../../protocol/idempotency.js';
import { notBeforeOf } from './delay.js';
import type { ActorRef } from '../../supervisors/runtime.js';
import type { QueueCore, QueueMsg, QueueState } from './queue-core.js';
import { runScheduleNow } from './schedule-firing.js';
import type { QueueView } from './responses.js';
import { statusData, statusResult } from './responses.js';
import type { Schedule } from './schedules.js';
import { NEVER, putScheduleOp } from './schedules.js';

export type ScheduleCommand = Extract<QueueCommand, { type: 'schedule' | 'schedules' | 'unschedule' | 'run_schedule' }>;

const isoOrEmpty = (ms: number): string => (ms === 0 || ms === NEVER ? '' : new Date(ms).toISOString());

/** One schedule as the `schedules` List shows it. */
function described(schedule: Schedule): Record<string, unknown> {
  const d = schedule.doc;
  return {
    name: d.name,
    cron: d.cron,
    tz: d.tz,
    overlap: d.overlap,
    catchup: d.catchup,
    next: isoOrEmpty(d.nextAt),
    last_entry: d.lastEntryKey,
    last_fired: isoOrEmpty(d.lastFiredAt),
    fired: d.fired,
    skipped: d.skipped,
    created: d.createdAt,
    message: d.message,
  };
}

/**
 * The `schedules` answer: Data `names` plus one list per field, each holding one value per
 * schedule in the order of `names`; List one object per schedule (with its message).
 */
function schedulesResult(schedules: Schedule[], view: QueueView): Result {
  const column = (pick: (s: Schedule) => string): string[] => schedules.map(pick);
  const data = statusData(view, {
    names: column((s) => s.doc.name),
    cron: column((s) => s.doc.cron),
    tz: column((s) => s.doc.tz),
    overlap: column((s) => s.doc.overlap),
    catchup: column((s) => s.doc.catchup),
    next: column((s) => isoOrEmpty(s.doc.nextAt)),
    last_entry: column((s) => s.doc.lastEntryKey),
    last_fired: column((s) => isoOrEmpty(s.doc.lastFiredAt)),
    fired: column((s) => String(s.doc.fired)),
    skipped: column((s) => String(s.doc.skipped)),
  });
  return success(data, schedules.map(described));
}

export function runScheduleCommand(
  core: QueueCore,
  s: QueueState,
  cmd: ScheduleCommand,
  respond: (r: Result) => void,
  self: ActorRef<QueueMsg>,
): void {
  switch (cmd.type) {
    case 'schedule': {
      const { request } = cmd;
      const now = Date.now();
      // the entry's own controls are checked now, so a bad one is refused here and not at every firing
      entrySettings(request.message.Control, core.deps.config, core.deps.gate);
      notBeforeOf(request.message.Control, now);
      if (s.dedup.enabled) idempotencyKeyOf(request.message.Control);
      const nextAt = nextFiring(request.cron, request.zone, now);
      if (nextAt === undefined)
        throw new BadInputError(
          `control cron '${request.cron.source}' names no time within eight years (a day such as 30 February never comes)`,
        );
      const { schedule, replaced } = s.schedules.set(request, nextAt, now);
      core.deps.log.info(
        `queue schedule '${request.name}' ${replaced ? 'replaced' : 'added'}: cron '${request.cron.source}' in ${request.zone.name}, next firing ${new Date(nextAt).toISOString()}`,
      );
      return core.durably([putScheduleOp(schedule.doc)], respond, () =>
        statusResult(core.view(s), {
          schedule_name: [request.name],
          next: [new Date(nextAt).toISOString()],
          replaced: [String(replaced)],
        }),
      );
    }
    case 'schedules': {
      const one = cmd.name === undefined ? undefined : s.schedules.get(cmd.name);
      if (cmd.name !== undefined && !one) throw new NotFoundError(`no schedule named '${cmd.name}'`);
      return respond(schedulesResult(one ? [one] : s.schedules.list(), core.view(s)));
    }
    case 'unschedule':
      if (!s.schedules.remove(cmd.name)) throw new NotFoundError(`no schedule named '${cmd.name}'`);
      core.deps.log.info(`queue schedule '${cmd.name}' removed`);
      return core.durably([{ type: 'remove-schedule', name: cmd.name }], respond, () =>
        statusResult(core.view(s), { unscheduled: [cmd.name] }),
      );
    case 'run_schedule': {
      const schedule = s.schedules.get(cmd.name);
      if (!schedule) throw new NotFoundError(`no schedule named '${cmd.name}'`);
      return runScheduleNow(core, s, schedule, self, respond);
    }
  }
}
