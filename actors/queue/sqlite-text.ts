/**
 * SQL text for the queue's SQLite store (sqlite-store.ts, kept-sql.ts): values written as literals, since a
 * whole transaction goes to SQLite as one script (sqlite-store.ts, commit), and the promise form of a read.
 */
import type sqlite3 from 'sqlite3';

/** A SQL string literal: quotes doubled; NUL refused (SQLite would cut the text there). */
export function literal(text: string): string {
  if (text.includes('\0')) throw new Error('a stored value may not contain NUL');
  return `'${text.replace(/'/g, "''")}'`;
}
export function integer(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
}
export function all<T>(db: sqlite3.Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}
