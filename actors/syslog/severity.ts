/**
 * Syslog facilities and severities (RFC 5424 §6.2.1, the same numbers as RFC 3164 §4.1.1) and the
 * sender's Data-key mapping (README, The syslog service). Received messages report facility and severity by
 * these names, so a hive route can filter on `severity: error` without knowing the numbers; the
 * number is still there in `priority`.
 */

/** Severity codes by name. */
export const Severity = {
  emergency: 0,
  alert: 1,
  critical: 2,
  error: 3,
  warning: 4,
  notice: 5,
  informational: 6,
  debug: 7,
} as const;
export type SeverityName = keyof typeof Severity;
export type SeverityCode = (typeof Severity)[SeverityName];

/** Severity names indexed by code. */
const SEVERITY_NAMES: readonly SeverityName[] = [
  'emergency',
  'alert',
  'critical',
  'error',
  'warning',
  'notice',
  'informational',
  'debug',
];

/** Facility codes by name (13 is "log audit", 14 "log alert", 15 the second clock daemon). */
export const Facility = {
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  ntp: 12,
  audit: 13,
  alert: 14,
  clock: 15,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
} as const;
export type FacilityName = keyof typeof Facility;

/** Facility names indexed by code. */
const FACILITY_NAMES: readonly FacilityName[] = Object.keys(Facility) as FacilityName[];

/** Facility of sent messages: user-level, what `logger` uses by default. */
export const USER_FACILITY = Facility.user;

/** The priority a receiver assumes when a message has none (RFC 3164 §4.3.3: user.notice). */
export const DEFAULT_PRIORITY = 13;
/** The largest valid priority: local7.debug. */
export const MAX_PRIORITY = 191;

/** The Data keys of a send request that name a severity (README, The syslog service). */
type SenderKeyName = 'error' | 'warn' | 'info' | 'critical';

const KEY_SEVERITY: Readonly<Record<SenderKeyName, SeverityCode>> = {
  error: Severity.error,
  warn: Severity.warning,
  info: Severity.informational,
  critical: Severity.critical,
};

/** The severity a sender Data key maps to: error, warn, info, critical; any other key is debug. */
export function severityOfKey(key: string): SeverityCode {
  // Object.hasOwn: a key such as 'toString' must not reach the prototype
  return Object.hasOwn(KEY_SEVERITY, key) ? KEY_SEVERITY[key as SenderKeyName] : Severity.debug;
}

/** PRI = facility × 8 + severity; out-of-range parts are a programming error, not user input. */
export function priority(facility: number, severity: number): number {
  if (!Number.isInteger(facility) || facility < 0 || facility > 23)
    throw new RangeError(`syslog facility ${facility} is not 0..23`);
  if (!Number.isInteger(severity) || severity < 0 || severity > 7)
    throw new RangeError(`syslog severity ${severity} is not 0..7`);
  return facility * 8 + severity;
}

/** The names of a priority's facility and severity (the priority is 0..191, checked by the parsers). */
export function priorityNames(pri: number): { facility: FacilityName; severity: SeverityName } {
  return { facility: FACILITY_NAMES[pri >> 3] ?? 'user', severity: SEVERITY_NAMES[pri & 7] ?? 'notice' };
}
