/**
 * The database's own list of the columns of a table, read when a name must be checked and cached per
 * table. SQLite reads a double-quoted name that is no column as a string literal, so an unknown column
 * would otherwise come back as its own name; the other engines would fail the statement later, per
 * message. A table not found (or a column missing from the cached list) is read again once, so tables
 * and columns created after the start are found.
 *
 * Per engine: SQLite `pragma_table_info` (the schema, when given, must be an attached database) and,
 * for tables with one, the rowid names;
 * PostgreSQL `pg_attribute` of `to_regclass` (resolved through the search_path like the statement
 * itself); MySQL/MariaDB and SQL Server `information_schema.columns` of the current database/schema;
 * Oracle `ALL_TAB_COLUMNS` of the current schema.
 */
import type { Database } from './database.js';
import type { Dialect } from './dialect.js';
import { quoteName } from './dialect.js';
import type { TableRef } from './identifiers.js';

/** SQLite's rowid names, which a table has unless it is WITHOUT ROWID (not listed by table_info). */
const SQLITE_ROWID =
  "SELECT r.name FROM pragma_table_list($p1) AS l, (SELECT 'rowid' AS name UNION ALL SELECT 'oid' UNION ALL SELECT '_rowid_') AS r WHERE l.wr = 0";

/** A catalog query: text for `Database.run` and its bound values. */
export interface CatalogQuery {
  sql: string;
  bind: Record<string, string | null>;
}

/** Quoted names compare exactly on PostgreSQL and Oracle; the others compare identifiers without case. */
export function foldName(dialect: Dialect, name: string): string {
  return dialect === 'postgres' || dialect === 'oracle' ? name : name.toLowerCase();
}

export function tableText(t: TableRef): string {
  return t.schema === undefined ? t.name : `${t.schema}.${t.name}`;
}

/** The query listing the columns of one table (rows with one key, `name`). */
export function columnsQuery(dialect: Dialect, t: TableRef): CatalogQuery {
  const schema = t.schema ?? null;
  switch (dialect) {
    case 'sqlite':
      return schema === null
        ? {
            sql: `SELECT name FROM pragma_table_info($p1) UNION ALL ${SQLITE_ROWID} AND l.type = 'table'`,
            bind: { p1: t.name },
          }
        : {
            sql: `SELECT p.name AS name FROM pragma_database_list AS d, pragma_table_info($p1, d.name) AS p WHERE d.name = $p2 COLLATE NOCASE UNION ALL ${SQLITE_ROWID} AND l.type = 'table' AND l.schema = $p2 COLLATE NOCASE`,
            bind: { p1: t.name, p2: schema },
          };
    case 'postgres':
      return {
        sql: 'SELECT attname AS name FROM pg_catalog.pg_attribute WHERE attrelid = to_regclass($p1) AND attnum > 0 AND NOT attisdropped',
        bind: { p1: quoteName('postgres', tableText(t)) },
      };
    case 'mysql':
      return {
        sql: 'SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE($p1, DATABASE()) AND TABLE_NAME = $p2',
        bind: { p1: schema, p2: t.name },
      };
    case 'mssql':
      return {
        sql: 'SELECT COLUMN_NAME AS name FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = COALESCE($p1, SCHEMA_NAME()) AND TABLE_NAME = $p2',
        bind: { p1: schema, p2: t.name },
      };
    case 'oracle':
      return {
        sql: "SELECT COLUMN_NAME AS \"name\" FROM ALL_TAB_COLUMNS WHERE OWNER = COALESCE($p1, SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA')) AND TABLE_NAME = $p2",
        bind: { p1: schema, p2: t.name },
      };
  }
}

/**
 * The query listing the columns of each unique key of a table (rows `idx`, `col`) that an UPSERT's
 * conflict target can name, on the engines whose UPSERT needs one: PostgreSQL and SQLite (ON CONFLICT
 * (keys) must match a PRIMARY KEY or UNIQUE constraint exactly, else every statement fails) and
 * MySQL/MariaDB (ON DUPLICATE KEY fires on a unique key; without one on the key columns every row is
 * inserted anew). Partial and expression indexes are left out: a conflict target of plain columns
 * does not match them. Undefined for SQL Server and Oracle, whose MERGE needs no constraint.
 */
