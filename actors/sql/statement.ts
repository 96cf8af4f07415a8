/**
 * Builds the statement of one configuration (the parameters after any control overrides) into SQL
 * text with bind markers plus the list of Data names that fill them. Identifiers are validated and
 * quoted (identifiers.ts), clause text keeps its placeholders as bound parameters (placeholders.ts),
 * and nothing from a message's Data ever becomes text. Errors name the parameter at fault.
 */
import type { Dialect } from './dialect.js';
import { lexOptions, limitClause, quoteName } from './dialect.js';
import { quoteGroupBy, quoteOrderBy, quotePlainColumns, quoteSelectColumns, quoteTable } from './identifiers.js';
import { hasStatementSeparator, splitStatements, stripLeadingComments } from './lexer.js';
import type { StatementNames } from './names.js';
import { statementNames } from './names.js';
import type { Clause, ParamSource } from './placeholders.js';
import { PLACEHOLDER_NAME, StatementText, parseClause } from './placeholders.js';
import { RowsStatement } from './rows.js';
import { describeError } from '../../protocol/errors.js';

import { STATEMENTS } from './names.js';
import type { StatementKind } from './names.js';

export type { StatementKind };

/** What a plan does, which decides how its result is read. */
export type PlanKind = StatementKind | 'exec' | 'query';

/** The parameters a statement is built from (configuration, possibly overridden by controls). */
export interface StatementSettings {
  SQL_STATEMENT: string;
  SQL_TABLE: string;
  SQL_COLUMNS: string;
  SQL_JOIN: string;
  SQL_WHERE: string;
  SQL_VALUEPARAMS: string;
  SQL_GROUPBY: string;
  SQL_HAVING: string;
  SQL_ORDERBY: string;
  SQL_LIMIT: string;
  SQL_OFFSET: string;
  /** UPSERT's key columns (not overridable by a control; absent = none). */
  SQL_KEYCOLUMNS?: string;
}

export interface RawSettings {
  SQL_RAWACTION: string;
  SQL_RAWVALUE: string;
}

/** A built statement: text for `sequelize.query` (with `$pN` markers) and where each value comes from. */
export interface Plan {
  kind: PlanKind;
  sql: string;
  params: ParamSource[];
  /** The tables and columns it names (not for raw SQL), checked against the catalog before it runs. */
  names?: StatementNames;
  /** INSERT and UPSERT: the statement for any number of rows (SQL_BATCH; an UPSERT always runs as one). */
  rows?: RowsStatement;
}

/** A configuration error in one parameter (a ConfigError at start, a 400 for a control override). */
export class SettingError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

function at<T>(param: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof SettingError) throw e;
    throw new SettingError(param, describeError(e));
  }
}

/** The statement kind of a SQL_STATEMENT value (any case). */
export function statementKind(value: string): StatementKind {
  const kind = value.trim().toLowerCase();
  if (!(STATEMENTS as readonly string[]).includes(kind))
    throw new SettingError('SQL_STATEMENT', `'${value}' is not one of SELECT, INSERT, UPDATE, DELETE, UPSERT`);
  return kind as StatementKind;
}

/** Clause text with placeholders; `keyword` (WHERE, HAVING) may be written at its start and is dropped. */
function clauseOf(dialect: Dialect, param: string, text: string, keyword?: string): Clause | undefined {
  return at(param, () => {
    let t = text.trim();
    if (keyword) t = t.replace(new RegExp(`^${keyword}\\b`, 'i'), '').trim();
    if (t === '') return undefined;
    // one statement only: clause text is spliced into the generated statement
    if (hasStatementSeparator(t, lexOptions(dialect)))
      throw new Error("a ';' outside quotes is not allowed in clause text");
    return parseClause(t, lexOptions(dialect));
  });
}

/**
 * LIMIT/OFFSET: a non-negative integer literal (validated digits, safe to write as text), or one
 * `{{ name }}` placeholder, returned as `{{name}}` and bound as a number once the clause is laid out.
 */
function countOf(param: string, text: string): string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (/^\d{1,15}$/.test(t)) return String(Number(t));
  const m = /^\{\{\s*([^{}]*?)\s*\}\}$/.exec(t);
  if (!m || !PLACEHOLDER_NAME.test(m[1]!))
    throw new SettingError(param, `'${text}' is neither a non-negative whole number nor a {{ name }} placeholder`);
  return `{{${m[1]}}}`;
}

