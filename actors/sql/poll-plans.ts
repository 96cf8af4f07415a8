/**
 * The SELECTs of poll mode, built from the SELECT configuration at start. No message supplies Data
 * in poll mode, so placeholders in SQL_WHERE, SQL_JOIN, SQL_HAVING, SQL_LIMIT or SQL_OFFSET cannot be
 * filled and stop the start. With SQL_TRACKCOLUMN a second SELECT reads only rows beyond the last
 * emitted value, ordered by the tracked column (which replaces SQL_ORDERBY).
 */
import { ConfigError } from '../../protocol/errors.js';
import type { Dialect } from './dialect.js';
import { quoteSelectColumns } from './identifiers.js';
import type { SqlConfig } from './planner.js';
import { TRACK_PARAM } from './poller.js';
import type { Plan, StatementSettings, Tracking } from './statement.js';
import { SettingError, buildStatement } from './statement.js';
import { TrackState } from './track-state.js';

export interface PollPlans {
  first: Plan;
  tracking?: { next: Plan; key: string; state: TrackState; column: string };
  /** A warning for the log (state file ignored, SQL_ORDERBY replaced). */
  note?: string;
}

function build(dialect: Dialect, c: SqlConfig, tracking?: Tracking): Plan {
  const settings: StatementSettings = {
    SQL_STATEMENT: 'select',
    SQL_TABLE: c.SQL_TABLE,
    SQL_COLUMNS: c.SQL_COLUMNS,
    SQL_JOIN: c.SQL_JOIN,
    SQL_WHERE: c.SQL_WHERE,
    SQL_VALUEPARAMS: '',
    SQL_GROUPBY: c.SQL_GROUPBY,
    SQL_HAVING: c.SQL_HAVING,
    SQL_ORDERBY: c.SQL_ORDERBY,
    SQL_LIMIT: c.SQL_LIMIT,
    SQL_OFFSET: c.SQL_OFFSET,
  };
  let plan: Plan;
  try {
    plan = buildStatement(dialect, settings, tracking);
  } catch (e) {
    if (e instanceof SettingError) throw new ConfigError(`poll mode: ${e.param}: ${e.message}`);
    throw e;
  }
  const unfilled = plan.params.filter((p) => p.name !== TRACK_PARAM);
  if (unfilled.length > 0)
    throw new ConfigError(
      `poll mode: ${unfilled.map((p) => `{{ ${p.name} }} in ${p.use}`).join(', ')} cannot be filled: no message supplies Data to a poll`,
    );
  return plan;
}

export function pollerPlans(c: SqlConfig, dialect: Dialect): PollPlans {
  if (c.SQL_TABLE.trim() === '') throw new ConfigError('poll mode needs a SELECT configuration: SQL_TABLE is empty');
  if (c.SQL_POLLINTERVAL <= 0) throw new ConfigError('SQL_POLLINTERVAL must be above 0');
  const column = c.SQL_TRACKCOLUMN.trim();
  if (column === '') return { first: build(dialect, c) };
  const first = build(dialect, c, { column });
  const next = build(dialect, c, { column, after: TRACK_PARAM });
  // the tracked value is read from the rows: the column must be among those selected
  const parts = column.split('.');
  const key = parts[parts.length - 1]!.trim();
  const keys = quoteSelectColumns(dialect, c.SQL_COLUMNS).keys;
  if (!keys.includes('*') && !keys.includes(key))
    throw new ConfigError(
      `SQL_TRACKCOLUMN: '${column}' must be one of the selected columns (SQL_COLUMNS) so its last value can be read`,
    );
  const state = new TrackState(c.SQL_STATEFILE.trim(), column);
  const notes = [
    state.load(),
    c.SQL_ORDERBY.trim() !== ''
      ? `SQL_ORDERBY '${c.SQL_ORDERBY}' is replaced by the tracked column ${column} in poll mode`
      : undefined,
  ].filter((n): n is string => n !== undefined);
  return { first, tracking: { next, key, state, column }, ...(notes.length ? { note: notes.join('; ') } : {}) };
}
