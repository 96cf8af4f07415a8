/**
 * The queue's commands (README, The queue: its controls) parsed from a message's controls: every command
 * and alias, the per-entry controls, and the service defaults that apply when a control is absent.
 * A control given without a value takes the control table's default
 * (docs/ARCHITECTURE.md, Configuration).
 */
import { COMMAND_ALIASES } from '../../protocol/commands.js';
import type { QUEUE_PARAMS } from '../../config/queue.js';
import { QUEUE_CONTROL_DEFAULTS } from '../../config/queue.js';
import type { ConfigOf } from '../../config/params.js';
import { BadInputError, ForbiddenError } from '../../protocol/errors.js';
import type { ChannelGate } from '../../config/allowed-channels.js';
import { gateAdmits } from '../../config/allowed-channels.js';
import type { Message, ValueMap } from '../../protocol/message.js';
import { emptyMap } from '../../protocol/message.js';
import type { DeliveryMode } from './entry.js';
import { EntryState } from './entry.js';
import type { ScheduleRequest } from './schedule-request.js';
import { SCHEDULE_CONTROLS, parseScheduleRequest, scheduleNameOf } from './schedule-request.js';
import type { AgeFilter } from './kept.js';
import type { ListPage } from './responses.js';
import type { KeptCommand } from './kept-commands.js';
import { ageFilterOf, parseKeptCommand } from './kept-commands.js';
import type { BreakerCommand } from './breaker-request.js';
import { parseBreakerCommand } from './breaker-request.js';
import { defaultRequeueSchedule, parseRequeueSchedule } from './requeue-schedule.js';
import { MAX_REQUEUE_COUNT, MAX_REQUEUE_SECONDS, selector, wholeInRange } from './control-ranges.js';

export type QueueConfig = ConfigOf<typeof QUEUE_PARAMS>;

/** A parsed command. */
export type QueueCommand =
  | { type: 'add'; templateDefine: string | undefined }
  | { type: 'status' }
  | { type: 'clear' }
  | { type: 'delete'; key: string }
  /** With `channel`: that channel only (its breaker opened or closed by hand, breaker-commands.ts). */
  | { type: 'pause'; channel?: string }
  | { type: 'resume'; channel?: string }
  | ({ type: 'list'; groupBy?: string; value?: string; state?: string; page?: ListPage } & AgeFilter)
  | { type: 'fetch'; key?: string }
  | { type: 'step'; key?: string }
  /** Store a cron schedule (schedule-commands.ts). */
  | { type: 'schedule'; request: ScheduleRequest }
  /** List the schedules, or the one named. */
  | { type: 'schedules'; name?: string }
  | { type: 'unschedule'; name: string }
  /** Add the schedule's message now, as a firing would, when its overlap rule allows (schedule-firing.ts). */
  | { type: 'run_schedule'; name: string }
  | KeptCommand
  /** Open, close or show the circuit breakers (breaker-commands.ts). */
  | BreakerCommand;

/** The queue's command names (protocol/commands.ts, shared with the gateway's Access so an alias cannot walk around it). */
const ALIASES = Object.fromEntries(
  Object.entries(COMMAND_ALIASES).map(([name, command]) => [name, command === 'delete' ? 'clear-or-delete' : command]),
) as Record<string, Exclude<QueueCommand['type'], 'clear' | 'delete'> | 'clear-or-delete'>;

/** Names of the controls the queue itself reads: they are not passed on with an entry's message. */
const QUEUE_CONTROLS = new Set([
  'command',
  'key',
  'channel',
  'mode',
  'template_define',
  'requeue_timer',
  'requeue_count',
  'deadletter_slap',
  'groupby',
  'list',
  'state',
  'delay',
  'not_before',
  'idempotency-key',
  'debounce',
  'dedup_mode',
  'priority',
  'older_than',
  'newer_than',
  'list_offset',
  'list_limit',
  'breaker',
  'requeue_schedule',
  ...SCHEDULE_CONTROLS,
]);

