/**
 * SQL result shapes (docs/ARCHITECTURE.md, Result shapes). Rows (SELECT, raw query, poll): Data has one
 * key per column whose list holds that column's value of every row as a string (NULL → '', dates as
 * ISO 8601, binary as base64, JSON values as JSON text), plus `rowcount`; List holds the rows as
 * objects with native JSON types (null kept, dates as ISO strings, binary as base64, integers
 * beyond 2^53 as strings) so they survive the NATS wire unchanged. Writes: Data `affected`, and
 * `insertid` where the engine reports one (MySQL/MariaDB AUTO_INCREMENT, SQLite rowid). Multi-row
 * writes (SQL_BATCH, UPSERT): `affected`, and for an UPSERT `inserted` and `updated` where the engine
 * tells them apart (rows.ts).
 */
import { isForbiddenKey } from '../../protocol/message.js';
import type { Result, ValueMap } from '../../protocol/message.js';
import { emptyMap, success } from '../../protocol/message.js';

export type Row = Record<string, unknown>;

/** A value as JSON carries it. */
function jsonValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  return v;
}

/** A value as one string of a Data list. */
export function textValue(v: unknown): string {
  const j = jsonValue(v);
  if (j === null) return '';
  if (typeof j === 'string') return j;
  if (typeof j === 'object') return JSON.stringify(j);
  return String(j);
}

/** The Result of rows; `columns` (from the engine's field list) names columns even when no row came back. */
export function rowsResult(rows: readonly Row[], columns: readonly string[] = []): Result {
  const data: ValueMap = emptyMap();
  let keys = columns;
  const first = rows[0];
  if (first) {
    // columns the engine did not name (SQLite and MariaDB name none) come from the first row
    const unnamed = Object.keys(first).filter((k) => !columns.includes(k));
    if (unnamed.length > 0) keys = columns.length === 0 ? unnamed : [...columns, ...unnamed];
  }
  // a column named like a forbidden key ('__proto__') is reported under a prefixed name
  const names = keys.some(isForbiddenKey) ? keys.map((k) => (isForbiddenKey(k) ? `_${k}` : k)) : keys;
  const list: Row[] = new Array<Row>(rows.length);
  const lists: string[][] = new Array<string[]>(names.length);
  for (let c = 0; c < names.length; c++) data[names[c]!] = lists[c] = new Array<string>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const out: Row = {};
    for (let c = 0; c < keys.length; c++) {
      const v = row[keys[c]!];
      lists[c]![r] = textValue(v);
      out[names[c]!] = jsonValue(v);
    }
    list[r] = out;
  }
  data.rowcount = [String(rows.length)];
  return success(data, list);
}

/** The Result of a write. */
export function writeResult(affected: number, insertId?: number | string): Result {
  const data = emptyMap();
  data.affected = [String(affected)];
  if (insertId !== undefined) data.insertid = [String(insertId)];
  return success(data, []);
}

/** The Result of the statements of one multi-row write: their rows summed; counts only if every statement gave them. */
export function rowsWrittenResult(
  outcomes: readonly { affected: number; inserted?: number; updated?: number }[],
): Result {
  let affected = 0;
  let inserted: number | undefined = 0;
  let updated: number | undefined = 0;
  for (const o of outcomes) {
    affected += o.affected;
    inserted = inserted === undefined || o.inserted === undefined ? undefined : inserted + o.inserted;
    updated = updated === undefined || o.updated === undefined ? undefined : updated + o.updated;
  }
  const result = writeResult(affected);
  if (outcomes.length > 0 && inserted !== undefined && updated !== undefined) {
    result.Data.inserted = [String(inserted)];
    result.Data.updated = [String(updated)];
  }
  return result;
}
