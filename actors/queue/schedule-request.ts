/**
 * The controls of the schedule commands: `schedule_name`, `cron`, `tz`,
 * `overlap` and `catchup`, read and checked into a request; the rest of the request — Class,
 * Operation, Data and the other controls — is the message every firing enqueues
 * (docs/ARCHITECTURE.md, The life of one queue entry).
 */
import { BadInputError } from '../../protocol/errors.js';
import type { Message, ValueMap } from '../../protocol/message.js';
import { emptyMap } from '../../protocol/message.js';
import type { Cron } from './cron.js';
import { parseCron } from './cron.js';
import { TimeZone } from './time-zone.js';

/** The controls a schedule command reads; the queue keeps them to itself (QUEUE_CONTROLS). */
export const SCHEDULE_CONTROLS = ['schedule_name', 'cron', 'tz', 'overlap', 'catchup'] as const;

/** What a firing does while earlier entries of the schedule are still in the queue. */
export const Overlap = {
  /** No new entry while the previous one is pending, scheduled, waiting, delivering or retrying. */
  Skip: 'skip',
  /** A new entry at every firing. */
  Allow: 'allow',
  /** At most one entry waiting behind the one in progress; further firings are skipped. */
  BufferOne: 'buffer_one',
} as const;
export type Overlap = (typeof Overlap)[keyof typeof Overlap];

/** What a restart does about firings missed while the queue was down. */
export const Catchup = {
  /** Nothing: the next firing is the next one from now. */
  None: 'none',
  /** One entry at once for all the missed firings together. */
  One: 'one',
} as const;
export type Catchup = (typeof Catchup)[keyof typeof Catchup];

/** Longest schedule name: like an idempotency key, room for a UUID and a prefix. */
const MAX_NAME_LENGTH = 200;
/** Printable ASCII without spaces at either end: names travel in HTTP headers and are shown in lists. */
const NAME = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** A checked `schedule` request. */
export interface ScheduleRequest {
  name: string;
  cron: Cron;
  zone: TimeZone;
  overlap: Overlap;
  catchup: Catchup;
  /** What every firing enqueues: the request without the schedule's controls and `command`. */
  message: Message;
}

/** The single value of a control, or undefined when absent; throws for a list of several. */
function single(controls: ValueMap, name: string): string | undefined {
  if (!Object.hasOwn(controls, name)) return undefined;
  const values = controls[name] ?? [];
  if (values.length > 1) throw new BadInputError(`control ${name} takes one value, got ${values.length}`);
  return (values[0] ?? '').trim();
}

function oneOf<T extends string>(controls: ValueMap, name: string, accepted: Record<string, T>, fallback: T): T {
  const text = single(controls, name);
  if (text === undefined || text === '') return fallback;
  const found = Object.values(accepted).find((v) => v === text.toLowerCase());
  if (!found)
    throw new BadInputError(`control ${name} '${text}' is not known; use one of ${Object.values(accepted).join(', ')}`);
  return found;
}

/** The `schedule_name` control; 400 when absent, empty, overlong or unprintable. */
export function scheduleNameOf(controls: ValueMap): string {
  const name = single(controls, 'schedule_name');
  if (name === undefined || name === '') throw new BadInputError('control schedule_name is missing; name the schedule');
  if (name.length > MAX_NAME_LENGTH)
    throw new BadInputError(
      `control schedule_name is ${name.length} characters long; it may be at most ${MAX_NAME_LENGTH}`,
    );
  if (!NAME.test(name)) throw new BadInputError('control schedule_name may hold printable ASCII characters only');
  return name;
}

/** Reads a `schedule` command; throws BadInputError (400) naming the control that is wrong. */
export function parseScheduleRequest(message: Message): ScheduleRequest {
  const c = message.Control;
  const name = scheduleNameOf(c);
  const cronText = single(c, 'cron');
  if (cronText === undefined || cronText === '')
    throw new BadInputError("control cron is missing; give a cron expression such as '*/5 * * * *'");
  if (Object.hasOwn(c, 'template_define'))
    throw new BadInputError('control template_define cannot be scheduled: a firing enqueues the request as one entry');
  const cron = parseCron(cronText);
  const zone = TimeZone.of(single(c, 'tz') || 'UTC');
  const control = emptyMap();
  const own = new Set<string>([...SCHEDULE_CONTROLS, 'command']);
  for (const [k, v] of Object.entries(c)) if (!own.has(k)) control[k] = v;
  return {
    name,
    cron,
    zone,
    overlap: oneOf(c, 'overlap', Overlap, Overlap.Skip),
    catchup: oneOf(c, 'catchup', Catchup, Catchup.None),
    message: { Class: message.Class, Operation: message.Operation, Control: control, Data: message.Data },
  };
}
