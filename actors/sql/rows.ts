/**
 * Multi-row INSERT and UPSERT (SQL_BATCH, SQL_STATEMENT UPSERT): the text of one statement carrying
 * R rows as bound parameters, per engine, and what the engine answers for it.
 *
 *   INSERT  postgres, mysql, sqlite, mssql: INSERT INTO t (a, b) VALUES ($p1, $p2), ($p3, $p4)
 *           oracle: INSERT INTO t (a, b) SELECT :p1 AS a, :p2 AS b FROM DUAL UNION ALL SELECT … FROM DUAL
 *           (multi-row VALUES only exists from Oracle 23; an INSERT ALL would give an identity column
 *           one value for every row)
 *   UPSERT  postgres, sqlite: INSERT … ON CONFLICT (keys) DO UPDATE SET c = excluded.c
 *           mysql/mariadb:    INSERT … ON DUPLICATE KEY UPDATE c = VALUES(c)
 *           mssql, oracle:    MERGE INTO t USING (the rows) s ON (t.key = s.key) WHEN MATCHED THEN
 *                             UPDATE … WHEN NOT MATCHED THEN INSERT …
 *
 * Rows per statement are bounded by the engine's limit on bound parameters (PostgreSQL and MySQL
 * 65535, the count fits 16 bits in their protocols; SQLite 32766, SQLITE_MAX_VARIABLE_NUMBER since
 * 3.32, the bundled library is newer; SQL Server 2100 per request, of which sp_executesql takes two;
 * Oracle 65535) and by SQL Server's 1000 row constructors in one VALUES list.
 *
 * An UPSERT answers `affected` (rows inserted or updated) and, where the engine can tell, `inserted`
 * and `updated`: PostgreSQL from the system column xmax of each returned row (0 for a row this
 * statement inserted), MySQL/MariaDB from the statement's info "Records: N  Duplicates: D" (a row
 * whose key existed counts as updated, changed or not), SQL Server from OUTPUT $action. SQLite and
 * Oracle report only the rows written.
 */
import type { Dialect } from './dialect.js';
import { quoteName, quotePart } from './dialect.js';
import { parsePlainColumns, parseTable } from './identifiers.js';
import { escapeDollars } from './placeholders.js';

/** Bound parameters one statement may carry. */
export const PARAM_LIMIT: Readonly<Record<Dialect, number>> = {
  postgres: 65535,
  mysql: 65535,
  sqlite: 32766,
  mssql: 2098,
  oracle: 65535,
};
/** Rows one statement may carry whatever the parameters: SQL Server's VALUES takes 1000 row constructors. */
const ROW_LIMIT: Readonly<Partial<Record<Dialect, number>>> = { mssql: 1000 };
/** Statement texts kept per row count: the full chunk and the sizes of recent remainders. */
const TEXT_CACHE = 16;

export type RowsKind = 'insert' | 'upsert';

/** What an UPSERT statement wrote; inserted/updated only where the engine tells them apart. */
export interface UpsertCounts {
  affected: number;
  inserted?: number;
  updated?: number;
}

/**
 * Values bound by position (Sequelize's `$1`… with an array) on the engines whose Sequelize dialect
 * numbers them as the driver does; SQL Server's and Oracle's bind by name (`$p1`…, an object).
 * Tens of thousands of values are far cheaper in an array than as the keys of one object.
 */
export const BINDS_BY_POSITION: ReadonlySet<Dialect> = new Set(['postgres', 'mysql', 'sqlite']);

/** A column-ordered INSERT or UPSERT whose text is built for any number of rows. */
export class RowsStatement {
  /** Quoted table (any alias dropped: it means nothing to an INSERT). */
  readonly table: string;
  /** Quoted columns. */
  readonly columns: readonly string[];
  /** Positions in `columns` of the key columns (UPSERT), and of the columns it updates. */
  readonly keys: readonly number[];
  readonly updates: readonly number[];
  /** The most rows one statement carries. */
  readonly maxRows: number;
  private readonly texts = new Map<number, string>();

