/**
 * Cron expressions for queue schedules (schedules.ts): 5 fields (minute hour day-of-month month
 * day-of-week) or 6 with seconds first; `*`, lists, ranges, steps (`*\/5`, `1-10/2`, `5/15`), month
 * and weekday names (JAN–DEC, SUN–SAT; day-of-week 7 is Sunday too) and the macros @yearly,
 * @annually, @monthly, @weekly, @daily, @midnight and @hourly. As in Vixie cron, when day-of-month
 * and day-of-week are both restricted (neither starts with `*`) a day matching either one fires.
 *
 * Next firings are computed in the schedule's zone (time-zone.ts). Daylight saving time follows
 * Vixie cron: a "wildcard" expression (its minute or hour field starts with `*`) follows real time —
 * local times the clocks skip do not happen, a repeated hour fires again. A fixed-time expression
 * (a named minute and hour, such as `30 2 * * *`) fires once per local time: a skipped time fires
 * at the instant the clocks jump (the first valid time after the gap, once however many skipped
 * times it stands for), a repeated time only at its first occurrence.
 */
import { BadInputError } from '../../protocol/errors.js';
import type { TimeZone } from './time-zone.js';

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: 'day-of-month', min: 1, max: 31 };
const MONTH: FieldSpec = {
  name: 'month',
  min: 1,
  max: 12,
  names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
};
/** 0–7, both 0 and 7 Sunday. */
const DAY_OF_WEEK: FieldSpec = {
  name: 'day-of-week',
  min: 0,
  max: 7,
  names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
};

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** How far ahead a firing is looked for: past the longest gap between two 29ths of February (2096 to 2104). */
const HORIZON_MS = (8 * 366 + 2) * 86_400_000;

/** A parsed cron expression. */
export interface Cron {
  readonly source: string;
  readonly hasSeconds: boolean;
  readonly second: ReadonlySet<number>;
  readonly minute: ReadonlySet<number>;
  readonly hour: ReadonlySet<number>;
  readonly dayOfMonth: ReadonlySet<number>;
  readonly month: ReadonlySet<number>;
  /** 0–6, Sunday 0. */
  readonly dayOfWeek: ReadonlySet<number>;
  /** Both day fields restricted: a day matching either fires (else both must match). */
  readonly eitherDay: boolean;
  /** Vixie's fixed-time job (minute and hour named): once per local time across DST changes. */
  readonly fixedTime: boolean;
}

function fail(source: string, field: FieldSpec, value: string, why: string): never {
  throw new BadInputError(`control cron '${source}': ${field.name} field '${value}' ${why}`);
}

function valueOf(source: string, field: FieldSpec, text: string, whole: string): number {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + (field === MONTH ? 1 : 0);
  if (!/^\d+$/.test(text))
    fail(
      source,
      field,
      whole,
      `is not a number${field.names ? ' or a name' : ''} (accepted: ${field.min}-${field.max}${field.names ? `, ${field.names[0]}-${field.names[field.names.length - 1]}` : ''})`,
    );
  const n = Number(text);
  if (n < field.min || n > field.max) fail(source, field, whole, `is out of range ${field.min}-${field.max}`);
  return n;
}

/** One field: a comma list of `*`, `n`, `a-b`, each optionally `/step` (`n/step` runs to the field's end). */
function parseField(source: string, field: FieldSpec, text: string): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    const m = /^([^/]*)(?:\/(.*))?$/.exec(item)!;
    const [, range = '', stepText] = m;
    if (range === '') fail(source, field, text, 'has an empty item');
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1)
        fail(source, field, item, 'has a step that is not a whole number of at least 1');
      step = Number(stepText);
      if (step > field.max - field.min + 1)
        fail(source, field, item, `has a step beyond the field's span ${field.min}-${field.max}`);
    }
    let from = field.min;
    let to = field.max;
    if (range !== '*' && range !== '?') {
      const dash = range.indexOf('-', 1);
      from = valueOf(source, field, dash < 0 ? range : range.slice(0, dash), item);
      to = dash < 0 ? (stepText === undefined ? from : field.max) : valueOf(source, field, range.slice(dash + 1), item);
      if (from > to) fail(source, field, item, `is a range that runs backwards (${from} to ${to})`);
    } else if (range === '?' && field !== DAY_OF_MONTH && field !== DAY_OF_WEEK) {
      fail(source, field, item, "uses '?', which only the day fields take");
    }
    for (let v = from; v <= to; v += step) out.add(field === DAY_OF_WEEK && v === 7 ? 0 : v);
  }
  return out;
}

