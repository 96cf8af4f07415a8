/**
 * The kept entries (kept.ts) in the SQLite store: a table of their own beside `entries`, which a
 * start does not read, so 10^6 kept entries cost the queue no memory. Filters become SQL: the state,
 * reason, channel and end time are columns, other attributes and Data fields are read from the JSON
 * document by SQLite's JSON functions. Reads go in chunks (by rowid, the order entries were kept in),
 * so no read holds every row at once.
 */
import type sqlite3 from 'sqlite3';
import { EntryState } from './entry.js';
import type { KeepOp, KeptCounts, KeptEntries, KeptFilter, KeptRow, UnkeepOp } from './kept.js';
import { all, integer, literal } from './sqlite-text.js';

/** Created beside the older tables of a store, so stores from before the dead set open as they are. */
export const KEPT_SCHEMA = `
CREATE TABLE IF NOT EXISTS kept (key TEXT NOT NULL UNIQUE, seq INTEGER NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL, channel TEXT NOT NULL, ended_at INTEGER NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS kept_state_ended ON kept (state, ended_at);
CREATE INDEX IF NOT EXISTS kept_state ON kept (state);`;

/** Rows per read. */
const READ_CHUNK = 5_000;
/** Rows removed per transaction: each batch is one fsync, and other writes share the commits in between. */
const PURGE_CHUNK = 5_000;

/** The statements of a keep (out of `entries` into `kept`, in the caller's transaction) or an unkeep. */
export function keptStatement(op: KeepOp | UnkeepOp): string {
  if (op.type === 'unkeep')
    return op.keys.length === 0 ? '' : `DELETE FROM kept WHERE key IN (${op.keys.map(literal).join(',')});`;
  const row = [
    literal(op.key),
    integer(op.seq),
    literal(op.state),
    literal(op.reason),
    literal(op.channel),
    integer(op.endedAt),
    literal(op.doc),
  ].join(',');
  return `DELETE FROM entries WHERE key = ${literal(op.key)}; INSERT OR REPLACE INTO kept (key, seq, state, reason, channel, ended_at, doc) VALUES (${row});`;
}

/** The SQL value of a groupby attribute, as responses.ts attributeOf reads it from an entry ('' when absent). */
function attributeSql(attribute: string): string {
  switch (attribute) {
    case 'deadletter_reason':
      return 'reason';
    case 'channel':
    case 'state':
      return attribute;
    case 'mode':
      return `COALESCE(json_extract(doc, '$.mode'), '')`;
    case 'class':
      return `COALESCE(json_extract(doc, '$.message.Class'), '')`;
    case 'operation':
      return `COALESCE(json_extract(doc, '$.message.Operation'), '')`;
    default:
      // json_each compares the field name as a value: no JSON path quoting for names with dots or quotes
      return `COALESCE((SELECT json_extract(d.value, '$[0]') FROM json_each(doc, '$.message.Data') AS d WHERE d.key = ${literal(attribute)}), '')`;
  }
}

function whereOf(f: KeptFilter): string {
  const parts = [`state = ${literal(f.state)}`];
  if (f.key !== undefined) parts.push(`key = ${literal(f.key)}`);
  if (f.before !== undefined) parts.push(`ended_at < ${integer(f.before)}`);
  if (f.since !== undefined) parts.push(`ended_at >= ${integer(f.since)}`);
  if (f.groupBy !== undefined && f.value !== undefined) parts.push(`${attributeSql(f.groupBy)} = ${literal(f.value)}`);
  return parts.join(' AND ');
}

const COLUMNS = 'rowid AS id, key, seq, state, reason, channel, ended_at AS endedAt';

export class SqliteKept implements KeptEntries {
  constructor(
    private readonly db: sqlite3.Database,
    /** The store's group-committed write: removals are durable like every other change. */
    private readonly write: (ops: UnkeepOp[]) => Promise<void>,
  ) {}

  /**
   * Resolves once every write submitted before is committed (an empty write joins the next commit,
   * and commits go in order): the queue moves entries here without waiting, so a read right after a
   * move still finds the entry.
   */
  private settled(): Promise<void> {
    return this.write([]);
  }

  async read(filter: KeptFilter, withDocs: boolean, onRows: (rows: KeptRow[]) => void | Promise<void>): Promise<void> {
    const columns = `${COLUMNS}, ${withDocs ? 'doc' : "'' AS doc"}`;
    await this.settled();
    for (let after = 0; ;) {
      const rows = await all<KeptRow & { id: number }>(
        this.db,
        `SELECT ${columns} FROM kept WHERE rowid > ${integer(after)} AND ${whereOf(filter)} ORDER BY rowid LIMIT ${READ_CHUNK}`,
      );
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.id;
      await onRows(rows);
      if (rows.length < READ_CHUNK) return;
    }
  }

  /**
   * A page in kept order (rowid): the index on state holds each state's rows in rowid order, so the
   * offset is skipped inside SQLite on the index and only the page's keys are read; the count of all
   * matches is one more index scan. Nothing of the rows before the page reaches JavaScript.
   */
  async page(filter: KeptFilter, offset: number, limit: number): Promise<{ keys: string[]; total: number }> {
    await this.settled();
    const where = whereOf(filter);
    const rows = await all<{ key: string }>(
      this.db,
      `SELECT key FROM kept WHERE ${where} ORDER BY rowid LIMIT ${integer(limit)} OFFSET ${integer(offset)}`,
    );
    const [counted] = await all<{ n: number }>(this.db, `SELECT COUNT(*) AS n FROM kept WHERE ${where}`);
    return { keys: rows.map((r) => r.key), total: counted?.n ?? 0 };
  }

  async group(filter: KeptFilter, groupBy: string): Promise<Map<string, number>> {
    await this.settled();
    const rows = await all<{ v: string; n: number }>(
      this.db,
      `SELECT ${attributeSql(groupBy)} AS v, COUNT(*) AS n FROM kept WHERE ${whereOf(filter)} GROUP BY v`,
    );
    return new Map(rows.map((r) => [String(r.v), r.n] as const));
  }

  async get(key: string): Promise<KeptRow | undefined> {
    await this.settled();
    return (await all<KeptRow>(this.db, `SELECT ${COLUMNS}, doc FROM kept WHERE key = ${literal(key)}`))[0];
  }

  async count(): Promise<KeptCounts> {
    const counts: KeptCounts = { [EntryState.Dead]: 0, [EntryState.Done]: 0 };
    await this.settled();
    for (const r of await all<{ state: string; n: number }>(
      this.db,
      'SELECT state, COUNT(*) AS n FROM kept GROUP BY state',
    ))
      if (r.state === EntryState.Dead || r.state === EntryState.Done) counts[r.state] = r.n;
    return counts;
  }

  async purge(filter: KeptFilter, limit = Infinity): Promise<number> {
    let removed = 0;
    await this.settled();
    for (let after = 0; removed < limit;) {
      const n = Math.min(PURGE_CHUNK, limit - removed);
      const rows = await all<{ id: number; key: string }>(
        this.db,
        `SELECT rowid AS id, key FROM kept WHERE rowid > ${integer(after)} AND ${whereOf(filter)} ORDER BY rowid LIMIT ${integer(n)}`,
      );
      if (rows.length === 0) break;
      await this.write([{ type: 'unkeep', keys: rows.map((r) => r.key) }]);
      removed += rows.length;
      after = rows[rows.length - 1]!.id;
      if (rows.length < n) break;
    }
    return removed;
  }
}