/** Extra condition and ordering the poller adds to follow a tracked column. */
export interface Tracking {
  /** Validated column name (may be table.column). */
  column: string;
  /** Data name holding the last value seen; undefined on the first poll. */
  after?: string;
}

function buildSelect(dialect: Dialect, s: StatementSettings, st: StatementText, tracking?: Tracking): void {
  const table = at('SQL_TABLE', () => quoteTable(dialect, s.SQL_TABLE));
  const columns = at('SQL_COLUMNS', () => quoteSelectColumns(dialect, s.SQL_COLUMNS));
  const join = clauseOf(dialect, 'SQL_JOIN', s.SQL_JOIN);
  const where = clauseOf(dialect, 'SQL_WHERE', s.SQL_WHERE, 'WHERE');
  const groupBy =
    s.SQL_GROUPBY.trim() === '' ? undefined : at('SQL_GROUPBY', () => quoteGroupBy(dialect, s.SQL_GROUPBY));
  const having = clauseOf(dialect, 'SQL_HAVING', s.SQL_HAVING, 'HAVING');
  if (having && !groupBy) throw new SettingError('SQL_HAVING', 'HAVING needs SQL_GROUPBY');
  let orderBy = s.SQL_ORDERBY.trim() === '' ? undefined : at('SQL_ORDERBY', () => quoteOrderBy(dialect, s.SQL_ORDERBY));
  const limit = countOf('SQL_LIMIT', s.SQL_LIMIT);
  const offset = countOf('SQL_OFFSET', s.SQL_OFFSET);
  const trackColumn = tracking ? at('SQL_TRACKCOLUMN', () => quoteName(dialect, tracking.column.trim())) : undefined;
  if (trackColumn) orderBy = trackColumn;

  st.text(`SELECT ${columns.sql} FROM ${table}`);
  if (join) {
    // the keyword may be left out: 'orders ON orders.uid = users.id' reads as a plain JOIN
    const first = join.parts[0];
    const startsWithJoin =
      first &&
      'text' in first &&
      /^\s*(?:(?:INNER|LEFT|RIGHT|FULL|CROSS|NATURAL|JOIN|STRAIGHT_JOIN|OUTER)\b|,)/i.test(first.text);
    st.text(startsWithJoin ? ' ' : ' JOIN ').clause(join, 'SQL_JOIN');
  }
  if (where || tracking?.after !== undefined) {
    st.text(' WHERE ');
    if (where) st.text('(').clause(where, 'SQL_WHERE').text(')');
    if (where && tracking?.after !== undefined) st.text(' AND ');
    if (tracking?.after !== undefined) st.text(`${trackColumn} > `).param(tracking.after, 'SQL_TRACKCOLUMN');
  }
  if (groupBy) st.text(` GROUP BY ${groupBy}`);
  if (having) st.text(' HAVING ').clause(having, 'SQL_HAVING');
  if (orderBy) st.text(` ORDER BY ${orderBy}`);
  const clause = limitClause(dialect, limit, offset, orderBy !== undefined);
  // LIMIT/OFFSET placeholders were written as {{name}}: split them back into bound numbers
  for (const piece of clause.split(/(\{\{[^{}]+\}\})/)) {
    const m = /^\{\{([^{}]+)\}\}$/.exec(piece);
    if (m) st.param(m[1]!, limit === piece ? 'SQL_LIMIT' : 'SQL_OFFSET', 'count');
    else if (piece !== '') st.text(piece);
  }
}

function valueNames(s: StatementSettings, columns: number): string[] {
  return at('SQL_VALUEPARAMS', () => {
    const names = s.SQL_VALUEPARAMS.split(',').map((n) => n.trim());
    if (s.SQL_VALUEPARAMS.trim() === '' || names.some((n) => n === ''))
      throw new Error('a comma-separated list of Data names is required');
    for (const n of names)
      if (!PLACEHOLDER_NAME.test(n)) throw new Error(`'${n}' is not a Data name (letters, digits, _ . -)`);
    if (names.length !== columns)
      throw new Error(
        `${names.length} value parameters for ${columns} columns of SQL_COLUMNS; they pair up by position`,
      );
    return names;
  });
}

