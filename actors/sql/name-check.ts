/**
 * Which tables and columns a statement may name, and whether the database has them.
 *
 * The allow-lists bound what a message's `_CTRL` override may name: the configured table and columns,
 * plus SQL_ALLOWEDTABLES and SQL_ALLOWEDCOLUMNS. A name outside them is refused (403: the request is
 * well-formed but the configuration does not permit it, as for clause text without
 * SQL_ALLOWCLAUSECTRL), and so is every catalog table of the engine, listed or not. The allow-list is
 * checked before the catalog, so a refused name reveals nothing about what exists.
 *
 * The catalog check (asynchronous, cached per statement) makes a name the database does not have an
 * error instead of, on SQLite, a string literal answered as data: at start for the configuration,
 * before the first run for each override.
 */
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { Catalog, TableColumns } from './catalog.js';
import { foldName, tableText } from './catalog.js';
import type { Dialect } from './dialect.js';
import { quoteName } from './dialect.js';
import type { ColumnRef, TableRef } from './identifiers.js';
import { parseTable } from './identifiers.js';
import type { StatementNames } from './names.js';
import { SettingError } from './statement.js';

/** A name the allow-lists do not permit (answered 403). */
export class RefusedNameError extends SettingError {}

const CATALOG_SCHEMAS: Record<Dialect, readonly string[]> = {
  sqlite: [],
  postgres: ['information_schema'],
  mysql: ['information_schema', 'mysql', 'performance_schema', 'sys'],
  mssql: ['information_schema', 'sys'],
  oracle: ['sys', 'system'],
};

