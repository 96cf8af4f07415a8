/**
 * The tables and columns a built statement names, for the checks against the database's catalog and
 * the override allow-lists (name-check.ts). Only what the planner writes as identifiers is listed —
 * SQL_TABLE, SQL_COLUMNS, SQL_GROUPBY, SQL_ORDERBY, SQL_TRACKCOLUMN; clause text (SQL_WHERE, SQL_HAVING)
 * is the configuration's own SQL and the engine checks it. The tables of SQL_JOIN are read as far as
 * plain `JOIN name [alias]` goes, only to know which table a qualified column belongs to; a join the
 * reader cannot follow (a subquery, a quoted name) leaves its columns unchecked rather than refused.
 */
import type { Dialect } from './dialect.js';
import { lexOptions } from './dialect.js';
import type { ColumnRef, TableRef } from './identifiers.js';
import { parseGroupBy, parseOrderBy, parsePlainColumns, parseSelectColumns, parseTable } from './identifiers.js';
import { lexSql } from './lexer.js';

/** The statements of README, The SQL service (SQL_STATEMENT) and UPSERT (beyond it); declared here, where names are read by statement, and used by statement.ts. */
export const STATEMENTS = ['select', 'insert', 'update', 'delete', 'upsert'] as const;
export type StatementKind = (typeof STATEMENTS)[number];

/** A column named by one parameter. */
interface ColumnUse {
  param: string;
  column: ColumnRef;
}

export interface StatementNames {
  table?: TableRef;
  /** Tables of SQL_JOIN; `joinsComplete` is false when the join text names something not read here. */
  joins: TableRef[];
  joinsComplete: boolean;
  columns: ColumnUse[];
  /** Parameters that select every column of a table ('*', 't.*'). */
  stars: string[];
  /** An UPSERT's key columns (SQL_KEYCOLUMNS, unquoted): the engine's conflict target, checked against its unique keys. */
  conflictKeys?: readonly string[];
}

const JOIN_WORDS = new Set([
  'ON',
  'USING',
  'JOIN',
  'INNER',
  'LEFT',
  'RIGHT',
  'FULL',
  'OUTER',
  'CROSS',
  'NATURAL',
  'STRAIGHT_JOIN',
  'WHERE',
  'LATERAL',
]);
const TABLE_AT =
  /^\s*([A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)?)(?:\s+(?:AS\s+)?([A-Za-z_][A-Za-z0-9_]*))?/i;
const LEADING_JOIN = /^\s*(?:(?:INNER|LEFT|RIGHT|FULL|CROSS|NATURAL|JOIN|STRAIGHT_JOIN|OUTER)\b|,)/i;

/** The tables a join clause names: after each JOIN, after each top-level comma, and at the start. */
export function joinTables(dialect: Dialect, text: string): { tables: TableRef[]; complete: boolean } {
  if (text.trim() === '') return { tables: [], complete: true };
  // literals and quoted names become a marker no table pattern matches, so 'JOIN x' in a string is no table
  const code = lexSql(text, lexOptions(dialect))
    .map((s) => (s.kind === 'code' ? s.text : s.kind === 'comment' ? ' ' : ' \u0001 '))
    .join('');
  const starts: number[] = LEADING_JOIN.test(code) ? [] : [0];
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (depth === 0 && c === ',') starts.push(i + 1);
    else if (depth === 0 && /^JOIN\b/i.test(code.slice(i, i + 5)) && (i === 0 || /[^A-Za-z0-9_]/.test(code[i - 1]!)))
      starts.push(i + 4);
  }
  const tables: TableRef[] = [];
  let complete = true;
  for (const at of starts) {
    const m = TABLE_AT.exec(code.slice(at));
    if (!m) {
      complete = false;
      continue;
    }
    try {
      const alias = m[2] !== undefined && !JOIN_WORDS.has(m[2].toUpperCase()) ? ` ${m[2]}` : '';
      tables.push(parseTable(`${m[1]!}${alias}`));
    } catch {
      complete = false;
    }
  }
  return { tables, complete };
}

/** The names of a SELECT, INSERT, UPDATE, DELETE or UPSERT (kind undefined: the statement comes from a control, read the columns as a select list). */
export function statementNames(
  dialect: Dialect,
  s: { SQL_TABLE: string; SQL_COLUMNS: string; SQL_JOIN: string; SQL_GROUPBY: string; SQL_ORDERBY: string },
  kind: StatementKind | undefined,
  trackColumn?: string,
): StatementNames {
  const names: StatementNames = { joins: [], joinsComplete: true, columns: [], stars: [] };
  if (s.SQL_TABLE.trim() !== '') names.table = parseTable(s.SQL_TABLE);
  // an UPSERT's key columns are among its columns (statement.ts checks that), so these cover them
  if (kind === 'insert' || kind === 'update' || kind === 'upsert') {
    for (const name of parsePlainColumns(s.SQL_COLUMNS)) names.columns.push({ param: 'SQL_COLUMNS', column: { name } });
    return names;
  }
  if (kind === 'delete') return names;
  const aliases = new Set<string>();
  for (const item of parseSelectColumns(s.SQL_COLUMNS)) {
    if (item.kind === 'star') names.stars.push('SQL_COLUMNS');
    if (item.kind !== 'star' && item.alias !== undefined) aliases.add(item.alias.toLowerCase());
    if (item.kind === 'column') names.columns.push({ param: 'SQL_COLUMNS', column: item.column });
  }
  // GROUP BY and ORDER BY may name an alias of the select list instead of a column
  const orAlias = (param: string, c: ColumnRef): void => {
    if (c.qualifier === undefined && aliases.has(c.name.toLowerCase())) return;
    names.columns.push({ param, column: c });
  };
  if (s.SQL_GROUPBY.trim() !== '') for (const c of parseGroupBy(s.SQL_GROUPBY)) orAlias('SQL_GROUPBY', c);
  if (trackColumn !== undefined) orAlias('SQL_TRACKCOLUMN', parseGroupBy(trackColumn)[0]!);
  else if (s.SQL_ORDERBY.trim() !== '') for (const o of parseOrderBy(s.SQL_ORDERBY)) orAlias('SQL_ORDERBY', o.column);
  const joins = joinTables(dialect, s.SQL_JOIN);
  names.joins = joins.tables;
  names.joinsComplete = joins.complete;
  return names;
}
