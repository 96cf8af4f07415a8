/**
 * Delayed entries: the controls `delay` (a duration, as the configuration writes them) and
 * `not_before` (an RFC 3339 time with its zone) give the earliest time an entry is delivered. Until
 * then it is `scheduled` (docs/ARCHITECTURE.md, The life of one queue entry).
 */
import { parseDuration } from '../../config/values.js';
import { BadInputError } from '../../protocol/errors.js';
import type { ValueMap } from '../../protocol/message.js';
import { ACCEPTED_DURATION } from '../../config/values.js';

/** How far ahead an entry may be scheduled: a year and a day, so a typo (`5000h`) is refused instead of parked for ever. */
export const MAX_SCHEDULE_MS = 366 * 24 * 3_600_000;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
const ACCEPTED_TIME = 'an RFC 3339 time with its zone, such as 2030-01-02T15:04:05Z or 2030-01-02T17:04:05+02:00';
const LIMIT = 'at most 366 days ahead';

/** The epoch ms of an RFC 3339 time, or NaN; Date.parse alone would take many other shapes and roll 02-30 over to March. */
export function parseRfc3339(text: string): number {
  const m = RFC3339.exec(text.trim());
  if (!m) return NaN;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > days || hour > 23 || minute > 59 || second > 59) return NaN;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return NaN;
  return Date.parse(text.trim().replace(/[t ]/, 'T').replace(/z$/, 'Z'));
}

/**
 * The time (epoch ms) before which an entry with these controls is not delivered, or undefined when
 * neither control is given. A time in the past, or a delay of 0, means now. Throws BadInputError
 * (400) naming the control for both at once, a value it cannot read, or a time beyond the limit.
 */
export function notBeforeOf(controls: ValueMap, now: number): number | undefined {
  const hasDelay = Object.hasOwn(controls, 'delay');
  const hasTime = Object.hasOwn(controls, 'not_before');
  if (hasDelay && hasTime)
    throw new BadInputError('controls delay and not_before exclude each other; give one of them');
  if (hasDelay) {
    const text = controls.delay?.[0] ?? '';
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch {
      throw new BadInputError(`control delay '${text}' is not a duration; use ${ACCEPTED_DURATION}, ${LIMIT}`);
    }
    if (ms > MAX_SCHEDULE_MS) throw new BadInputError(`control delay '${text}' is too long; it may be ${LIMIT}`);
    return now + ms;
  }
  if (hasTime) {
    const text = controls.not_before?.[0] ?? '';
    const at = parseRfc3339(text);
    if (Number.isNaN(at))
      throw new BadInputError(`control not_before '${text}' is not a time; use ${ACCEPTED_TIME}, ${LIMIT}`);
    if (at - now > MAX_SCHEDULE_MS)
      throw new BadInputError(`control not_before '${text}' is too far ahead; it may be ${LIMIT}`);
    return at;
  }
  return undefined;
}
