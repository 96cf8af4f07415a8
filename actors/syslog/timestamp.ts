/**
 * Syslog timestamps in and out. Everything received is reported as ISO 8601 in UTC with
 * milliseconds (`2024-03-15T09:00:00.000Z`): one unambiguous, sortable form on a 24-hour clock,
 * whatever the sender wrote (syslog-pro's 12-hour clock is why this is ours,
 * docs/ARCHITECTURE.md, Library choices). A timestamp without a zone (BSD, or ISO without offset)
 * is read in the receiving host's local zone, as RFC 3164 says it is the sender's local time and
 * the receiver has nothing better.
 */

/** Month abbreviations of BSD timestamps, index = JS month. */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const MONTH_INDEX: ReadonlyMap<string, number> = new Map(MONTHS.map((m, i) => [m.toLowerCase(), i]));

/** The JS month (0..11) of a three-letter abbreviation in any case, or undefined. */
export function monthIndex(abbrev: string): number | undefined {
  return MONTH_INDEX.get(abbrev.toLowerCase());
}

/** Calendar fields as written in a message; month is 0-based like JS. */
export interface ClockFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
}

function inRange(f: ClockFields): boolean {
  // a leap second (60) is folded into :59 rather than refused: the event still happened
  return (
    f.year >= 0 &&
    f.year <= 9999 &&
    f.month >= 0 &&
    f.month <= 11 &&
    f.day >= 1 &&
    f.day <= 31 &&
    f.hour <= 23 &&
    f.minute <= 59 &&
    f.second <= 60 &&
    f.ms >= 0 &&
    f.ms <= 999
  );
}

/** Milliseconds since the epoch of fields in UTC, or undefined when the date does not exist (Feb 30). */
export function utcMillis(f: ClockFields): number | undefined {
  if (!inRange(f)) return undefined;
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999
  d.setUTCFullYear(f.year, f.month, f.day);
  if (d.getUTCMonth() !== f.month || d.getUTCDate() !== f.day) return undefined;
  d.setUTCHours(f.hour, f.minute, Math.min(f.second, 59), f.ms);
  return d.getTime();
}

/** Milliseconds since the epoch of fields in the local zone, or undefined when the date does not exist. */
export function localMillis(f: ClockFields): number | undefined {
  if (!inRange(f)) return undefined;
  const d = new Date(2000, 0, 1);
  d.setFullYear(f.year, f.month, f.day);
  if (d.getMonth() !== f.month || d.getDate() !== f.day) return undefined;
  d.setHours(f.hour, f.minute, Math.min(f.second, 59), f.ms);
  return d.getTime();
}

/** Fraction digits → whole milliseconds, truncated (never rounded up into the next second). */
export function fractionMs(digits: string | undefined): number {
  return digits ? Number(digits.slice(0, 3).padEnd(3, '0')) : 0;
}

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: outside them toISOString writes six-digit years. */
const MIN_ISO_MS = -62_167_219_200_000;
const MAX_ISO_MS = 253_402_300_799_999;

/** The ISO 8601 UTC text of an instant, or '' when it is not a valid date with a four-digit year. */
export function isoOf(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < MIN_ISO_MS || ms > MAX_ISO_MS) return '';
  return new Date(ms).toISOString();
}

/** Minutes east of UTC of an offset `Z`, `+hh:mm`, `-hhmm` or `+hh`; undefined when malformed. */
export function offsetMinutes(text: string): number | undefined {
  if (text === 'Z' || text === 'z') return 0;
  const m = /^([+-])(\d{2})(?::?(\d{2}))?$/.exec(text);
  if (!m) return undefined;
  const h = Number(m[2]);
  const mi = Number(m[3] ?? '0');
  if (h > 23 || mi > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (h * 60 + mi);
}

/** RFC 5424 §6.2.3: uppercase T and Z, 1..6 fraction digits, an offset always present. */
const RFC3339_STRICT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})$/;
/** What real senders write in RFC 3164 headers: nanoseconds, `+0100`, no offset, lowercase t/z. */
const RFC3339_LENIENT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * The instant of an RFC 3339 timestamp, or undefined when it is not one (or names no real date).
 * Strict mode is RFC 5424's grammar; lenient mode also takes a missing offset (local time).
 */