  /**
   * `names` are the Data names filling the columns, by position; `keyColumns` the SQL_KEYCOLUMNS
   * text (UPSERT). Errors describe what is wrong; statement.ts names the parameter.
   */
  readonly names: readonly string[];

  constructor(
    readonly dialect: Dialect,
    readonly kind: RowsKind,
    shape: { table: string; columns: readonly string[]; names: readonly string[]; keyColumns?: string },
  ) {
    const { table, columns, keyColumns = '' } = shape;
    this.names = shape.names;
    const t = parseTable(table);
    this.table = quoteName(dialect, t.schema === undefined ? t.name : `${t.schema}.${t.name}`);
    this.columns = columns.map((c) => quotePart(dialect, c));
    const keys = kind === 'upsert' ? keyPositions(columns, keyColumns) : [];
    this.keys = keys;
    this.updates = columns.map((_, i) => i).filter((i) => !keys.includes(i));
    this.maxRows = Math.max(
      1,
      Math.min(Math.floor(PARAM_LIMIT[dialect] / columns.length), ROW_LIMIT[dialect] ?? Infinity),
    );
  }

  /** The text for `rows` rows (1 ≤ rows ≤ maxRows): `$1`… or `$p1`… (BINDS_BY_POSITION) bound row by row, column by column. */
  sql(rows: number): string {
    let text = this.texts.get(rows);
    if (text === undefined) {
      if (this.texts.size >= TEXT_CACHE) this.texts.clear();
      text = this.build(rows);
      this.texts.set(rows, text);
    }
    return text;
  }

  private build(rows: number): string {
    const cols = this.columns.join(', ');
    let n = 0;
    const marker = BINDS_BY_POSITION.has(this.dialect) ? '$' : '$p';
    const marks = (): string[] => this.columns.map(() => `${marker}${++n}`);
    if (this.dialect === 'oracle') {
      const selects: string[] = [];
      for (let r = 0; r < rows; r++) {
        const m = marks();
        selects.push(
          `SELECT ${r === 0 ? m.map((x, c) => `${x} AS ${this.columns[c]!}`).join(', ') : m.join(', ')} FROM DUAL`,
        );
      }
      const source = selects.join(' UNION ALL ');
      return this.kind === 'insert' ? `INSERT INTO ${this.table} (${cols}) ${source}` : this.merge(`(${source}) s`);
    }
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) tuples.push(`(${marks().join(', ')})`);
    const values = `VALUES ${tuples.join(', ')}`;
    if (this.kind === 'insert') return `INSERT INTO ${this.table} (${cols}) ${values}`;
    const keys = this.keys.map((k) => this.columns[k]!).join(', ');
    const set = (f: (c: string) => string): string =>
      this.updates.map((u) => `${this.columns[u]!} = ${f(this.columns[u]!)}`).join(', ');
    switch (this.dialect) {
      case 'postgres':
        // the counts come back as one row; xmax is 0 in a row version this statement inserted
        return `WITH hn_rows AS (INSERT INTO ${this.table} (${cols}) ${values} ON CONFLICT (${keys}) DO UPDATE SET ${set((c) => `EXCLUDED.${c}`)} RETURNING (xmax = 0) AS hn_inserted) SELECT COUNT(*) AS affected, COUNT(*) FILTER (WHERE hn_inserted) AS inserted FROM hn_rows`;
      case 'sqlite':
        return `INSERT INTO ${this.table} (${cols}) ${values} ON CONFLICT (${keys}) DO UPDATE SET ${set((c) => `excluded.${c}`)}`;
      case 'mysql':
        // INTO is optional in MySQL; without it Sequelize does not read the statement as an INSERT
        // and hands back the driver's whole result, whose info line holds Records and Duplicates
        return `INSERT ${this.table} (${cols}) ${values} ON DUPLICATE KEY UPDATE ${set((c) => `VALUES(${c})`)}`;
      case 'mssql':
        // HOLDLOCK: without it two MERGEs of the same new key can both take the NOT MATCHED branch
        // `$action` is text, not a bind marker: doubled as Sequelize expects (placeholders.ts)
        return `${this.merge(`(${values}) AS s (${cols})`, ' WITH (HOLDLOCK) AS t')} OUTPUT ${escapeDollars('$action')} AS hn_action;`;
    }
  }

  /** MERGE of a source aliased `s` into the table aliased `t`. */
  private merge(source: string, target = ' t'): string {
    const c = this.columns;
    const on = this.keys.map((k) => `t.${c[k]!} = s.${c[k]!}`).join(' AND ');
    const set = this.updates.map((u) => `t.${c[u]!} = s.${c[u]!}`).join(', ');
    return `MERGE INTO ${this.table}${target} USING ${source} ON (${on}) WHEN MATCHED THEN UPDATE SET ${set} WHEN NOT MATCHED THEN INSERT (${c.join(', ')}) VALUES (${c.map((x) => `s.${x}`).join(', ')})`;
  }
}

