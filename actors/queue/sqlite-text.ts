/**
 * SQL text for the queue's SQLite store (sqlite-store.ts, kept-sql.ts, salvage.ts): values written as literals,
 * since a whole transaction goes to SQLite as one script (sqlite-store.ts, commit), and the promise form of
 * opening, running a script, reading and closing.
 */
import sqlite3 from 'sqlite3';

/** A SQL string literal: quotes doubled; NUL refused (SQLite would cut the text there). */
export function literal(text: string): string {
  if (text.includes('\0')) throw new Error('a stored value may not contain NUL');
  return `'${text.replace(/'/g, "''")}'`;
}
/** A quoted SQL name (a table or column read from a store's own schema). */
export function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
export function integer(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
}
export function all<T>(db: sqlite3.Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}
export function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}
export function openDb(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(db)));
  });
}
export function closeDb(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}
