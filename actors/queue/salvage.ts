/**
 * Salvage of a damaged SQLite store (README, The queue: "A damaged store"): every row of every table
 * that still reads whole (salvage-reader.ts) is written into a new store built beside the damaged
 * one, which is then renamed aside (kept, never deleted) and the new store takes its name. Used by
 * `hivenode queue salvage <dir>` (and `hivenode flow salvage <dir>`: a flow keeps its runs in the
 * same store) and by a start with `StoreRecovery: salvage` (sqlite-store.ts, which imports this module
 * only then), always under the store's lock.
 *
 * Order of the file moves: the new store is complete and fsynced under a temporary name first; then
 * the damaged file's -wal and -shm are moved aside, the file itself, and last the new store is
 * renamed into place and the directory fsynced. A crash at any point leaves the damaged file
 * (under one name or the other) and never a new store paired with the damaged one's log.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import type sqlite3 from 'sqlite3';
import { ConfigError, describeError } from '../../protocol/errors.js';
import { DamagedFile } from './salvage-reader.js';
import type { DamagedTable, SalvagedRow, TableSalvage } from './salvage-reader.js';
import { INDEXES, SCHEMA } from './sqlite-schema.js';
import { all, closeDb, exec, identifier, literal, openDb } from './sqlite-text.js';

/** The store's file in its directory. */
export const STORE_FILE = 'queue.db';
/** Rows per INSERT statement. */
const INSERT_ROWS = 300;
/** Lost rows named by their key in a report. */
const NAMED_LOST = 10;
/** Idempotency-key rows read at a time while forgetting the keys of lost entries. */
const KEYS_CHUNK = 2_000;
/** Tables whose rows are entries, which idempotency keys point to. */
const ENTRY_TABLES = ['entries', 'kept'];
/** How often a long salvage reports how far it got. */
const PROGRESS_MS = 2_000;

/** What a salvage gave, table by table. */
export interface StoreSalvage {
  /** The store file: the new store now. */
  file: string;
  /** Where the damaged file is kept (its -wal and -shm beside it with those suffixes). */
  keptAs: string;
  /** The damaged file's integrity check, as it read. */
  check: string;
  tables: Array<TableSalvage & { written: number; refused: number }>;
  /** Set when the file's schema could not be read: no table could be. */
  schemaError?: string;
  /**
   * Idempotency keys forgotten because their entry was lost (a client repeating such an enqueue
   * creates the entry anew); not `complete` when entries were lost that no key index names (their
   * keys, if any, stay: a repeat of one is answered as a duplicate of an entry that is gone).
   */
  forgottenKeys: { count: number; complete: boolean };
  seconds: number;
}

/** What the store holds, for the report: the table and what its rows are. */
const MEANING: Readonly<Record<string, string>> = {
  entries: 'waiting, retrying and scheduled entries; a flow: its runs',
  kept: 'kept entries (dead, done)',
  dedup: 'idempotency keys (older stores)',
  dedup_log: 'idempotency keys (one row per commit)',
  schedules: 'schedules',
  meta: 'queue state (paused, …)',
};

function sqlValue(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'NULL';
  if (typeof v === 'string') return literal(v);
  if (Buffer.isBuffer(v)) return `X'${v.toString('hex')}'`;
  throw new Error(`a value of type ${typeof v}`);
}

function run(db: sqlite3.Database, sql: string): Promise<number> {
  return new Promise((resolve, reject) =>
    db.run(sql, function (this: sqlite3.RunResult, err: Error | null) {
      if (err) reject(err);
      else resolve(this.changes);
    }),
  );
}
function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
function moveIfThere(from: string, to: string): void {
  if (existsSync(from)) renameSync(from, to);
}

/** Writes the rows of one table into the new store; a row whose values cannot be written is counted, not written. */
async function writeRows(
  db: sqlite3.Database,
  table: string,
  columns: string[],
  rows: SalvagedRow[],
  counts: { written: number; refused: number },
): Promise<void> {
  const values: string[] = [];
  for (const r of rows) {
    try {
      values.push(`(${[sqlValue(r.rowid), ...columns.map((c) => sqlValue(r[c]))].join(',')})`);
    } catch {
      counts.refused++;
    }
  }
  const head = `INSERT OR IGNORE INTO ${identifier(table)} (rowid, ${columns.map(identifier).join(', ')}) VALUES `;
  await exec(db, 'BEGIN');
  for (let i = 0; i < values.length; i += INSERT_ROWS)
    counts.written += await run(db, head + values.slice(i, i + INSERT_ROWS).join(','));
  await exec(db, 'COMMIT');
}

/**
 * Drops from the new store the idempotency keys whose entry was lost, so a client that sends the
 * lost entry again with its key creates it anew instead of being answered with a key that is gone
 * (README, The queue: idempotency keys). Both forms: the per-key table of older stores and the log's
 * rows of [key, entry key, time] triples (sqlite-store.ts), rewritten without those triples. A log
 * row that is not JSON is left as it is (the start reads it as it always would). The count forgotten.
 */
