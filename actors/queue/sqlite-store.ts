/**
 * The queue's durable store (docs/ARCHITECTURE.md, The life of one queue entry): SQLite in WAL mode
 * with synchronous=FULL in PersistPath. Writes are group-committed: every write waiting while a
 * transaction is being committed goes into the next transaction together, and each write's promise
 * resolves only after the transaction holding it is fsynced. A store that cannot be opened or fails
 * its integrity check (quick_check) stops the start with one line naming the file and the salvage
 * command, or with StoreRecovery salvage is salvaged (salvage.ts) and opened; a full disk fails the
 * writes with 507. One process at a time holds a store (store-lock.ts): the lock is taken before
 * the file is opened.
 */
import { dirname, join } from 'node:path';
import type sqlite3 from 'sqlite3';
import { ConfigError, StorageFullError, UnavailableError, describeError } from '../../protocol/errors.js';
import { JournalEvent } from '../../supervisors/journal.js';
import type { Journal } from '../../supervisors/journal.js';
import type { StoreSalvage } from './salvage.js';
import type { Logger } from '../observe/logger.js';
import { GroupCommit } from '../shared/group-commit.js';
import { makeDirectory } from '../shared/make-directory.js';
import { StoreLock } from './store-lock.js';
import { SqliteKept, keptStatement } from './kept-sql.js';
import { ADDED_COLUMNS, INDEXES, ROW, SCHEMA, TIMED, TIMED_STATES, UNTIMED } from './sqlite-schema.js';
import { all, closeDb, exec, integer, literal, openDb } from './sqlite-text.js';
import type { EntryPaging, QueueStore, ScheduleRow, SeenRow, StoreOp, StoredRow } from './store.js';

/** Rows per multi-row statement. */
const CHUNK = 300;
/** Rows per read while loading. */
const LOAD_CHUNK = 20_000;

/**
 * FULL: every commit is fsynced before the store answers (README, Reliability). TEST ONLY: the power-loss
 * test (spec/reliability/power-loss.spec.ts) sets HIVENODE_TEST_BROKEN_NO_FSYNC=1 to build the store
 * deliberately broken (synchronous=OFF) and shows that its test then fails; nothing else may set it.
 */
const SYNCHRONOUS = process.env.HIVENODE_TEST_BROKEN_NO_FSYNC === '1' ? 'OFF' : 'FULL';

function isFull(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return (
    code === 'SQLITE_FULL' || code === 'ENOSPC' || /SQLITE_FULL|disk is full|ENOSPC/i.test(String(describeError(e)))
  );
}

/** One stored idempotency key in a dedup_log row: [key, entry key, first seen (epoch ms)]. */
type LoggedKey = [string, string, number];

/**
 * The idempotency keys of one transaction as one dedup_log row: its time is the latest of theirs, so
 * the row goes once all of them are out of the window. The keys are only ever read whole, at start
 * (the queue holds the window's keys in memory: dedup.ts), so they need no table row and index entry
 * each: one row per commit took a keyed enqueue's store cost from about 3.5 µs to 0.3 µs above a
 * plain one (measured with sqlite3 directly, 64 entries per transaction).
 */
function dedupLogStatement(seen: ReadonlyArray<Extract<StoreOp, { type: 'seen' }>>): string {
  // the latest time by a loop, not Math.max(...times): a spread of that many arguments overflows the
  // stack for a big enough transaction. The JSON stays one JSON.stringify of the whole array:
  // measured, that is faster than writing it key by key (about 0.3 against 0.45 µs a key)
  let latest = seen[0]!.seenAt;
  const keys: LoggedKey[] = [];
  for (const k of seen) {
    if (k.seenAt > latest) latest = k.seenAt;
    keys.push([k.key, k.entryKey, k.seenAt]);
  }
  return `INSERT INTO dedup_log (seen_at, keys) VALUES (${integer(latest)}, ${literal(JSON.stringify(keys))});`;
}