/** Positions of the SQL_KEYCOLUMNS columns among the statement's columns. */
function keyPositions(columns: readonly string[], keyColumns: string): number[] {
  if (keyColumns.trim() === '')
    throw new Error('UPSERT needs the key columns that identify a row (a primary key or unique constraint)');
  const keys = parsePlainColumns(keyColumns);
  const lower = columns.map((c) => c.toLowerCase());
  const missing = keys.filter((k) => !lower.includes(k.toLowerCase()));
  if (missing.length > 0)
    throw new Error(
      `${missing.map((k) => `'${k}'`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not among the columns of SQL_COLUMNS (${columns.join(', ')}); the key is written like the other columns`,
    );
  const positions = [...new Set(keys.map((k) => lower.indexOf(k.toLowerCase())))];
  if (positions.length === columns.length)
    throw new Error('every column of SQL_COLUMNS is a key column: an UPSERT needs at least one other column to update');
  return positions;
}

/**
 * The counts of one UPSERT statement from what Sequelize returned for it (a RAW
 * query); undefined where the engine reports only the rows written (SQLite, Oracle), which the
 * caller reads as for any write.
 */
export function upsertCounts(dialect: Dialect, result: unknown): UpsertCounts | undefined {
  const [first, meta] = Array.isArray(result) ? (result as [unknown, unknown]) : [undefined, undefined];
  switch (dialect) {
    case 'postgres': {
      const row = (Array.isArray(first) ? first[0] : undefined) as
        { affected?: unknown; inserted?: unknown } | undefined;
      const affected = Number(row?.affected ?? 0);
      const inserted = Number(row?.inserted ?? 0);
      return { affected, inserted, updated: affected - inserted };
    }
    case 'mysql': {
      const header = first as { info?: unknown; affectedRows?: unknown } | undefined;
      const m = typeof header?.info === 'string' ? /Records:\s*(\d+)\s+Duplicates:\s*(\d+)/.exec(header.info) : null;
      if (m) return { affected: Number(m[1]), inserted: Number(m[1]) - Number(m[2]), updated: Number(m[2]) };
      // only a one-row statement has no info line: 1 = inserted, or an unchanged row under FOUND_ROWS
      // (connection-options.ts sets it), so that one cannot be told; 2 = changed, 0 = unchanged
      if (header?.affectedRows === 1) return { affected: 1 };
      return { affected: 1, inserted: 0, updated: 1 };
    }
    case 'mssql': {
      const actions = Array.isArray(first) ? (first as { hn_action?: unknown }[]) : [];
      const inserted = actions.filter((a) => a.hn_action === 'INSERT').length;
      const updated = actions.filter((a) => a.hn_action === 'UPDATE').length;
      return { affected: typeof meta === 'number' ? meta : inserted + updated, inserted, updated };
    }
    case 'sqlite':
    case 'oracle':
      return undefined;
  }
}
