/**
 * The journal's filters (page /journal and GET /api/journal): by service (an actor path under
 * /node/<service>), by event, and by time (`since` / `until`, RFC 3339 or a duration back from now).
 */
import { parseDuration } from '../../config/values.js';
import { BadInputError } from '../../protocol/errors.js';
import type { JournalEntry } from '../../supervisors/journal.js';
import { JournalEvent } from '../../supervisors/journal.js';

export interface JournalQuery {
  service?: string;
  event?: string;
  since?: number;
  until?: number;
}

function timeOf(text: string, name: string, now: number): number {
  const t = Date.parse(text);
  if (Number.isFinite(t) && /\d{4}-\d\d-\d\d/.test(text)) return t;
  try {
    return now - parseDuration(text);
  } catch {
    throw new BadInputError(
      `${name} '${text.slice(0, 60)}' is neither a time (2026-01-02T15:04:05Z) nor a duration back from now (15m, 2h)`,
    );
  }
}

export function journalQueryOf(params: URLSearchParams, now = Date.now()): JournalQuery {
  const text = (n: string): string | undefined => params.get(n)?.trim() || undefined;
  const event = text('event');
  if (event !== undefined && !(Object.values(JournalEvent) as string[]).includes(event))
    throw new BadInputError(`event must be one of ${Object.values(JournalEvent).join(', ')}, got '${event}'`);
  const since = text('since');
  const until = text('until');
  return {
    ...(text('service') ? { service: text('service') } : {}),
    ...(event ? { event } : {}),
    ...(since ? { since: timeOf(since, 'since', now) } : {}),
    ...(until ? { until: timeOf(until, 'until', now) } : {}),
  };
}

/** The entries that match, newest first. */
export function selectJournal(entries: readonly JournalEntry[], q: JournalQuery): JournalEntry[] {
  const prefix = q.service === undefined ? undefined : `/node/${q.service}`;
  return entries
    .filter((e) => {
      if (prefix !== undefined && e.path !== prefix && !e.path.startsWith(`${prefix}/`)) return false;
      if (q.event !== undefined && e.event !== q.event) return false;
      const t = Date.parse(e.time);
      return (q.since === undefined || t >= q.since) && (q.until === undefined || t <= q.until);
    })
    .reverse();
}