/** The control's value: undefined when absent, the table default when given without a value. */
function control(
  controls: ValueMap,
  name: keyof typeof QUEUE_CONTROL_DEFAULTS | 'key' | 'groupby' | 'list' | 'state',
): string | undefined {
  if (!Object.hasOwn(controls, name)) return undefined;
  const v = controls[name]?.[0];
  if (v === undefined || v === '') return (QUEUE_CONTROL_DEFAULTS as Record<string, string>)[name] ?? '';
  return v;
}

/** The largest page of keys one `list` answers (list_limit). */
const MAX_LIST_LIMIT = 10_000;

/** A whole number control in [min, max], or undefined when absent; 400 naming the control otherwise. */
function wholeControl(controls: ValueMap, name: string, min: number, max: number): number | undefined {
  if (!Object.hasOwn(controls, name)) return undefined;
  const text = controls[name]?.[0] ?? '';
  const n = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(n >= min && n <= max))
    throw new BadInputError(`control ${name} is '${text}'; give a whole number from ${min} to ${max}`);
  return n;
}

/** `list`'s page (list_offset, list_limit), or undefined when neither is given: every key, as the spec's list. */
function listPageOf(controls: ValueMap): ListPage | undefined {
  const offset = wholeControl(controls, 'list_offset', 0, 999_999_999);
  const limit = wholeControl(controls, 'list_limit', 1, MAX_LIST_LIMIT);
  if (offset === undefined && limit === undefined) return undefined;
  return { offset: offset ?? 0, ...(limit !== undefined ? { limit } : {}) };
}

export function parseCommand(message: Message, cfg: QueueConfig): QueueCommand {
  const c = message.Control;
  const name = (control(c, 'command') ?? cfg.DefaultCommand).trim().toLowerCase();
  const kind = Object.hasOwn(ALIASES, name) ? ALIASES[name] : undefined;
  if (!kind) throw new BadInputError(`command '${name}' is not known; use one of ${Object.keys(ALIASES).join(', ')}`);
  const key = selector(c, 'key', 'the key of an entry');
  switch (kind) {
    case 'add': {
      const define = control(c, 'template_define') ?? (cfg.DefaultTemplateDefine || undefined);
      return { type: 'add', templateDefine: define };
    }
    case 'clear-or-delete':
      if (key !== undefined) return { type: 'delete', key };
      // emptying the whole queue is never a service default: the caller names the command
      if (!Object.hasOwn(c, 'command'))
        throw new BadInputError(
          `clearing the whole queue needs control command '${name}' in the request (DefaultCommand does not clear)`,
        );
      return { type: 'clear' };
    case 'list': {
      const state = selector(c, 'state', 'one of ' + Object.values(EntryState).join(', '));
      if (state !== undefined && !Object.values(EntryState).includes(state as EntryState)) {
        throw new BadInputError(`state '${state}' is not known; use one of ${Object.values(EntryState).join(', ')}`);
      }
      const groupBy = selector(c, 'groupby', 'the attribute to group by');
      const value = control(c, 'list');
      if (value !== undefined && groupBy === undefined)
        throw new BadInputError('control list selects the entries of one groupby value: give control groupby with it');
      const page = listPageOf(c);
      if (page && groupBy && value === undefined)
        throw new BadInputError(
          'list_offset and list_limit page a list of keys; a groupby without list answers counts, which have no pages',
        );
      return {
        type: 'list',
        ...(groupBy ? { groupBy } : {}),
        ...(value !== undefined ? { value } : {}),
        ...(state ? { state } : {}),
        ...(page ? { page } : {}),
        ...ageFilterOf(c, Date.now()),
      };
    }
    case 'fetch':
      return key ? { type: 'fetch', key } : { type: 'fetch' };
    case 'step':
      return key ? { type: 'step', key } : { type: 'step' };
    case 'replay':
    case 'purge':
      return parseKeptCommand(kind, message, Date.now());
    case 'pause':
    case 'resume': {
      const channel = selector(c, 'channel', 'the channel to pause or resume');
      return channel === undefined ? { type: kind } : { type: kind, channel };
    }
    case 'status':
      return { type: kind };
    case 'schedule':
      return { type: 'schedule', request: parseScheduleRequest(message) };
    case 'breaker':
      return parseBreakerCommand(c);
    case 'schedules':
      return Object.hasOwn(c, 'schedule_name') ? { type: 'schedules', name: scheduleNameOf(c) } : { type: 'schedules' };
    case 'unschedule':
    case 'run_schedule':
      return { type: kind, name: scheduleNameOf(c) };
    default:
      throw new BadInputError(`command '${name}' is not known`);
  }
}