async function forgetKeysOf(db: sqlite3.Database, lost: ReadonlySet<string>): Promise<number> {
  let forgotten = 0;
  const keys = [...lost];
  await exec(db, 'BEGIN');
  for (let i = 0; i < keys.length; i += INSERT_ROWS)
    forgotten += await run(
      db,
      `DELETE FROM dedup WHERE entry IN (${keys
        .slice(i, i + INSERT_ROWS)
        .map(literal)
        .join(',')})`,
    );
  for (let after = Number.MIN_SAFE_INTEGER; ;) {
    const rows = await all<{ id: number; keys: string }>(
      db,
      `SELECT rowid AS id, keys FROM dedup_log WHERE rowid > ${after} ORDER BY rowid LIMIT ${KEYS_CHUNK}`,
    );
    for (const r of rows) {
      let triples: unknown;
      try {
        triples = JSON.parse(r.keys);
      } catch {
        continue;
      }
      if (!Array.isArray(triples)) continue;
      const kept = triples.filter((t) => !(Array.isArray(t) && lost.has(String(t[1]))));
      if (kept.length === triples.length) continue;
      forgotten += triples.length - kept.length;
      await exec(
        db,
        kept.length === 0
          ? `DELETE FROM dedup_log WHERE rowid = ${r.id}`
          : `UPDATE dedup_log SET keys = ${literal(JSON.stringify(kept))} WHERE rowid = ${r.id}`,
      );
    }
    if (rows.length < KEYS_CHUNK) break;
    after = rows[rows.length - 1]!.id;
  }
  await exec(db, 'COMMIT');
  return forgotten;
}

/**
 * The columns of a damaged table to copy: those the new store's table has too. A table the current
 * schema does not have (one from a later version) is made in the new store from its own statement.
 */
async function tableColumns(db: sqlite3.Database, table: DamagedTable): Promise<string[]> {
  let columns = (await all<{ name: string }>(db, `PRAGMA table_info(${identifier(table.name)})`)).map((c) => c.name);
  if (columns.length === 0) {
    await exec(db, table.sql);
    columns = (await all<{ name: string }>(db, `PRAGMA table_info(${identifier(table.name)})`)).map((c) => c.name);
  }
  return table.columns.filter((c) => columns.includes(c));
}

/**
 * Salvages the store in `dir` (whose lock the caller holds). `progress` hears a line every
 * `progressEveryMs` on a long salvage. Throws ConfigError when there is no store file.
 */