function uniqueKeysQuery(dialect: Dialect, t: TableRef): CatalogQuery | undefined {
  const schema = t.schema ?? null;
  switch (dialect) {
    case 'sqlite':
      // an INTEGER PRIMARY KEY is the rowid and has no index of its own: table_info's pk lists it
      return schema === null
        ? {
            sql: 'SELECT \'pk\' AS idx, name AS col FROM pragma_table_info($p1) WHERE pk > 0 UNION ALL SELECT l.name AS idx, i.name AS col FROM pragma_index_list($p1) AS l, pragma_index_info(l.name) AS i WHERE l."unique" = 1 AND l.partial = 0',
            bind: { p1: t.name },
          }
        : undefined;
    case 'postgres':
      return {
        sql: 'SELECT i.indexrelid::text AS idx, a.attname AS col FROM pg_catalog.pg_index i JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = to_regclass($p1) AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL',
        bind: { p1: quoteName('postgres', tableText(t)) },
      };
    case 'mysql':
      return {
        sql: 'SELECT INDEX_NAME AS idx, COLUMN_NAME AS col FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = COALESCE($p1, DATABASE()) AND TABLE_NAME = $p2 AND NON_UNIQUE = 0 AND COLUMN_NAME IS NOT NULL',
        bind: { p1: schema, p2: t.name },
      };
    case 'mssql':
    case 'oracle':
      return undefined;
  }
}

/** The columns of a table (folded per dialect), or undefined when the database has no such table. */
export type TableColumns = ReadonlySet<string> | undefined;

export class Catalog {
  private readonly tables = new Map<string, Promise<TableColumns>>();

  constructor(private readonly db: Database) {}

  /**
   * The columns of `t`: the cached list when `found` accepts it, else read again (once per call; a
   * list just read is not read twice). Failures of the database reject (502 and the like).
   */
  async lookup(t: TableRef, found: (columns: TableColumns) => boolean): Promise<TableColumns> {
    const key = foldName(this.db.dialect, tableText(t));
    const cached = this.tables.get(key);
    if (cached) {
      const columns = await cached;
      if (found(columns)) return columns;
    }
    return this.load(key, t);
  }

  private load(key: string, t: TableRef): Promise<TableColumns> {
    const read = this.read(t);
    this.tables.set(key, read);
    // a failed read is not remembered: the next check asks the database again
    read.catch(() => this.tables.get(key) === read && this.tables.delete(key));
    return read;
  }

  /**
   * The column sets of a table's unique keys (folded per dialect), read each time (only at start, once
   * per configured UPSERT); undefined where the engine's UPSERT needs none or the schema is not one
   * this query reads (an attached SQLite database).
   */
  async uniqueKeys(t: TableRef): Promise<Array<ReadonlySet<string>> | undefined> {
    const q = uniqueKeysQuery(this.db.dialect, t);
    if (q === undefined) return undefined;
    const outcome = await this.db.runOwn('query', q.sql, q.bind);
    const byIndex = new Map<string, Set<string>>();
    for (const r of 'rows' in outcome ? outcome.rows : []) {
      const idx = String(r.idx);
      const cols = byIndex.get(idx) ?? new Set<string>();
      cols.add(foldName(this.db.dialect, String(r.col)));
      byIndex.set(idx, cols);
    }
    return [...byIndex.values()];
  }

  private async read(t: TableRef): Promise<TableColumns> {
    const q = columnsQuery(this.db.dialect, t);
    const outcome = await this.db.runOwn('query', q.sql, q.bind);
    const rows = 'rows' in outcome ? outcome.rows : [];
    if (rows.length === 0) return undefined;
    return new Set(rows.map((r) => foldName(this.db.dialect, String(r.name))));
  }
}
