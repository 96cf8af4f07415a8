/** Syslog facilities and severities (RFC 5424 §6.2.1), and the sender's Data-key mapping (spec §4.5). */

export const Severity = { emergency: 0, alert: 1, critical: 2, error: 3, warning: 4, notice: 5, informational: 6, debug: 7 } as const;
export type SeverityName = keyof typeof Severity;

export const SEVERITY_NAMES: readonly SeverityName[] = ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'informational', 'debug'];

export const FACILITY_NAMES = ['kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron', 'authpriv', 'ftp', 'ntp', 'audit', 'alert', 'clock', 'local0', 'local1', 'local2', 'local3', 'local4', 'local5', 'local6', 'local7'] as const;

/** Facility of sent messages: user-level (1). */
export const USER_FACILITY = 1;

/** The severity a sender Data key maps to: error, warn, info, critical; any other key is debug. */
export function severityOfKey(key: string): number {
  switch (key) {
    case 'error':
      return Severity.error;
    case 'warn':
      return Severity.warning;
    case 'info':
      return Severity.informational;
    case 'critical':
      return Severity.critical;
    default:
      return Severity.debug;
  }
}

export function priority(facility: number, severity: number): number {
  return facility * 8 + severity;
}