/** `rows` (by seq, up to `upTo`) with the entries of `timed` from `from` on whose seq is at most `upTo`, by seq. */
function mergeBySeq(
  rows: StoredRow[],
  timed: StoredRow[],
  upTo: number,
  from: number,
): { rows: StoredRow[]; next: number } {
  const out: StoredRow[] = [];
  let t = from;
  for (const r of rows) {
    while (t < timed.length && timed[t]!.seq < r.seq) out.push(timed[t++]!);
    out.push(r);
  }
  while (t < timed.length && timed[t]!.seq <= upTo) out.push(timed[t++]!);
  return { rows: out, next: t };
}

/** What a start does with a damaged store (the StoreRecovery parameter of a queue or flow). */
export interface StoreRecovery {
  /** 'refuse': the start stops with one line; 'salvage': the store is salvaged and the start goes on. */
  mode: 'refuse' | 'salvage';
  /** The service kind whose store it is: the refusal names `hivenode <kind> salvage <dir>`. */
  kind: 'queue' | 'flow';
  /** Hears a salvage made at this start, with its counts in one line. */
  onSalvaged?: (salvage: StoreSalvage, summary: string) => void;
}

/**
 * A service's StoreRecovery: a salvage at its start is journaled (README, Console: the journal) with
 * its counts, beside the WARN line the store logs.
 */
export function storeRecovery(
  ctx: { readonly name: string; readonly journal: Journal },
  parameter: string,
  kind: 'queue' | 'flow',
): StoreRecovery {
  return {
    mode: parameter === 'salvage' ? 'salvage' : 'refuse',
    kind,
    onSalvaged: (s, summary) =>
      ctx.journal.record({
        event: JournalEvent.Salvage,
        path: `/node/${ctx.name}`,
        action: `${kind} store ${s.file} salvaged: ${summary}`,
      }),
  };
}

export class SqliteStore implements QueueStore {
  readonly durable = true;
  private closed = false;
  private readonly commits = new GroupCommit<StoreOp[]>(
    (batches) => this.commit(batches.flat()),
    (e) =>
      isFull(e) ? new StorageFullError(`the queue store is full: ${describeError(e)}`, { cause: e }) : (e as Error),
  );

  get where(): string {
    return this.file;
  }

  private constructor(
    private readonly db: sqlite3.Database,
    readonly file: string,
    private readonly lock: StoreLock,
  ) {
    this.kept = new SqliteKept(db, (ops) => this.write(ops));
  }