export async function salvageStore(
  dir: string,
  progress: (line: string) => void = () => undefined,
  progressEveryMs = PROGRESS_MS,
): Promise<StoreSalvage> {
  const began = Date.now();
  const file = join(dir, STORE_FILE);
  if (!existsSync(file))
    throw new ConfigError(
      `${dir} holds no store (${STORE_FILE}): nothing to salvage; give the directory PersistPath/<NAME> of the queue or flow`,
    );
  const building = `${file}.salvage`;
  for (const f of [building, `${building}-journal`]) rmSync(f, { force: true }); // a salvage interrupted before: started again
  const damaged = await DamagedFile.open(file);
  const result: StoreSalvage = {
    file,
    keptAs: '',
    check: '',
    tables: [],
    forgottenKeys: { count: 0, complete: true },
    seconds: 0,
  };
  let fresh: sqlite3.Database | undefined;
  let built = false;
  try {
    fresh = await openDb(building);
    result.check = await damaged.check();
    await exec(fresh, `PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF; ${SCHEMA} ${INDEXES}`);
    let tables: DamagedTable[] = [];
    try {
      tables = await damaged.tables();
    } catch (e) {
      result.schemaError = describeError(e);
    }
    let lastProgress = Date.now();
    for (const table of tables) {
      const counts = { written: 0, refused: 0 };
      let columns: string[];
      try {
        columns = await tableColumns(fresh, table);
      } catch (e) {
        result.tables.push({
          table: table.name,
          read: 0,
          stretches: [],
          error: `its statement does not run: ${describeError(e)}`,
          ...counts,
        });
        continue;
      }
      const read = await damaged.read(
        { ...table, columns },
        (rows) => writeRows(fresh!, table.name, columns, rows, counts),
        (n) => {
          if (Date.now() - lastProgress < progressEveryMs) return;
          lastProgress = Date.now();
          progress(`salvage of ${file}: ${table.name}: ${n} rows read so far`);
        },
      );
      result.tables.push({ ...read, ...counts });
    }
    const entryTables = result.tables.filter((t) => ENTRY_TABLES.includes(t.table));
    const lostKeys = new Set(entryTables.flatMap((t) => t.lost?.keys ?? []));
    const complete = entryTables.every(
      (t) => (t.stretches.length === 0 && !t.error) || (t.lost !== undefined && t.lost.keys.length === t.lost.count),
    );
    result.forgottenKeys = { count: lostKeys.size === 0 ? 0 : await forgetKeysOf(fresh, lostKeys), complete };
    built = true;
  } finally {
    if (fresh) await closeDb(fresh);
    await damaged.close();
    // a salvage that failed (a full disk, say) leaves nothing of its own behind: the damaged file stays where it was
    if (!built) for (const f of [building, `${building}-journal`]) rmSync(f, { force: true });
  }
  fsyncPath(building);
  result.keptAs = `${file}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  moveIfThere(`${file}-wal`, `${result.keptAs}-wal`);
  moveIfThere(`${file}-shm`, `${result.keptAs}-shm`);
  renameSync(file, result.keptAs);
  renameSync(building, file);
  fsyncPath(dir);
  result.seconds = (Date.now() - began) / 1000;
  return result;
}

/** The integrity check of the store in `dir` ('ok' when it finds nothing), read without writing to it. */
export async function checkStore(dir: string): Promise<string> {
  const damaged = await DamagedFile.open(join(dir, STORE_FILE));
  try {
    return await damaged.check();
  } finally {
    await damaged.close();
  }
}

/** Rows the salvage could not recover from one table, in words. */
function lostText(t: StoreSalvage['tables'][number]): string {
  const parts: string[] = [];
  const named = t.lost?.keys.slice(0, NAMED_LOST) ?? [];
  const lost = t.lost
    ? t.lost.count === 0
      ? 'no rows were there'
      : `${t.lost.count} rows lost (keys ${named.join(', ')}${t.lost.count > named.length ? ', …' : ''})`
    : 'rows lost: how many is unknown (no key index of the table that still reads names them)';
  if (t.error) parts.push(`nothing of it could be read (${t.error}): ${lost}`);
  else if (t.stretches.length > 0) {
    const ranges = t.stretches
      .slice(0, 5)
      .map((s) => (s.to === undefined ? `from ${s.from} on` : s.to === s.from ? `${s.from}` : `${s.from}–${s.to}`));
    const more = t.stretches.length > 5 ? ` and ${t.stretches.length - 5} more stretches` : '';
    parts.push(`unreadable rowids ${ranges.join(', ')}${more}: ${lost}`);
  }
  if (t.refused > 0) parts.push(`${t.refused} rows read with values that cannot be stored`);
  const duplicates = t.read - t.refused - t.written;
  if (duplicates > 0) parts.push(`${duplicates} rows left out (a unique key repeated or a required value missing)`);
  return parts.join('; ');
}

/** What became of the idempotency keys of lost entries, in words ('' when no entry was lost). */
function forgottenText(f: StoreSalvage['forgottenKeys']): string {
  if (f.complete)
    return f.count === 0
      ? ''
      : `idempotency keys of lost entries forgotten: ${f.count} (an enqueue repeating one creates its entry anew)`;
  return `idempotency keys of lost entries forgotten: ${f.count}; entries lost that no key index names keep theirs (an enqueue repeating one is answered as a duplicate of an entry that is gone)`;
}

/** The salvage's report, one line per table, after a first line saying where everything is. */
export function salvageReport(s: StoreSalvage): string[] {
  const lines = [
    `salvaged ${basename(s.file)} in ${s.seconds.toFixed(1)} s: the new store is ${s.file}; the damaged file is kept as ${s.keptAs}`,
    `  integrity check of the damaged file: ${s.check}`,
  ];
  if (s.schemaError)
    lines.push(
      `  the damaged file's schema could not be read (${s.schemaError}): no table could be recovered; the new store is empty`,
    );
  for (const t of s.tables) {
    const lost = lostText(t);
    lines.push(
      `  ${t.table} — ${MEANING[t.table] ?? 'a table of a later version'}: ${t.written} rows recovered${lost ? `; ${lost}` : ''}`,
    );
  }
  const forgotten = forgottenText(s.forgottenKeys);
  if (forgotten) lines.push(`  ${forgotten}`);
  return lines;
}

/** One line of counts for a log line and the journal: `entries 286 recovered, 14 lost; kept 0 recovered; …`. */
export function salvageSummary(s: StoreSalvage): string {
  const tables = s.tables.map((t) => {
    const lost = t.error
      ? ', unreadable'
      : t.stretches.length === 0
        ? ''
        : t.lost
          ? `, ${t.lost.count} lost`
          : ', some lost (how many unknown)';
    return `${t.table} ${t.written} recovered${lost}`;
  });
  const forgotten =
    s.forgottenKeys.count > 0 ? `; ${s.forgottenKeys.count} idempotency keys of lost entries forgotten` : '';
  return `${s.schemaError ? `schema unreadable (${s.schemaError}), nothing recovered` : tables.join('; ')}${forgotten}; the damaged file is kept as ${s.keptAs}`;
}