/** Builds a SELECT, INSERT, UPDATE, DELETE or UPSERT. */
export function buildStatement(dialect: Dialect, s: StatementSettings, tracking?: Tracking): Plan {
  const kind = statementKind(s.SQL_STATEMENT);
  const st = new StatementText();
  let rows: RowsStatement | undefined;
  if (kind === 'select') {
    buildSelect(dialect, s, st, tracking);
  } else if (kind === 'insert' || kind === 'upsert') {
    at('SQL_TABLE', () => quoteTable(dialect, s.SQL_TABLE));
    const columns = at('SQL_COLUMNS', () => quotePlainColumns(dialect, s.SQL_COLUMNS));
    const names = valueNames(s, columns.quoted.length);
    rows = at(
      'SQL_KEYCOLUMNS',
      () =>
        new RowsStatement(dialect, kind, {
          table: s.SQL_TABLE,
          columns: columns.names,
          names,
          keyColumns: s.SQL_KEYCOLUMNS,
        }),
    );
    if (kind === 'upsert') {
      // the one-row text for the log; `params` only name its values: an UPSERT always runs through `rows`
      const params = names.map((name, i): ParamSource => ({
        key: `p${i + 1}`,
        name,
        use: 'SQL_VALUEPARAMS',
        kind: 'value',
      }));
      const checked = statementNames(dialect, s, kind);
      checked.conflictKeys = rows.keys.map((i) => columns.names[i]!);
      return { kind, sql: rows.sql(1), params, names: checked, rows };
    }
    // the rows statement's table: no alias, which no engine takes after INSERT INTO without AS (and MySQL not at all)
    st.text(`INSERT INTO ${rows.table} (${columns.quoted.join(', ')}) VALUES (`);
    names.forEach((n, i) => {
      if (i > 0) st.text(', ');
      st.param(n, 'SQL_VALUEPARAMS');
    });
    st.text(')');
  } else {
    const table = at('SQL_TABLE', () => quoteTable(dialect, s.SQL_TABLE));
    if (kind === 'update') {
      const columns = at('SQL_COLUMNS', () => quotePlainColumns(dialect, s.SQL_COLUMNS));
      const names = valueNames(s, columns.quoted.length);
      st.text(`UPDATE ${table} SET `);
      columns.quoted.forEach((c, i) => {
        if (i > 0) st.text(', ');
        st.text(`${c} = `).param(names[i]!, 'SQL_VALUEPARAMS');
      });
    } else {
      st.text(`DELETE FROM ${table}`);
    }
    const where = clauseOf(dialect, 'SQL_WHERE', s.SQL_WHERE, 'WHERE');
    if (where) st.text(' WHERE ').clause(where, 'SQL_WHERE');
  }
  const plan: Plan = {
    kind,
    sql: st.build(),
    params: st.params,
    names: statementNames(dialect, s, kind, tracking?.column),
  };
  if (rows) plan.rows = rows;
  return plan;
}

/** The SQL_RAWACTION value as a plan kind. */
export function rawAction(value: string): 'exec' | 'query' {
  const action = value.trim().toLowerCase();
  if (action !== 'exec' && action !== 'query')
    throw new SettingError('SQL_RAWACTION', `'${value}' is neither 'exec' nor 'query'`);
  return action;
}

/** One raw statement (leading comments already dropped): its placeholders bound, `use` naming it in errors. */
export function rawStatement(dialect: Dialect, kind: 'exec' | 'query', text: string, use = 'SQL_RAWVALUE'): Plan {
  const clause = parseClause(text, lexOptions(dialect));
  const st = new StatementText().clause(clause, use);
  return { kind, sql: st.build(), params: st.params };
}

/** Builds a raw statement: the text as configured, placeholders bound. */
export function buildRaw(dialect: Dialect, s: RawSettings): Plan {
  const action = rawAction(s.SQL_RAWACTION);
  const text = at('SQL_RAWVALUE', () => stripLeadingComments(s.SQL_RAWVALUE, lexOptions(dialect)).trim());
  if (text === '') throw new SettingError('SQL_RAWVALUE', 'raw mode needs the SQL text');
  // one statement only: SQLite's driver runs the first of several and drops the rest without a word,
  // PostgreSQL runs them all unless there are placeholders; neither is what a user can rely on
  const count = at('SQL_RAWVALUE', () => splitStatements(text, lexOptions(dialect)).length);
  if (count > 1)
    throw new SettingError(
      'SQL_RAWVALUE',
      `holds ${count} statements separated by ';': raw mode runs one; set SQL_RAWTRANSACTION to true to run them all in one transaction`,
    );
  return at('SQL_RAWVALUE', () => rawStatement(dialect, action, text));
}
