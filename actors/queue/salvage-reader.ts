/**
 * Reading what is left of a damaged SQLite file (README, The queue: a damaged store), with nothing
 * but the SQLite binding the store itself uses. A table is read in rowid order, a chunk at a time;
 * a read that fails (a page of the table that is no longer a page) is retried a row at a time up to
 * the damage, and the damaged stretch is stepped over: the reader probes for the first rowid past
 * it from which the next row reads whole again, doubling its step until one reads, then halving
 * back, so a stretch costs about 2·log2(its width) reads whatever the number of rowids it spans.
 * Every read is bounded in time (an interrupted read counts as damage), and every step moves the
 * rowid forward, so the reading always ends.
 */
import { existsSync, statSync } from 'node:fs';
import sqlite3 from 'sqlite3';
import { describeError } from '../../protocol/errors.js';
import { closeDb, identifier } from './sqlite-text.js';

/** Rows per read while the table reads whole. */
const CHUNK = 1_000;
/** Rows read one by one after a chunk failed, before chunks are tried again. */
const SINGLE_ROWS = 200;
/** Longest a single read may take before it is interrupted (and its stretch counted as damaged). */
const READ_MS = 10_000;
/** Damaged stretches whose rows the table's index is asked for (more are reported without a count). */
const COUNTED_STRETCHES = 64;
/** Keys of lost rows held (the salvage forgets the idempotency keys of lost entries by them); beyond, only counted. */
const LOST_KEYS_HELD = 100_000;

/** One row as read: its rowid and the columns asked for. */
export type SalvagedRow = { rowid: number } & Record<string, unknown>;

/** A stretch of rowids, from `from` through `to`, whose rows could not be read. */
export interface DamagedStretch {
  from: number;
  /** Undefined: to the end of the table. */
  to: number | undefined;
}

/** What reading one table gave. */
export interface TableSalvage {
  table: string;
  /** Rows read whole. */
  read: number;
  stretches: DamagedStretch[];
  /**
   * Rows of the damaged stretches that the table's unique index still names, and their keys (the
   * first LOST_KEYS_HELD): undefined when the table has no such index or the index cannot be read either.
   */
  lost?: { count: number; keys: string[] };
  /** Set when not even the table's first read could be made (its schema, its root page). */
  error?: string;
}

/** A table of the damaged file: its name, creating statement, columns and single-column unique index. */
export interface DamagedTable {
  name: string;
  sql: string;
  columns: string[];
  keyIndex?: { name: string; column: string };
}

/** A message of SQLite's (quick_check gives one line per problem, some with newlines) as one line of at most 300 characters. */
const oneLine = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
};

export class DamagedFile {
  private constructor(private readonly db: sqlite3.Database) {}

  /**
   * Opens read-only, never writing to the file: with a write-ahead log beside it (commits not yet
   * copied into the file) the log is read as SQLite always does; without one the file is opened
   * immutable, so not even a -wal or -shm file is made beside it.
   */
  static open(file: string): Promise<DamagedFile> {
    const wal = `${file}-wal`;
    const hasWal = existsSync(wal) && statSync(wal).size > 0;
    const target = hasWal ? file : `file:${encodeURI(file).replace(/\?/g, '%3f').replace(/#/g, '%23')}?immutable=1`;
    const mode = sqlite3.OPEN_READONLY | (hasWal ? 0 : sqlite3.OPEN_URI);
    return new Promise((resolve, reject) => {
      const db = new sqlite3.Database(target, mode, (err) => (err ? reject(err) : resolve(new DamagedFile(db))));
    });
  }