/** The engine's own tables: SQLite sqlite_*, PostgreSQL pg_* (schemas and, through the search_path, tables), information_schema and the engines' system schemas. */
function isCatalogTable(dialect: Dialect, t: TableRef): boolean {
  const schema = t.schema?.toLowerCase();
  const name = t.name.toLowerCase();
  if (schema !== undefined && CATALOG_SCHEMAS[dialect].includes(schema)) return true;
  switch (dialect) {
    case 'sqlite':
      return name.startsWith('sqlite_');
    case 'postgres':
      return schema?.startsWith('pg_') === true || (schema === undefined && name.startsWith('pg_'));
    default:
      return false;
  }
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** What overrides may name: the configured names plus the SQL_ALLOWED* lists. */
export class AllowList {
  private readonly tables = new Set<string>();
  /** Folded column names, or undefined for every column of an allowed table. */
  private readonly columns: Set<string> | undefined;

  constructor(
    private readonly dialect: Dialect,
    configured: StatementNames,
    allowed: { SQL_ALLOWEDTABLES: string; SQL_ALLOWEDCOLUMNS: string },
  ) {
    if (configured.table) this.tables.add(this.tableKey(configured.table));
    for (const text of list(allowed.SQL_ALLOWEDTABLES)) {
      let t: TableRef;
      try {
        t = parseTable(text);
        quoteName(dialect, tableText(t));
      } catch (e) {
        throw new ConfigError(`SQL_ALLOWEDTABLES: ${describeError(e)}`);
      }
      if (t.alias !== undefined)
        throw new ConfigError(`SQL_ALLOWEDTABLES: '${text}' has an alias; list table names only`);
      if (isCatalogTable(dialect, t))
        throw new ConfigError(
          `SQL_ALLOWEDTABLES: '${text}' is a catalog table of the database, which overrides may never name`,
        );
      this.tables.add(this.tableKey(t));
    }
    const extra = list(allowed.SQL_ALLOWEDCOLUMNS);
    for (const name of extra) {
      try {
        if (name !== '*') quoteName(dialect, name, 1);
      } catch (e) {
        throw new ConfigError(`SQL_ALLOWEDCOLUMNS: ${describeError(e)}`);
      }
    }
    this.columns =
      configured.stars.length > 0 || extra.includes('*')
        ? undefined
        : new Set([...configured.columns.map((c) => c.column.name), ...extra].map((n) => foldName(dialect, n)));
  }

  /** Throws RefusedNameError for a name of an overridden parameter that the lists do not permit. */
  check(names: StatementNames, overridden: ReadonlySet<string>): void {
    const t = names.table;
    if (t && overridden.has('SQL_TABLE')) {
      if (isCatalogTable(this.dialect, t))
        throw new RefusedNameError(
          'SQL_TABLE',
          `table '${tableText(t)}' is a catalog table of the database, which overrides may never name`,
        );
      if (!this.tables.has(this.tableKey(t)))
        throw new RefusedNameError(
          'SQL_TABLE',
          `table '${tableText(t)}' is neither SQL_TABLE nor listed in SQL_ALLOWEDTABLES`,
        );
    }
    if (this.columns === undefined) return;
    for (const param of names.stars) {
      if (overridden.has(param))
        throw new RefusedNameError(param, "'*' would select columns beyond SQL_ALLOWEDCOLUMNS; name the columns");
    }
    for (const { param, column } of names.columns) {
      if (overridden.has(param) && !this.columns.has(foldName(this.dialect, column.name))) {
        throw new RefusedNameError(
          param,
          `column '${column.name}' is neither configured nor listed in SQL_ALLOWEDCOLUMNS`,
        );
      }
    }
  }

  private tableKey(t: TableRef): string {
    return foldName(this.dialect, tableText(t));
  }
}

/** One table of a statement with its columns as the catalog lists them (undefined: not found). */
interface Source {
  table: TableRef;
  columns: TableColumns;
}

/** Checks statements' names against the catalog, each statement once. */
export class NameChecker {
  private readonly verified = new WeakSet<StatementNames>();

  constructor(
    private readonly dialect: Dialect,
    private readonly catalog: Catalog,
  ) {}

  /** Undefined when the names were checked before; else the check (SettingError naming the parameter). */
  check(names: StatementNames): Promise<void> | undefined {
    if (this.verified.has(names)) return undefined;
    return this.verify(names).then(() => void this.verified.add(names));
  }

  private async verify(names: StatementNames): Promise<void> {
    const sources: Source[] = [];
    if (names.table) {
      const source = { table: names.table, columns: await this.catalog.lookup(names.table, (c) => c !== undefined) };
      if (source.columns === undefined)
        throw new SettingError('SQL_TABLE', `table '${tableText(names.table)}' does not exist in the database`);
      sources.push(source);
    }
    // a join table the catalog does not list (a view elsewhere, a CTE) only leaves its columns unchecked
    for (const table of names.joins)
      sources.push({ table, columns: await this.catalog.lookup(table, (c) => c !== undefined) });
    if (names.table && names.conflictKeys) await this.verifyConflictTarget(names.table, names.conflictKeys);
    if (sources.length === 0) return;
    const readable = names.joinsComplete && sources.every((s) => s.columns !== undefined);
    for (const { param, column } of names.columns) {
      const candidates = this.candidates(sources, column);
      if (candidates === undefined) continue;
      if (candidates.length === 0 && !readable) continue;
      const name = foldName(this.dialect, column.name);
      if (candidates.some((s) => s.columns!.has(name))) continue;
      // read again: the column may have been added since the cache was filled
      for (const s of candidates) s.columns = await this.catalog.lookup(s.table, (c) => c?.has(name) === true);
      if (candidates.some((s) => s.columns?.has(name))) continue;
      if (!readable && column.qualifier === undefined) continue;
      const tables = candidates.map((s) => `'${tableText(s.table)}'`).join(', ');
      throw new SettingError(
        param,
        `'${column.qualifier === undefined ? '' : `${column.qualifier}.`}${column.name}' is not a column of table${candidates.length === 1 ? '' : 's'} ${tables}`,
      );
    }
  }

  /** An UPSERT's key columns must be exactly the columns of one of the table's unique keys. */
  private async verifyConflictTarget(table: TableRef, keyColumns: readonly string[]): Promise<void> {
    const keys = await this.catalog.uniqueKeys(table);
    if (keys === undefined) return;
    const wanted = new Set(keyColumns.map((k) => foldName(this.dialect, k)));
    if (keys.some((k) => k.size === wanted.size && [...wanted].every((c) => k.has(c)))) return;
    const known =
      keys.length === 0 ? 'it has none' : `its unique keys are ${keys.map((k) => `(${[...k].join(', ')})`).join(', ')}`;
    throw new SettingError(
      'SQL_KEYCOLUMNS',
      `(${keyColumns.join(', ')}) is not the PRIMARY KEY or a UNIQUE constraint of table '${tableText(table)}' (${known}): an UPSERT needs one on exactly its key columns`,
    );
  }

  /** The tables a column may belong to; undefined when its qualifier names no table read here. */
  private candidates(sources: Source[], column: ColumnRef): Source[] | undefined {
    const known = sources.filter((s) => s.columns !== undefined);
    if (column.qualifier === undefined) return known;
    const q = foldName(this.dialect, column.qualifier);
    const match = sources.find(
      (s) => foldName(this.dialect, s.table.alias ?? s.table.name) === q || foldName(this.dialect, s.table.name) === q,
    );
    return match?.columns === undefined ? undefined : [match];
  }
}

/** The configured names checked at start: an unknown one is a configuration error naming its parameter. */
export async function checkConfigured(checker: NameChecker, names: StatementNames | undefined): Promise<void> {
  if (!names) return;
  try {
    await checker.check(names);
  } catch (e) {
    if (e instanceof SettingError) throw new ConfigError(`${e.param}: ${e.message}`);
    throw e;
  }
}