export function parseRfc3339(text: string, strict: boolean): number | undefined {
  const m = (strict ? RFC3339_STRICT : RFC3339_LENIENT).exec(text);
  if (!m) return undefined;
  const f: ClockFields = {
    year: Number(m[1]),
    month: Number(m[2]) - 1,
    day: Number(m[3]),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: Number(m[6]),
    ms: fractionMs(m[7]),
  };
  if (m[8] === undefined) return localMillis(f);
  const off = offsetMinutes(m[8]);
  const utc = utcMillis(f);
  return off === undefined || utc === undefined ? undefined : utc - off * 60_000;
}

/**
 * The minute last read by strictIso: its text up to the minutes, its offset as written, and the ISO
 * text of that minute in UTC up to the colon before the seconds. An offset is whole minutes, so the
 * seconds and fraction of a timestamp in that minute are the same in UTC.
 */
let minuteText = '';
let minuteZone = '';
let minuteIso = '';

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * An RFC 5424 TIMESTAMP as ISO 8601 in UTC with milliseconds (parseRfc3339 strict, then isoOf), or
 * undefined when it is not one. A sender writes the same minute and offset message after message:
 * then only the seconds and fraction are read (the minute was checked when first seen), instead of
 * a regular expression, a Date and toISOString for each message (a sixth of the receiver's CPU).
 */
export function strictIso(text: string): string | undefined {
  const n = text.length;
  if (
    minuteText !== '' &&
    n > 19 &&
    text.startsWith(minuteText) &&
    text.endsWith(minuteZone) &&
    text.charCodeAt(16) === 58
  ) {
    const s1 = text.charCodeAt(17);
    const s2 = text.charCodeAt(18);
    const end = n - minuteZone.length;
    if (isDigit(s1) && isDigit(s2)) {
      const second = (s1 - 48) * 10 + (s2 - 48);
      let ms = -1;
      if (end === 19) ms = 0;
      else if (text.charCodeAt(19) === 46 && end > 20 && end <= 26) {
        ms = 0;
        for (let i = 20; i < end; i++) {
          const c = text.charCodeAt(i);
          if (!isDigit(c)) {
            ms = -1;
            break;
          }
          if (i < 23) ms = ms * 10 + (c - 48);
        }
        // fewer than three digits: .5 is 500 ms, .05 is 50 ms
        if (ms >= 0) for (let i = end; i < 23; i++) ms *= 10;
      }
      // a leap second (60) is folded into :59, as utcMillis does
      if (ms >= 0 && second <= 60) return `${minuteIso}${two(Math.min(second, 59))}.${String(ms).padStart(3, '0')}Z`;
    }
  }
  const ms = parseRfc3339(text, true);
  if (ms === undefined) return undefined;
  const iso = isoOf(ms);
  // remembered only in the shape the quick path reads: seconds at 17, the offset at the end
  const zone = text.endsWith('Z') ? 'Z' : text.slice(-6);
  if (iso !== '' && text.charCodeAt(16) === 58) {
    minuteText = text.slice(0, 16);
    minuteZone = zone;
    minuteIso = iso.slice(0, 17);
  }
  return iso;
}

const two = (n: number): string => String(n).padStart(2, '0');

/** `Mmm dd HH:MM:SS` in the local zone: 24-hour clock, the day padded with a space (RFC 3164 §4.1.2). */
export function formatBsdTimestamp(d: Date): string {
  return `${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2, ' ')} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** RFC 3339 with milliseconds and the local offset (`2024-03-05T17:04:09.123+01:00`), as RFC 5424 wants. */
export function formatRfc3339(d: Date): string {
  const off = -d.getTimezoneOffset();
  const abs = Math.abs(off);
  const year = String(d.getFullYear()).padStart(4, '0');
  const ms = String(d.getMilliseconds()).padStart(3, '0');
  return `${year}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${ms}${off >= 0 ? '+' : '-'}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}
