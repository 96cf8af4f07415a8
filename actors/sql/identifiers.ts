/**
 * Identifier lists from configuration or controls (table, columns, GROUP BY, ORDER BY), validated
 * against a strict grammar and quoted per dialect. Only what the grammar below allows reaches SQL
 * text; anything else is an Error (the caller makes it a ConfigError at start or a 400 for a control).
 *
 *   table    := name ['.' name] [[AS] alias]
 *   column   := '*' | name '.*' | name ['.' name] [AS alias] | FN '(' ('*' | name ['.' name]) ')' [AS alias]
 *   FN       := COUNT | SUM | MIN | MAX | AVG
 *   group by := name ['.' name] {',' …}
 *   order by := name ['.' name] [ASC | DESC] {',' …}
 *
 * Quoting makes names case-sensitive on PostgreSQL (write them in lower case, as unquoted names are
 * stored) and Oracle (write them in upper case); MySQL, SQL Server and SQLite compare as configured.
 */
import type { Dialect } from './dialect.js';
import { quoteName, quotePart } from './dialect.js';

export interface SelectColumns {
  /** The select list as SQL text. */
  sql: string;
  /** Row keys the engine will report for named columns (alias, or the column's last part); '*' for a star. */
  keys: string[];
}

const AGGREGATES = new Set(['COUNT', 'SUM', 'MIN', 'MAX', 'AVG']);
const NAME = '[A-Za-z_][A-Za-z0-9_]*(?:\\s*\\.\\s*[A-Za-z_][A-Za-z0-9_]*)?';
const ALIAS = '[A-Za-z_][A-Za-z0-9_]*';
const COLUMN = new RegExp(`^(?:([A-Za-z]+)\\s*\\(\\s*(\\*|${NAME})\\s*\\)|(${NAME})|(${ALIAS})\\s*\\.\\s*\\*|(\\*))(?:\\s+AS\\s+(${ALIAS}))?$`, 'i');
const TABLE = new RegExp(`^(${NAME})(?:\\s+(?:AS\\s+)?(${ALIAS}))?$`, 'i');
const ORDER_ITEM = new RegExp(`^(${NAME})(?:\\s+(ASC|DESC))?$`, 'i');
const GROUP_ITEM = new RegExp(`^${NAME}$`);

/** Identifier text is printable ASCII: no line breaks, NULs or look-alike letters. */
function printable(text: string, what: string): void {
  if (/[^\x20-\x7e]/.test(text)) throw new Error(`${what} ${JSON.stringify(text)} may hold only printable ASCII characters`);
}

function items(text: string, what: string): string[] {
  printable(text, what);
  const list = text.split(',').map((s) => s.trim());
  if (list.some((s) => s === '')) throw new Error(`${what} '${text}' has an empty item`);
  return list;
}

const compact = (name: string): string => name.replace(/\s+/g, '');

function lastPart(name: string): string {
  const parts = compact(name).split('.');
  return parts[parts.length - 1]!;
}

/** A table name, optionally schema-qualified, with an optional alias (written without AS, which Oracle refuses). */
export function quoteTable(dialect: Dialect, text: string): string {
  printable(text, 'table');
  const t = text.trim();
  const m = TABLE.exec(t);
  if (!m || t === '') throw new Error(`table '${text}' is not a (schema.)table name with an optional alias`);
  const alias = m[2];
  if (alias !== undefined && alias.toUpperCase() === 'AS') throw new Error(`table '${text}' has no alias after AS`);
  return quoteName(dialect, compact(m[1]!)) + (alias !== undefined ? ` ${quotePart(dialect, alias)}` : '');
}

/** The SELECT list: '' means '*'. */
export function quoteSelectColumns(dialect: Dialect, text: string): SelectColumns {
  if (text.trim() === '') return { sql: '*', keys: ['*'] };
  const sql: string[] = [];
  const keys: string[] = [];
  for (const item of items(text, 'column list')) {
    const m = COLUMN.exec(item);
    if (!m) throw new Error(`column '${item}' is not a column name, table.column, table.*, *, or COUNT/SUM/MIN/MAX/AVG(column) with an optional AS alias`);
    const [, fn, arg, name, starTable, , alias] = m;
    const as = alias !== undefined ? ` AS ${quotePart(dialect, alias)}` : '';
    if (fn !== undefined) {
      const upper = fn.toUpperCase();
      if (!AGGREGATES.has(upper)) throw new Error(`function '${fn}' is not allowed in a column list (COUNT, SUM, MIN, MAX, AVG are)`);
      if (arg === '*' && upper !== 'COUNT') throw new Error(`${fn}(*) is not valid SQL; only COUNT(*) is`);
      sql.push(`${upper}(${arg === '*' ? '*' : quoteName(dialect, compact(arg!))})${as}`);
      keys.push(alias ?? `${upper}(${arg})`);
    } else if (name !== undefined) {
      sql.push(`${quoteName(dialect, compact(name))}${as}`);
      keys.push(alias ?? lastPart(name));
    } else {
      if (alias !== undefined) throw new Error(`'${item}': a star cannot have an alias`);
      sql.push(starTable !== undefined ? `${quotePart(dialect, starTable)}.*` : '*');
      keys.push('*');
    }
  }
  return { sql: sql.join(', '), keys };
}

/** Plain column names (INSERT, UPDATE): no qualification, functions or stars. */
export function quotePlainColumns(dialect: Dialect, text: string): { quoted: string[]; names: string[] } {
  if (text.trim() === '') throw new Error('a column list is required');
  const names = items(text, 'column list');
  return { quoted: names.map((n) => quotePart(dialect, n)), names };
}

export function quoteGroupBy(dialect: Dialect, text: string): string {
  return items(text, 'GROUP BY list')
    .map((n) => {
      if (!GROUP_ITEM.test(n)) throw new Error(`GROUP BY item '${n}' is not a column name or table.column`);
      return quoteName(dialect, compact(n));
    })
    .join(', ');
}

export function quoteOrderBy(dialect: Dialect, text: string): string {
  return items(text, 'ORDER BY list')
    .map((item) => {
      const m = ORDER_ITEM.exec(item);
      if (!m) throw new Error(`ORDER BY item '${item}' is not a column name or table.column with an optional ASC or DESC`);
      return quoteName(dialect, compact(m[1]!)) + (m[2] !== undefined ? ` ${m[2].toUpperCase()}` : '');
    })
    .join(', ');
}
