/**
 * SQL_INITFILE: a script run statement by statement when the service starts (or, if the database is
 * unreachable then, before the first statement once it answers). It runs at every start, so it must
 * be idempotent — CREATE TABLE IF NOT EXISTS, INSERT … WHERE NOT EXISTS — which is how the demo seeds
 * its SQLite table. Statements are split at `;` outside literals and comments (so a PostgreSQL
 * $$-quoted function body stays whole); SQLite trigger bodies (BEGIN … END;) are not supported.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { Database } from './database.js';
import { namingStatement } from './db-errors.js';
import { lexOptions } from './dialect.js';
import { splitStatements } from './lexer.js';
import { StatementText } from './placeholders.js';

/** The statements of the file, ready for `Database.run` (no bound values). */
export function readInitFile(path: string, db: Database): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `SQL_INITFILE '${path}' cannot be read: ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`,
    );
  }
  try {
    return splitStatements(text, lexOptions(db.dialect)).map((s) => new StatementText().text(s).build());
  } catch (e) {
    throw new ConfigError(`SQL_INITFILE '${path}': ${describeError(e)}`);
  }
}

/** Runs the statements in order; the error names the statement that failed (1-based). */
export async function runInitStatements(db: Database, path: string, statements: readonly string[]): Promise<void> {
  for (let i = 0; i < statements.length; i++) {
    try {
      await db.runOwn('exec', statements[i]!, {});
    } catch (e) {
      throw namingStatement(e, `SQL_INITFILE '${path}' statement ${i + 1}: `);
    }
  }
}
