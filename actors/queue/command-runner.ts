/**
 * The queue's control commands (README, The queue), run inside the queue actor: add (directly or by
 * template fan-out), status, clear, delete by key, pause/resume, list, fetch and step. Changes a
 * caller is answered about are durable first; reads answer at once.
 */
import { BadInputError, NotFoundError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import type { ActorRef } from '../../supervisors/runtime.js';
import type { QueueCommand } from './command-parser.js';
import { notBeforeOf } from './delay.js';
import { EntryState } from './entry.js';
import type { QueueCore, QueueMsg, QueueState } from './queue-core.js';
import { runScheduleCommand } from './schedule-commands.js';
import { fetchResult, statusResult } from './responses.js';
import { fetchKept, listEntries, purge, replay } from './dead-set.js';
import { assertNever } from '../../protocol/never.js';
import { runBreakerCommand } from './breaker-commands.js';

/** Entries `step key` may deliver now: waiting ones, and those waiting for a time (their timer then finds them delivered). */
function steppable(state: EntryState): boolean {
  return state === EntryState.Waiting || state === EntryState.Retrying || state === EntryState.Scheduled;
}

/** `delete` of a key that is no live entry: 400 when it is kept (dead or done: purge removes it), else 404. */
async function notLive(core: QueueCore, key: string): Promise<void> {
  const kept = await core.deps.store.kept.get(key);
  if (kept)
    throw new BadInputError(
      `entry '${key}' is ${kept.state}: delete removes a live entry (purge removes dead and done ones)`,
    );
  throw new NotFoundError(`no entry with key '${key}'`);
}

/** Runs one command; returns a promise only while a template fan-out renders. */
export function runCommand(
  core: QueueCore,
  s: QueueState,
  self: ActorRef<QueueMsg>,
  request: { cmd: QueueCommand; message: Message; respond: (r: Result) => void },
): void | Promise<void> {
  const { cmd, message, respond } = request;
  const view = core.view(s);
  switch (cmd.type) {
    case 'add': {
      if (cmd.templateDefine === undefined) return core.add(s, [message], self, respond);
      const fanOut = core.deps.fanOut;
      if (!fanOut)
        throw new BadInputError(
          `template_define '${cmd.templateDefine}' needs a queue Template, and none is configured`,
        );
      // read before rendering, so a bad delay renders nothing; entries the template gives their own keep theirs
      const notBefore = notBeforeOf(message.Control, Date.now());
      return fanOut(message, cmd.templateDefine).then((created) =>
        core.add(s, created, self, respond, { fannedOut: true, inheritedNotBefore: notBefore }),
      );
    }
    case 'status':
      return respond(statusResult(core.countedView(s)));
    case 'clear': {
      const n = s.entries.size;
      s.entries.clear();
      s.ready.clear();
      s.delivering = 0;
      s.flights.clear();
      s.batches?.clear();
      s.groups?.clear();
      core.deps.breakers?.forgetHeld();
      s.live.clear();
      core.runtime.tell(core.deps.retry(), { type: 'clear' });
      core.runtime.tell(core.deps.deadLetter(), { type: 'cancel-all' });
      return core.durably([{ type: 'clear' }], respond, () => statusResult(core.view(s), { cleared: [String(n)] }));
    }
    case 'delete': {
      const e = s.entries.get(cmd.key);
      // as fetch answers: an unknown key is 404, and a dead or done one is purge's
      if (!e) return notLive(core, cmd.key);
      if (e?.state === EntryState.Delivering) s.delivering--;
      s.groups?.finished(cmd.key);
      core.deps.breakers?.forget(cmd.key);
      s.groups?.release(cmd.key);
      s.entries.delete(cmd.key);
      core.attemptEnded(s, cmd.key);
      if (e.state === EntryState.Dead) core.cancelDeadLetter(e.key);
      return core.durably([{ type: 'remove', key: cmd.key }], respond, () =>
        statusResult(core.view(s), { deleted: ['1'], key: [cmd.key] }),
      );
    }
    case 'pause':
    case 'resume':
      // one channel: its breaker, opened by hand or closed (a channel DisableAfter disabled is resumed so)
      if (cmd.channel !== undefined)
        return runBreakerCommand(
          core,
          s,
          { type: 'breaker', action: cmd.type === 'pause' ? 'open' : 'close', channel: cmd.channel },
          core.deps.gate,
          respond,
        );
      s.paused = cmd.type === 'pause';
      return core.durably([{ type: 'meta', name: 'paused', value: String(s.paused) }], respond, () =>
        statusResult(core.view(s)),
      );
    case 'list':
      return listEntries(core, s, cmd, respond);
    case 'fetch': {
      const e = cmd.key ? s.entries.get(cmd.key) : s.entries.values().next().value;
      if (!e && cmd.key) return fetchKept(core, cmd.key, view, respond);
      if (!e) throw new NotFoundError(cmd.key ? `no entry with key '${cmd.key}'` : 'the queue is empty');
      return respond(fetchResult(e, view));
    }
    case 'step': {
      let e = cmd.key ? s.entries.get(cmd.key) : undefined;
      // without a key, a scheduled entry is not taken early: only naming it delivers it before its time
      if (!cmd.key)
        for (const candidate of s.entries.values())
          if (candidate.state === EntryState.Waiting || candidate.state === EntryState.Retrying) {
            e = candidate;
            break;
          }
      if (!e) throw new NotFoundError(cmd.key ? `no entry with key '${cmd.key}'` : 'no entry is waiting');
      if (!steppable(e.state)) throw new BadInputError(`entry '${e.key}' is ${e.state} and cannot be stepped`);
      s.stepWaiters.set(e.key, respond);
      s.groups?.stepped(e);
      // an operator's step delivers it now, breaker or not (as it does past group limits)
      core.deps.breakers?.forget(e.key);
      e.state = EntryState.Waiting;
      return core.start(s, e, self);
    }
    case 'schedule':
    case 'schedules':
    case 'unschedule':
    case 'run_schedule':
      return runScheduleCommand(core, s, cmd, respond, self);
    case 'replay':
      return replay(core, s, cmd, respond).then(() => core.refreshHolds(s));
    case 'breaker':
      return runBreakerCommand(core, s, cmd, core.deps.gate, respond);
    case 'purge':
      return purge(core, s, cmd, respond).then(() => core.refreshHolds(s));
    default:
      assertNever(cmd, 'queue command');
  }
}