  /**
   * Opens (or creates) `<dir>/queue.db` under the lock `<dir>/queue.lock` (StoreHeldError when
   * another process holds it); a damaged store stops the start (ConfigError), or is salvaged first
   * when `recovery` says so.
   */
  static async open(
    dir: string,
    log: Logger,
    maxBytes = 0,
    recovery: StoreRecovery = { mode: 'refuse', kind: 'queue' },
  ): Promise<SqliteStore> {
    makeDirectory(dir, 'PersistPath');
    const lock = await StoreLock.acquire(join(dir, 'queue.lock'), `the ${recovery.kind} store ${dir}`);
    try {
      return await SqliteStore.openOrRefuse(join(dir, 'queue.db'), log, maxBytes, lock, recovery);
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  /**
   * A store that cannot be read is never replaced: moving it aside and starting empty would answer
   * 200 while every acknowledged entry sits out of reach in a file nobody reads (README,
   * Reliability). The start stops with one line naming the file, what is wrong and the command that
   * salvages it; the file and its -wal/-shm are left exactly as they were. With StoreRecovery salvage
   * the node runs that salvage itself (the damaged file kept aside) and opens the new store.
   */
  private static async openOrRefuse(
    file: string,
    log: Logger,
    maxBytes: number,
    lock: StoreLock,
    recovery: StoreRecovery,
  ): Promise<SqliteStore> {
    try {
      return await SqliteStore.openChecked(file, log, maxBytes, lock);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'SQLITE_CANTOPEN' || code === 'EACCES' || code === 'SQLITE_FULL') throw e;
      const what = describeError(e).replace(/\s+/g, ' ');
      const dir = dirname(file);
      if (recovery.mode === 'refuse') {
        throw new ConfigError(
          `the ${recovery.kind} store ${file} is damaged (${what}): it was left as it is; run 'hivenode ${recovery.kind} salvage ${dir}' to recover what reads into a new store (the damaged file is kept beside it), or set StoreRecovery: salvage to do that at start`,
        );
      }
      log.warn(`the ${recovery.kind} store ${file} is damaged (${what}): salvaging it (StoreRecovery: salvage)`);
      // loaded only here: a start on a sound store never reads the salvage's code (README, Start-up)
      const { salvageStore, salvageSummary } = await import('./salvage.js');
      const salvage = await salvageStore(dir, (line) => log.info(line)).catch((failed: unknown) => {
        throw new ConfigError(
          `the ${recovery.kind} store ${file} is damaged (${what}) and its salvage failed (${describeError(failed).replace(/\s+/g, ' ')}): it was left as it is; fix that (the salvage writes a new store beside it) and start again, or run 'hivenode ${recovery.kind} salvage ${dir}'`,
        );
      });
      const summary = salvageSummary(salvage);
      log.warn(`the ${recovery.kind} store ${file} was salvaged: ${summary}`);
      recovery.onSalvaged?.(salvage, summary);
      return SqliteStore.openChecked(file, log, maxBytes, lock).catch((again: unknown) => {
        throw new ConfigError(
          `the ${recovery.kind} store ${file} salvaged from a damaged one does not open (${describeError(again)}); the damaged file is kept as ${salvage.keptAs}`,
        );
      });
    }
  }

  private static async openChecked(file: string, log: Logger, maxBytes: number, lock: StoreLock): Promise<SqliteStore> {
    const db = await openDb(file);
    try {
      db.configure('busyTimeout', 5_000);
      await exec(db, `PRAGMA journal_mode=WAL; PRAGMA synchronous=${SYNCHRONOUS};`);
      // quick_check, not integrity_check: it reads every page (so a damaged page is found) but skips
      // the index-against-table comparison that makes integrity_check several times slower on a large store
      const checkStart = Date.now();
      const check = await all<{ quick_check: string }>(db, 'PRAGMA quick_check');
      log.debug(`queue store ${file}: quick_check took ${Date.now() - checkStart} ms`);
      if (check[0]?.quick_check !== 'ok')
        throw Object.assign(new Error(`integrity check failed: ${check.map((r) => r.quick_check).join('; ')}`), {
          code: 'SQLITE_CORRUPT',
        });
      await exec(db, SCHEMA);
      const columns = new Set((await all<{ name: string }>(db, 'PRAGMA table_info(entries)')).map((c) => c.name));
      for (const [name, type] of ADDED_COLUMNS)
        if (!columns.has(name)) await exec(db, `ALTER TABLE entries ADD COLUMN ${name} ${type}`);
      await exec(db, INDEXES);
      if (maxBytes > 0) {
        const page = (await all<{ page_size: number }>(db, 'PRAGMA page_size'))[0]?.page_size ?? 4096;
        await exec(db, `PRAGMA max_page_count=${Math.max(16, Math.floor(maxBytes / page))}`);
      }
      return new SqliteStore(db, file, lock);
    } catch (e) {
      await closeDb(db);
      throw e;
    }
  }

  /**
   * Reads in chunks, asking SQLite for the next chunk before handing over the current one, so
   * SQLite's thread reads while the caller parses (measured: 10^6 entries load in about half the
   * time of one big SELECT followed by parsing). With `parkAfter` the untimed entries come by their
   * index, and the timed ones due by then (few: they are due within the horizon) are merged in by seq.
   */
  async load(onRows: (rows: StoredRow[]) => void, parkAfter?: number): Promise<Map<string, string>> {
    const where = parkAfter === undefined ? '' : `${UNTIMED} AND`;
    const chunk = (after: number): Promise<StoredRow[]> =>
      all(
        this.db,
        `SELECT ${ROW} FROM entries WHERE ${where} seq > ${integer(after)} ORDER BY seq LIMIT ${LOAD_CHUNK}`,
      );
    const timed =
      parkAfter === undefined
        ? []
        : await all<StoredRow>(
            this.db,
            `SELECT ${ROW} FROM entries INDEXED BY entries_timed WHERE ${TIMED} AND due_at <= ${integer(parkAfter)} ORDER BY seq`,
          );
    let t = 0;
    let rows = await chunk(-1);
    for (;;) {
      const next = rows.length === LOAD_CHUNK ? chunk(rows[rows.length - 1]!.seq) : undefined;
      const upTo = next ? rows[rows.length - 1]!.seq : Infinity;
      const merged = t < timed.length && timed[t]!.seq <= upTo ? mergeBySeq(rows, timed, upTo, t) : undefined;
      if (merged) t = merged.next;
      if ((merged?.rows ?? rows).length > 0) onRows(merged?.rows ?? rows);
      if (!next) break;
      rows = await next;
    }
    return new Map(
      (await all<{ name: string; value: string }>(this.db, 'SELECT name, value FROM meta')).map(
        (r) => [r.name, r.value] as const,
      ),
    );
  }

  /** The paging queries (EntryPaging), each through its index. */
  readonly paging: EntryPaging = {
    countTimedAfter: async (after) => {
      const counts = [];
      for (const state of TIMED_STATES) {
        const n =
          (
            await all<{ n: number }>(
              this.db,
              `SELECT COUNT(*) AS n FROM entries INDEXED BY entries_timed WHERE ${TIMED} AND state = ${literal(state)} AND due_at > ${integer(after)}`,
            )
          )[0]?.n ?? 0;
        if (n > 0) counts.push({ state, n });
      }
      return counts;
    },
    timedBetween: (after, until) =>
      all(
        this.db,
        `SELECT ${ROW} FROM entries INDEXED BY entries_timed WHERE ${TIMED} AND due_at > ${integer(after)} AND due_at <= ${integer(until)} ORDER BY seq`,
      ),
    timedByKeys: (keys, after) =>
      keys.length === 0
        ? Promise.resolve([])
        : all(
            this.db,
            `SELECT ${ROW} FROM entries WHERE ${TIMED} AND due_at > ${integer(after)} AND key IN (${keys.map(literal).join(',')})`,
          ),
    oldestTimed: async (states, after) => {
      const rows = await all<StoredRow>(
        this.db,
        `SELECT ${ROW} FROM entries WHERE ${TIMED} AND due_at > ${integer(after)} AND state IN (${states.map(literal).join(',')}) ORDER BY seq LIMIT 1`,
      );
      return rows[0];
    },
    nextDueAfter: async (after) => {
      // per state: the minimum of one index range is its first entry
      let next: number | undefined;
      for (const state of TIMED_STATES) {
        const due =
          (
            await all<{ dueAt: number | null }>(
              this.db,
              `SELECT MIN(due_at) AS dueAt FROM entries INDEXED BY entries_timed WHERE ${TIMED} AND state = ${literal(state)} AND due_at > ${integer(after)}`,
            )
          )[0]?.dueAt ?? undefined;
        if (due !== undefined && (next === undefined || due < next)) next = due;
      }
      return next;
    },
    lastSeq: async () =>
      (await all<{ seq: number | null }>(this.db, 'SELECT MAX(seq) AS seq FROM entries'))[0]?.seq ?? 0,
  };

  /** From the log, and from the table of one row per key that stores written before the log keep. */
  async loadSeen(after: number): Promise<SeenRow[]> {
    const rows = await all<SeenRow>(
      this.db,
      `SELECT key, entry AS entryKey, seen_at AS seenAt FROM dedup WHERE seen_at > ${integer(after)}`,
    );
    for (const r of await all<{ keys: string }>(
      this.db,
      `SELECT keys FROM dedup_log WHERE seen_at > ${integer(after)} ORDER BY rowid`,
    )) {
      for (const [key, entryKey, seenAt] of JSON.parse(r.keys) as LoggedKey[])
        if (seenAt > after) rows.push({ key, entryKey, seenAt });
    }
    // oldest first, and a key seen again after its window later than its first time (sort is stable)
    return rows.sort((a, b) => a.seenAt - b.seenAt);
  }

  loadSchedules(): Promise<ScheduleRow[]> {
    return all(this.db, 'SELECT name, doc FROM schedules ORDER BY name');
  }

  write(ops: StoreOp[]): Promise<void> {
    if (this.closed) return Promise.reject(new UnavailableError('the queue store is closed'));
    return this.commits.submit(ops);
  }

  /**
   * One transaction in one round trip to SQLite's thread: the statements go as one script, which
   * SQLite stops at the first error, so COMMIT only runs when everything before it worked (else we
   * roll back). Measured here: about twice the commit rate of bound statements sent one by one. Values are
   * written as SQL literals: keys are generated UUIDs, seq numbers are ours, documents are JSON
   * (which never holds a raw NUL), idempotency keys are printable ASCII (dedup.ts), and quotes are
   * doubled, the only escape SQLite string literals have.
   */
  private async commit(batch: StoreOp[]): Promise<void> {
    // the batch's idempotency keys become one dedup_log row (dedupLogStatement), and with the 'seen'
    // ops out of the way the adds' entries, which interleave with them, run together into one
    // multi-row statement
    const seen: Array<Extract<StoreOp, { type: 'seen' }>> = [];
    const ops: Array<Exclude<StoreOp, { type: 'seen' }>> = [];
    for (const op of batch) {
      if (op.type === 'seen') seen.push(op);
      else ops.push(op);
    }
    const parts: string[] = ['BEGIN IMMEDIATE;'];
    for (let i = 0; i < ops.length;) {
      const op = ops[i]!;
      if (op.type === 'put') {
        const rows: string[] = [];
        while (i < ops.length && ops[i]!.type === 'put' && rows.length < CHUNK) {
          const r = ops[i++] as Extract<StoreOp, { type: 'put' }>;
          rows.push(`(${literal(r.key)},${integer(r.seq)},${literal(r.state)},${integer(r.dueAt)},${literal(r.doc)})`);
        }
        parts.push(`INSERT OR REPLACE INTO entries (key, seq, state, due_at, doc) VALUES ${rows.join(',')};`);
      } else if (op.type === 'remove') {
        const keys: string[] = [];
        while (i < ops.length && ops[i]!.type === 'remove' && keys.length < CHUNK)
          keys.push(literal((ops[i++] as { key: string }).key));
        parts.push(`DELETE FROM entries WHERE key IN (${keys.join(',')});`);
      } else if (op.type === 'clear') {
        parts.push('DELETE FROM entries;');
        i++;
      } else if (op.type === 'forget-seen') {
        parts.push(
          `DELETE FROM dedup WHERE seen_at <= ${integer(op.before)}; DELETE FROM dedup_log WHERE seen_at <= ${integer(op.before)};`,
        );
        i++;
      } else if (op.type === 'put-schedule') {
        parts.push(`INSERT OR REPLACE INTO schedules (name, doc) VALUES (${literal(op.name)}, ${literal(op.doc)});`);
        i++;
      } else if (op.type === 'remove-schedule') {
        parts.push(`DELETE FROM schedules WHERE name = ${literal(op.name)};`);
        i++;
      } else if (op.type === 'keep' || op.type === 'unkeep') {
        parts.push(keptStatement(op));
        i++;
      } else {
        parts.push(`INSERT OR REPLACE INTO meta (name, value) VALUES (${literal(op.name)}, ${literal(op.value)});`);
        i++;
      }
    }
    if (seen.length > 0) parts.push(dedupLogStatement(seen));
    parts.push('COMMIT;');
    try {
      await exec(this.db, parts.join('\n'));
    } catch (e) {
      await exec(this.db, 'ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.commits.idle();
    await closeDb(this.db);
    this.lock.release();
  }

  /** The kept entries' table (kept-sql.ts). */
  readonly kept: SqliteKept;
}
