/**
 * A service's status figures as short readable texts, for the dashboard page and `hivenode status`
 * alike: `inFlight 0`, `pool 1 of 2 connections in use, 1 idle, 0 waiting`, `poller polls 12,
 * emitted 3, …`. /api/status keeps the raw JSON for programs; people get these.
 */

/** Figures shown elsewhere (the services table has a channel column). */
const SHOWN_ELSEWHERE: ReadonlySet<string> = new Set(['channel']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A connection pool as the SQL service reports it (Sequelize's pool: open, idle, in use, waiting). */
function poolText(pool: Record<string, unknown>): string | undefined {
  const { size, available, using, waiting } = pool;
  if (Object.keys(pool).length === 0) return 'no connection open yet';
  if (
    typeof size !== 'number' ||
    typeof available !== 'number' ||
    typeof using !== 'number' ||
    typeof waiting !== 'number'
  )
    return undefined;
  return `${using} of ${size} connection${size === 1 ? '' : 's'} in use, ${available} idle, ${waiting} request${waiting === 1 ? '' : 's'} waiting`;
}

function valueText(value: unknown): string {
  if (isRecord(value)) return `(${entriesText(value)})`;
  if (Array.isArray(value)) return value.map(valueText).join(', ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value);
}

function entriesText(figures: Record<string, unknown>): string {
  return Object.entries(figures)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k} ${valueText(v)}`)
    .join(', ');
}

/** One text per figure of a service's status, in the service's order. */
export function figureTexts(status: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(status)) {
    if (SHOWN_ELSEWHERE.has(key) || value === undefined || value === null) continue;
    const pool = key === 'pool' && isRecord(value) ? poolText(value) : undefined;
    out.push(
      pool !== undefined
        ? `pool ${pool}`
        : isRecord(value)
          ? `${key}: ${entriesText(value)}`
          : `${key} ${valueText(value)}`,
    );
  }
  return out;
}