/** Unrestricted in Vixie's sense: the field starts with `*` (or `?`). */
const starred = (text: string): boolean => text.startsWith('*') || text.startsWith('?');

/** Parses a cron expression; throws BadInputError (400) naming the field and the value it refuses. */
export function parseCron(expression: string): Cron {
  const source = expression.trim();
  const text = MACROS[source.toLowerCase()] ?? source;
  if (source.startsWith('@') && !Object.hasOwn(MACROS, source.toLowerCase())) {
    throw new BadInputError(
      `control cron '${source}' is not a known macro; use one of ${Object.keys(MACROS).join(', ')}`,
    );
  }
  const fields = text.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5 && fields.length !== 6) {
    throw new BadInputError(
      `control cron '${source}' has ${fields.length} field(s); give 5 (minute hour day-of-month month day-of-week) or 6 (second first)`,
    );
  }
  const hasSeconds = fields.length === 6;
  const [sec, min, hour, dom, month, dow] = hasSeconds ? fields : ['0', ...fields];
  return {
    source,
    hasSeconds,
    second: parseField(source, SECOND, sec!),
    minute: parseField(source, MINUTE, min!),
    hour: parseField(source, HOUR, hour!),
    dayOfMonth: parseField(source, DAY_OF_MONTH, dom!),
    month: parseField(source, MONTH, month!),
    dayOfWeek: parseField(source, DAY_OF_WEEK, dow!),
    eitherDay: !starred(dom!) && !starred(dow!),
    fixedTime: !starred(min!) && !starred(hour!),
  };
}

function dayMatches(cron: Cron, date: Date): boolean {
  const dom = cron.dayOfMonth.has(date.getUTCDate());
  const dow = cron.dayOfWeek.has(date.getUTCDay());
  return cron.eitherDay ? dom || dow : dom && dow;
}

/** The first local (naive) time at or after `from` that the expression names, or undefined before `limit`. */
function nextLocalMatch(cron: Cron, from: number, limit: number): number | undefined {
  let t = from;
  while (t <= limit) {
    const d = new Date(t);
    const [y, mo, day, h, mi, s] = [
      d.getUTCFullYear(),
      d.getUTCMonth(),
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
    ];
    if (!cron.month.has(mo + 1)) t = Date.UTC(y, mo + 1, 1);
    else if (!dayMatches(cron, d)) t = Date.UTC(y, mo, day + 1);
    else if (!cron.hour.has(h)) t = Date.UTC(y, mo, day, h + 1);
    else if (!cron.minute.has(mi)) t = Date.UTC(y, mo, day, h, mi + 1);
    else if (!cron.second.has(s)) t = Date.UTC(y, mo, day, h, mi, s + 1);
    else return t;
  }
  return undefined;
}

/**
 * The first firing strictly after `after` (epoch ms) in `zone`, or undefined when the expression
 * names no time within eight years (such as 30 February).
 */
export function nextFiring(cron: Cron, zone: TimeZone, after: number): number | undefined {
  const unit = cron.hasSeconds ? 1000 : 60_000;
  // start low enough to see the second pass of an hour the clocks repeat soon; earlier times are skipped below
  const low = Math.floor(after / 1000) * 1000 + Math.min(zone.offsetAt(after), zone.offsetAt(after + 86_400_000));
  const limit = low + HORIZON_MS;
  /** A second occurrence of a repeated local time: a first occurrence of a later local time may still come sooner. */
  let pending: number | undefined;
  for (let from = Math.floor(low / unit) * unit; ;) {
    const local = nextLocalMatch(cron, from, limit);
    if (local === undefined) return pending;
    from = local + unit;
    const at = zone.instantsOf(local);
    if (pending !== undefined) {
      // first occurrences rise with local time; once past the repeated hour, nothing beats `pending`
      if (at.kind !== 'two') return pending;
      if (at.first > after) return Math.min(pending, at.first);
      continue;
    }
    if (at.kind === 'one') {
      if (at.at > after) return at.at;
    } else if (at.kind === 'gap') {
      if (cron.fixedTime && at.transition > after) return at.transition;
    } else if (at.first > after) {
      return at.first;
    } else if (!cron.fixedTime && at.second > after) {
      pending = at.second;
    }
  }
}