/** Per-entry delivery settings from the controls, else the service defaults. */
export interface EntrySettings {
  channel: string;
  mode: DeliveryMode;
  requeueTimerMs: number;
  requeueCount: number;
  /** The waits of a requeue_schedule (or DefaultRequeueSchedule), ms; requeueCount is then its length. */
  requeueSchedule?: number[];
  deadLetter: string;
}

export function entrySettings(controls: ValueMap, cfg: QueueConfig, gate: ChannelGate): EntrySettings {
  const channel = allowedChannel(gate, control(controls, 'channel') ?? cfg.DefaultChannel, 'channel');
  const deadLetter = control(controls, 'deadletter_slap') ?? cfg.DefaultDeadLetterSlap;
  // '' is no dead-letter target at all: nothing is handed anywhere
  if (deadLetter !== '') allowedChannel(gate, deadLetter, 'deadletter_slap');
  const mode = (control(controls, 'mode') ?? cfg.DefaultMode).toLowerCase();
  if (mode !== 'call' && mode !== 'execute')
    throw new BadInputError(`control mode must be 'call' or 'execute', got '${mode}'`);
  const timer = control(controls, 'requeue_timer');
  const count = control(controls, 'requeue_count');
  const schedule = requeueScheduleOf(controls, cfg, timer !== undefined || count !== undefined);
  if (schedule)
    return { channel, mode, requeueTimerMs: 0, requeueCount: schedule.length, requeueSchedule: schedule, deadLetter };
  return {
    channel,
    mode,
    requeueTimerMs:
      timer === undefined
        ? cfg.DefaultRequeueTime * 1000
        : wholeInRange(timer, 'requeue_timer', 0, MAX_REQUEUE_SECONDS, 'seconds') * 1000,
    requeueCount:
      count === undefined
        ? cfg.DefaultRequeueCount
        : wholeInRange(count, 'requeue_count', 0, MAX_REQUEUE_COUNT, 'retries'),
    deadLetter,
  };
}

/**
 * The entry's requeue_schedule: the control, else DefaultRequeueSchedule unless the entry gives its
 * own requeue_timer or requeue_count (`timed`); both the control and those at once is 400.
 */
function requeueScheduleOf(controls: ValueMap, cfg: QueueConfig, timed: boolean): number[] | undefined {
  if (Object.hasOwn(controls, 'requeue_schedule')) {
    if (timed)
      throw new BadInputError(
        'control requeue_schedule sets the waits and the number of retries: give it without requeue_timer and requeue_count',
      );
    return parseRequeueSchedule(controls.requeue_schedule?.[0] ?? '', 'control requeue_schedule');
  }
  return timed ? undefined : defaultRequeueSchedule(cfg.DefaultRequeueSchedule);
}

/**
 * A channel an entry would be delivered to, checked against AllowedChannels (README, Authorization
 * model): the queue bounds where its entries go whatever the caller, so a caller refused a route
 * cannot reach its channel by naming it in a control.
 */
export function allowedChannel(gate: ChannelGate, channel: string, what: string): string {
  if (!gateAdmits(gate, channel))
    throw new ForbiddenError(`${what} '${channel}' is not among the queue's AllowedChannels`);
  return channel;
}

/** The controls an entry's message carries on: everything but the queue's own. */
export function passedControls(controls: ValueMap): ValueMap {
  const out = emptyMap();
  // for-in, not Object.entries: no pair array per control on the enqueue path
  for (const k in controls) if (Object.hasOwn(controls, k) && !QUEUE_CONTROLS.has(k)) out[k] = controls[k]!;
  return out;
}
