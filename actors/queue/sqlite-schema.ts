/**
 * The SQLite store's tables (sqlite-store.ts), in one place for the store that opens them and the
 * salvage that builds a new store from a damaged one (salvage.ts).
 */
import { KEPT_SCHEMA } from './kept-sql.js';

/**
 * Entries waiting for a time, and all the others (rows from before the state column included), as
 * the WHERE terms of two partial indexes: a start reads the untimed ones and the timed ones due soon
 * through them without scanning the table (10^7 rows: seconds), and pages the later ones in by due
 * time (backlog.ts). A query uses such an index only when it repeats the term word for word. The
 * timed one is by state, then due time: the parked entries of a state are counted by one range of
 * the index alone (10^7 of them: under a second; a GROUP BY over a due-time index sorted them all:
 * 5 s). Reads by due time name their index: asked for seq order, SQLite would rather scan the table.
 */
export const TIMED_STATES = ['retrying', 'scheduled'] as const;
export const TIMED = "state IN ('retrying', 'scheduled')";
export const UNTIMED = "(state IS NULL OR state NOT IN ('retrying', 'scheduled'))";
export const ROW = 'seq, key, state, due_at AS dueAt, doc';

const TABLES = `
CREATE TABLE IF NOT EXISTS entries (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, doc TEXT NOT NULL, state TEXT, due_at INTEGER);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dedup (key TEXT PRIMARY KEY, entry TEXT NOT NULL, seen_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS dedup_seen_at ON dedup (seen_at);
CREATE TABLE IF NOT EXISTS dedup_log (seen_at INTEGER NOT NULL, keys TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS dedup_log_seen_at ON dedup_log (seen_at);
CREATE TABLE IF NOT EXISTS schedules (name TEXT PRIMARY KEY, doc TEXT NOT NULL);`;
/** Made once the state and due_at columns exist (an older store gets them first); building them in a big older store takes once what a scan would take. */
export const INDEXES = `
CREATE INDEX IF NOT EXISTS entries_timed ON entries (state, due_at) WHERE ${TIMED};
CREATE INDEX IF NOT EXISTS entries_untimed ON entries (seq) WHERE ${UNTIMED};`;
/** Stores created before the state and due_at columns get them (their rows keep NULL there). */
export const ADDED_COLUMNS = [
  ['state', 'TEXT'],
  ['due_at', 'INTEGER'],
] as const;

/** Every table of a store, the kept entries' included. */
export const SCHEMA = TABLES + KEPT_SCHEMA;
