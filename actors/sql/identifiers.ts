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
const COLUMN = new RegExp(
  `^(?:([A-Za-z]+)\\s*\\(\\s*(\\*|${NAME})\\s*\\)|(${NAME})|(${ALIAS})\\s*\\.\\s*\\*|(\\*))(?:\\s+AS\\s+(${ALIAS}))?$`,
  'i',
);
const TABLE = new RegExp(`^(${NAME})(?:\\s+(?:AS\\s+)?(${ALIAS}))?$`, 'i');
const ORDER_ITEM = new RegExp(`^(${NAME})(?:\\s+(ASC|DESC))?$`, 'i');
const GROUP_ITEM = new RegExp(`^${NAME}$`);

/** Identifier text is printable ASCII: no line breaks, NULs or look-alike letters. */
function printable(text: string, what: string): void {
  if (/[^\x20-\x7e]/.test(text))
    throw new Error(`${what} ${JSON.stringify(text)} may hold only printable ASCII characters`);
}

function items(text: string, what: string): string[] {
  printable(text, what);
  const list = text.split(',').map((s) => s.trim());
  if (list.some((s) => s === '')) throw new Error(`${what} '${text}' has an empty item`);
  return list;
}

const compact = (name: string): string => name.replace(/\s+/g, '');

/** A table as written: optional schema, name, optional alias. */
export interface TableRef {
  schema?: string;
  name: string;
  alias?: string;
}

/** A column as written: optional table (or alias) qualifier and the column name. */
export interface ColumnRef {
  qualifier?: string;
  name: string;
}

/** One item of a select list. */
export type SelectItem =
  | { kind: 'column'; column: ColumnRef; fn?: string; alias?: string }
  | { kind: 'count'; alias?: string }
  | { kind: 'star'; qualifier?: string };

function columnRef(name: string): ColumnRef {
  const parts = compact(name).split('.');
  return parts.length === 2 ? { qualifier: parts[0]!, name: parts[1]! } : { name: parts[0]! };
}

const quoteColumn = (dialect: Dialect, c: ColumnRef): string =>
  quoteName(dialect, c.qualifier === undefined ? c.name : `${c.qualifier}.${c.name}`);

/** A table name, optionally schema-qualified, with an optional alias. */
export function parseTable(text: string): TableRef {
  printable(text, 'table');
  const t = text.trim();
  const m = TABLE.exec(t);
  if (!m || t === '') throw new Error(`table '${text}' is not a (schema.)table name with an optional alias`);
  const alias = m[2];
  if (alias !== undefined && alias.toUpperCase() === 'AS') throw new Error(`table '${text}' has no alias after AS`);
  const parts = compact(m[1]!).split('.');
  const ref: TableRef = parts.length === 2 ? { schema: parts[0]!, name: parts[1]! } : { name: parts[0]! };
  if (alias !== undefined) ref.alias = alias;
  return ref;
}

/** A table name with an optional alias (written without AS, which Oracle refuses). */
export function quoteTable(dialect: Dialect, text: string): string {
  const t = parseTable(text);
  return (
    quoteName(dialect, t.schema === undefined ? t.name : `${t.schema}.${t.name}`) +
    (t.alias !== undefined ? ` ${quotePart(dialect, t.alias)}` : '')
  );
}

/** The items of a select list: '' means '*'. */
export function parseSelectColumns(text: string): SelectItem[] {
  if (text.trim() === '') return [{ kind: 'star' }];
  return items(text, 'column list').map((item): SelectItem => {
    const m = COLUMN.exec(item);
    if (!m)
      throw new Error(
        `column '${item}' is not a column name, table.column, table.*, *, or COUNT/SUM/MIN/MAX/AVG(column) with an optional AS alias`,
      );
    const [, fn, arg, name, starTable, , alias] = m;
    const as = alias !== undefined ? { alias } : {};
    if (fn !== undefined) {
      const upper = fn.toUpperCase();
      if (!AGGREGATES.has(upper))
        throw new Error(`function '${fn}' is not allowed in a column list (COUNT, SUM, MIN, MAX, AVG are)`);
      if (arg === '*' && upper !== 'COUNT') throw new Error(`${fn}(*) is not valid SQL; only COUNT(*) is`);
      return arg === '*' ? { kind: 'count', ...as } : { kind: 'column', column: columnRef(arg!), fn: upper, ...as };
    }
    if (name !== undefined) return { kind: 'column', column: columnRef(name), ...as };
    if (alias !== undefined) throw new Error(`'${item}': a star cannot have an alias`);
    return starTable !== undefined ? { kind: 'star', qualifier: starTable } : { kind: 'star' };
  });
}

/** The SELECT list: '' means '*'. */
export function quoteSelectColumns(dialect: Dialect, text: string): SelectColumns {
  const sql: string[] = [];
  const keys: string[] = [];
  for (const item of parseSelectColumns(text)) {
    const as = item.kind !== 'star' && item.alias !== undefined ? ` AS ${quotePart(dialect, item.alias)}` : '';
    if (item.kind === 'count') {
      sql.push(`COUNT(*)${as}`);
      keys.push(item.alias ?? 'COUNT(*)');
    } else if (item.kind === 'column' && item.fn !== undefined) {
      sql.push(`${item.fn}(${quoteColumn(dialect, item.column)})${as}`);
      keys.push(
        item.alias ??
          `${item.fn}(${item.column.qualifier === undefined ? '' : `${item.column.qualifier}.`}${item.column.name})`,
      );
    } else if (item.kind === 'column') {
      sql.push(`${quoteColumn(dialect, item.column)}${as}`);
      keys.push(item.alias ?? item.column.name);
    } else {
      sql.push(item.qualifier !== undefined ? `${quotePart(dialect, item.qualifier)}.*` : '*');
      keys.push('*');
    }
  }
  return { sql: sql.join(', '), keys };
}

/** Plain column names (INSERT, UPDATE): no qualification, functions or stars. */
export function parsePlainColumns(text: string): string[] {
  if (text.trim() === '') throw new Error('a column list is required');
  return items(text, 'column list');
}

export function quotePlainColumns(dialect: Dialect, text: string): { quoted: string[]; names: string[] } {
  const names = parsePlainColumns(text);
  return { quoted: names.map((n) => quotePart(dialect, n)), names };
}

export function parseGroupBy(text: string): ColumnRef[] {
  return items(text, 'GROUP BY list').map((n) => {
    if (!GROUP_ITEM.test(n)) throw new Error(`GROUP BY item '${n}' is not a column name or table.column`);
    return columnRef(n);
  });
}

export function quoteGroupBy(dialect: Dialect, text: string): string {
  return parseGroupBy(text)
    .map((c) => quoteColumn(dialect, c))
    .join(', ');
}

export function parseOrderBy(text: string): { column: ColumnRef; direction?: 'ASC' | 'DESC' }[] {
  return items(text, 'ORDER BY list').map((item) => {
    const m = ORDER_ITEM.exec(item);
    if (!m)
      throw new Error(`ORDER BY item '${item}' is not a column name or table.column with an optional ASC or DESC`);
    return m[2] !== undefined
      ? { column: columnRef(m[1]!), direction: m[2].toUpperCase() as 'ASC' | 'DESC' }
      : { column: columnRef(m[1]!) };
  });
}

export function quoteOrderBy(dialect: Dialect, text: string): string {
  return parseOrderBy(text)
    .map((o) => quoteColumn(dialect, o.column) + (o.direction !== undefined ? ` ${o.direction}` : ''))
    .join(', ');
}
