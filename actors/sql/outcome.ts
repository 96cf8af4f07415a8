/**
 * What a statement's values and results are to the SQL service, per dialect: its values as bound
 * (Bind; SQLite's numbers), the Sequelize query type that makes a dialect report what it did, and
 * the Outcome read from what Sequelize or the driver returned — rows and columns, or what a write
 * changed. Pure functions of the driver's shapes; database.ts runs the statements.
 */
import type { Dialect } from './dialect.js';
import type { Row } from './results.js';
import { upsertCounts } from './rows.js';
import type { PlanKind } from './statement.js';

/**
 * The values of a statement, as Sequelize takes them: by name (`$name` in the text, an object) or by
 * position (`$1`…, an array; multi-row statements, rows.ts).
 */
export type Bind = Record<string, unknown> | unknown[];

/** What a write produced; `inserted`/`updated` for an UPSERT where the engine tells them apart (rows.ts). */
export interface WriteOutcome {
  affected: number;
  insertId?: number;
  inserted?: number;
  updated?: number;
}

/** What a statement produced. */
export type Outcome = { rows: Row[]; columns: string[] } | WriteOutcome;

/** The Sequelize query type that makes each dialect report what a statement did (its QueryTypes' strings: the enum would load Sequelize). */
export function queryTypeOf(dialect: Dialect, kind: PlanKind, sql: string): string {
  if (kind === 'select' || kind === 'query' || dialect !== 'sqlite') return 'RAW';
  // SQLite's driver reports changes only for statements sequelize runs with `run`, chosen by type
  const verb = kind === 'exec' ? (/^\s*(insert|update|delete)\b/i.exec(sql)?.[1]?.toLowerCase() ?? 'other') : kind;
  return verb === 'insert' || verb === 'upsert'
    ? 'INSERT'
    : verb === 'update'
      ? 'BULKUPDATE'
      : verb === 'delete'
        ? 'BULKDELETE'
        : 'RAW';
}

function columnsOf(dialect: Dialect, meta: unknown): string[] {
  // PostgreSQL: pg Result (one per statement) with fields; Oracle: metaData [{ name }]; others: none
  let fields: unknown;
  if (dialect === 'postgres')
    fields = (Array.isArray(meta) ? meta[meta.length - 1] : (meta as { fields?: unknown } | undefined))?.fields;
  else if (dialect === 'oracle') fields = meta;
  if (!Array.isArray(fields)) return [];
  return fields.map((f) => (f as { name?: unknown }).name).filter((n): n is string => typeof n === 'string');
}

/**
 * SQLite compares a text value with a number as unequal (a bound '2' is never equal to COUNT(*)), and
 * every Data value is text: bind text that is exactly a number's canonical form ('42', '-1.5', not
 * '007' or '1e3') as that number. Columns with TEXT affinity turn it back into the same text.
 */
export function sqliteBind<B extends Bind>(bind: B): B {
  if (Array.isArray(bind)) return bind.map(sqliteValue) as B;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(bind)) out[k] = sqliteValue(v);
  return out as B;
}

function sqliteValue(v: unknown): unknown {
  return typeof v === 'string' && /^-?\d/.test(v) && v.length <= 16 && String(Number(v)) === v ? Number(v) : v;
}

/** Affected rows and insert id from the shapes the dialects return for writes. */
export function writeOutcome(result: unknown): WriteOutcome {
  if (typeof result === 'number') return { affected: result };
  if (!Array.isArray(result)) return { affected: 0 };
  const [first, meta] = result as [unknown, unknown];
  if (typeof meta === 'number') {
    // INSERT on MySQL ([insertId, affectedRows]) and SQLite ([lastID, changes]); MS SQL RAW ([rows, rowCount])
    return { affected: meta, ...(typeof first === 'number' && first > 0 ? { insertId: first } : {}) };
  }
  const metas = Array.isArray(meta) ? meta : [meta];
  let affected = 0;
  let insertId: number | undefined;
  for (const m of metas as Record<string, unknown>[]) {
    if (!m || typeof m !== 'object') continue;
    const n = m.rowCount ?? m.affectedRows ?? m.changes ?? m.rowsAffected;
    if (typeof n === 'number') affected += n;
    const id = m.insertId ?? m.lastID;
    if (typeof id === 'number' && id > 0) insertId = id;
  }
  return insertId === undefined ? { affected } : { affected, insertId };
}

/** The Outcome of a statement from what sequelize returned for it. */
export function outcomeOf(dialect: Dialect, kind: PlanKind, result: unknown): Outcome {
  if (kind === 'upsert') return upsertCounts(dialect, result) ?? { affected: writeOutcome(result).affected };
  if (kind !== 'select' && kind !== 'query') return writeOutcome(result);
  const [rows, meta] = Array.isArray(result) ? (result as [unknown, unknown]) : [[], undefined];
  return { rows: Array.isArray(rows) ? (rows as Row[]) : [], columns: columnsOf(dialect, meta) };
}