  /** A read that is interrupted after READ_MS: a damaged file must not hold the salvage up. */
  private all<T>(sql: string): Promise<T[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.db.interrupt(), READ_MS);
      this.db.all(sql, (err, rows) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(rows as T[]);
      });
    });
  }

  /** The result of the integrity check, in one line ('ok' when it finds nothing). */
  async check(): Promise<string> {
    try {
      const rows = await this.all<{ quick_check: string }>('PRAGMA quick_check(5)');
      return oneLine(rows.map((r) => r.quick_check).join('; '));
    } catch (e) {
      return oneLine(describeError(e));
    }
  }

  /** The tables of the file (throws when its schema itself cannot be read). */
  async tables(): Promise<DamagedTable[]> {
    const master = await this.all<{ type: string; name: string; tbl_name: string; sql: string | null }>(
      'SELECT type, name, tbl_name, sql FROM sqlite_master',
    );
    const tables: DamagedTable[] = [];
    for (const t of master) {
      if (t.type !== 'table' || t.name.startsWith('sqlite_') || typeof t.sql !== 'string') continue;
      const columns = (await this.all<{ name: string }>(`PRAGMA table_info(${identifier(t.name)})`)).map((c) => c.name);
      const table: DamagedTable = { name: t.name, sql: t.sql, columns };
      for (const index of master.filter((i) => i.type === 'index' && i.tbl_name === t.name)) {
        const info = await this.all<{ name: string }>(`PRAGMA index_info(${identifier(index.name)})`).catch(() => []);
        const unique = (
          await this.all<{ name: string; unique: number; partial: number }>(
            `PRAGMA index_list(${identifier(t.name)})`,
          ).catch(() => [])
        ).some((i) => i.name === index.name && i.unique === 1 && i.partial === 0);
        if (unique && info.length === 1 && info[0]!.name) {
          table.keyIndex = { name: index.name, column: info[0]!.name };
          break;
        }
      }
      tables.push(table);
    }
    return tables;
  }

  /**
   * The next `limit` rows from rowid `from` on, whole, or the read's error. `>=`, not `> from - 1`:
   * SQLite seeks a `>` to the page where `from - 1` would be, which may be the damaged one before a
   * readable row; a `>=` seeks to the page holding `from` itself.
   */
  private async rowsFrom(table: DamagedTable, from: number, limit: number): Promise<SalvagedRow[] | Error> {
    const columns = table.columns.map(identifier).join(', ');
    try {
      return await this.all<SalvagedRow>(
        `SELECT rowid AS rowid, ${columns} FROM ${identifier(table.name)} WHERE rowid >= ${from} ORDER BY rowid LIMIT ${limit}`,
      );
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  /**
   * The end of the damage from rowid `from` on (the next row from there does not read): the least
   * rowid found from which the next row reads again, or undefined when none does up to the largest rowid.
   */
  private async stepOver(table: DamagedTable, from: number): Promise<number | undefined> {
    const reads = async (at: number): Promise<boolean> => !((await this.rowsFrom(table, at, 1)) instanceof Error);
    let bad = from;
    let good = Number.MAX_SAFE_INTEGER;
    for (let step = 1; ; step *= 2) {
      const probe = Math.min(Number.MAX_SAFE_INTEGER, bad + step);
      if (await reads(probe)) {
        good = probe;
        break;
      }
      if (probe === Number.MAX_SAFE_INTEGER) return undefined;
      bad = probe;
    }
    while (good - bad > 1) {
      const mid: number = bad + Math.floor((good - bad) / 2);
      if (await reads(mid)) good = mid;
      else bad = mid;
    }
    return good;
  }

  /**
   * Reads every row of `table` that reads whole, in rowid order, handing each batch to `onRows`
   * (awaited, so the writer sets the pace); `onProgress` hears the count now and then.
   */
  async read(
    table: DamagedTable,
    onRows: (rows: SalvagedRow[]) => Promise<void>,
    onProgress?: (read: number) => void,
  ): Promise<TableSalvage> {
    const result: TableSalvage = { table: table.name, read: 0, stretches: [] };
    let from = Number.MIN_SAFE_INTEGER;
    let singles = 0;
    let first = true;
    for (;;) {
      const limit = singles > 0 ? 1 : CHUNK;
      const rows = await this.rowsFrom(table, from, limit);
      if (rows instanceof Error && first) {
        // nothing of the table reads at all: its root page or its schema; still probe past it below
        result.error = describeError(rows);
      }
      first = false;
      if (!(rows instanceof Error)) {
        if (rows.length > 0) {
          await onRows(rows);
          result.read += rows.length;
          onProgress?.(result.read);
          from = rows[rows.length - 1]!.rowid + 1;
        }
        if (singles > 0) singles--;
        if (rows.length < limit || from > Number.MAX_SAFE_INTEGER) break;
        continue;
      }
      if (limit > 1) {
        singles = SINGLE_ROWS;
        continue;
      }
      const resume = await this.stepOver(table, from);
      result.stretches.push({ from, to: resume === undefined ? undefined : resume - 1 });
      if (resume === undefined) break;
      from = resume;
      singles = SINGLE_ROWS;
    }
    if (result.read > 0 || result.stretches.some((s) => s.to !== undefined)) delete result.error;
    if (result.stretches.length > 0) {
      const lost = await this.lostRows(table, result.stretches);
      if (lost) result.lost = lost;
    }
    return result;
  }

  /** The rows of the damaged stretches that the table's unique index still names (it lives in pages of its own). */
  private async lostRows(
    table: DamagedTable,
    stretches: DamagedStretch[],
  ): Promise<{ count: number; keys: string[] } | undefined> {
    if (!table.keyIndex || stretches.length > COUNTED_STRETCHES) return undefined;
    const within = stretches
      .map((s) => `(rowid >= ${s.from}${s.to === undefined ? '' : ` AND rowid <= ${s.to}`})`)
      .join(' OR ');
    try {
      const rows = await this.all<{ key: unknown }>(
        `SELECT ${identifier(table.keyIndex.column)} AS key FROM ${identifier(table.name)} INDEXED BY ${identifier(table.keyIndex.name)} WHERE ${within}`,
      );
      return { count: rows.length, keys: rows.slice(0, LOST_KEYS_HELD).map((r) => String(r.key)) };
    } catch {
      return undefined;
    }
  }

  close(): Promise<void> {
    return closeDb(this.db);
  }
}
