/**
 * Parsers of parameter values from text (environment, command line, node files). Each throws a plain
 * Error with the reason; the resolver adds the parameter name and where the value came from.
 */

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/** How a control naming a duration tells the user what it accepts. */
export const ACCEPTED_DURATION = 'a duration such as 250ms, 20s, 5m, 1h, 30d or 1m30s (a plain number is seconds)';

/** Parses `250ms`, `20s`, `5m`, `1h`, `30d` (days of 24 h: retentions are written so), `1m30s`; a plain number is in `unit` (seconds by default). */
export function parseDuration(text: string, unit: 's' | 'ms' = 's'): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * (unit === 's' ? 1000 : 1));
  if (t === '') throw new Error('a duration is required, for example 250ms, 20s, 5m or 1h');
  let total = 0;
  let pos = 0;
  while (pos < t.length) {
    DURATION_PART.lastIndex = pos;
    const m = DURATION_PART.exec(t);
    if (!m) throw new Error(`'${text}' is not a duration; use for example 250ms, 20s, 5m, 1h, 30d or 1m30s`);
    total += Number(m[1]) * DURATION_UNITS[m[2] as string]!;
    pos = DURATION_PART.lastIndex;
  }
  return Math.round(total);
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on', 'y', 't']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off', 'n', 'f', '']);

/** Parses a boolean-like value ('TRUE', 'false', 1, 0, yes, no, on, off). */
export function parseBool(text: string): boolean {
  const t = text.trim().toLowerCase();
  if (TRUE_WORDS.has(t)) return true;
  if (FALSE_WORDS.has(t)) return false;
  throw new Error(`'${text}' is not a boolean; use true or false`);
}

/** Parses a whole number within optional bounds. */
export function parseInt10(text: string, min?: number, max?: number): number {
  const t = text.trim();
  if (!/^[-+]?\d+$/.test(t)) throw new Error(`'${text}' is not a whole number`);
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw new Error(`'${text}' is too large`);
  if (min !== undefined && n < min) throw new Error(`${n} is below the minimum ${min}`);
  if (max !== undefined && n > max) throw new Error(`${n} is above the maximum ${max}`);
  return n;
}

/** Splits a list parameter on commas or semicolons, trimming blanks (ControlAllowList style). */
export function splitList(text: string): string[] {
  return text
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Splits CR LF separated `Name: value` lines (ResponseHeaders, Headers). */
export function splitHeaderLines(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const raw of text.split(/\r\n|\n|\\r\\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`header line '${line}' is not of the form 'Name: value'`);
    out.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return out;
}
