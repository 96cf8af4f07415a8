/**
 * Raw transactions (SQL_RAWTRANSACTION): SQL_RAWVALUE holds several statements separated by `;`,
 * split by the SQL scanner (lexer.ts) so that a `;` inside a string, a quoted identifier, a comment or
 * a PostgreSQL dollar-quoted body does not split. Each statement is built like a single raw statement,
 * its `{{ name }}` placeholders bound on their own (the engines bind per statement); empty statements
 * (`;;`, a trailing `;`, only comments) are dropped. What a statement answers is read from its text:
 * one that returns rows (SELECT, WITH, VALUES, SHOW, …, or a RETURNING clause) is run as a query, any
 * other as exec; SQL_RAWACTION=query makes the last one a query whatever it starts with (a CALL of a
 * procedure that returns rows). The answer has `affected` per statement and the rows of the last
 * statement run as a query.
 */
import { emptyMap, success } from '../../protocol/message.js';
import type { Result } from '../../protocol/message.js';
import { describeError } from '../../protocol/errors.js';
import type { Outcome } from './outcome.js';
import type { Dialect } from './dialect.js';
import { lexOptions } from './dialect.js';
import type { LexOptions } from './lexer.js';
import { lexSql, splitStatements } from './lexer.js';
import { rowsResult } from './results.js';
import type { ParamSource } from './placeholders.js';
import type { Plan, RawSettings } from './statement.js';
import { SettingError, rawAction, rawStatement } from './statement.js';

/**
 * The most statements one raw transaction may hold. A transaction holds its connection (and its
 * locks) from the first statement to the last; a script longer than this belongs in SQL_INITFILE
 * or a stored procedure, not in one message.
 */
export const TRANSACTION_STATEMENT_LIMIT = 100;

/** More statements than TRANSACTION_STATEMENT_LIMIT: a start failure when configured, 413 from a control. */
export class TooManyStatementsError extends SettingError {}

/** The statements of one raw transaction, run in order on one connection. */
export interface TransactionPlan {
  kind: 'transaction';
  statements: Plan[];
  /** The statements' text joined, for logs. */
  sql: string;
  /** Every statement's placeholders, for logs: each statement binds its own (`statements[i].params`). */
  params: ParamSource[];
  /** Raw SQL names no tables the catalog check could read. */
  names?: undefined;
  /** Not a multi-row write (batch.ts). */
  rows?: undefined;
}

/** First words of statements that answer rows; `(` lets a parenthesised SELECT count. */
const ROWS_FIRST_WORD = /^\(*\s*(?:select|with|values|show|explain|pragma|describe|desc|table)\b/i;
/** A clause that makes a write answer rows: RETURNING (PostgreSQL, SQLite, MariaDB), OUTPUT inserted./deleted. (SQL Server). */
const ROWS_CLAUSE = /\breturning\b|\boutput\s+(?:inserted|deleted)\b/i;

/**
 * Statements that would begin, commit or roll back a transaction of their own: the service begins
 * and ends it, and a COMMIT in the middle would make the statements after it run outside it. (ROLLBACK
 * TO SAVEPOINT stays inside and is allowed, except on SQL Server, whose ROLLBACK TRANSACTION may end it.) On SQL Server a BEGIN alone opens a block, not a transaction.
 */
const TRANSACTION_CONTROL =
  /^(?:begin|start\s+transaction|commit|end|abort|rollback(?!\s+(?:(?:work|transaction)\s+)?to\b))\b/i;
const MSSQL_TRANSACTION_CONTROL = /^(?:begin\s+(?:tran|transaction|distributed)|commit|rollback)\b/i;

function controlsTransaction(text: string, dialect: Dialect): boolean {
  return (dialect === 'mssql' ? MSSQL_TRANSACTION_CONTROL : TRANSACTION_CONTROL).test(text);
}

/** Whether a statement answers rows, read from its first word and its clauses outside literals and comments. */
export function returnsRows(text: string, lex: LexOptions): boolean {
  if (ROWS_FIRST_WORD.test(text)) return true;
  return lexSql(text, lex).some((seg) => seg.kind === 'code' && ROWS_CLAUSE.test(seg.text));
}

/** Builds the statements of a raw transaction; errors name SQL_RAWVALUE and the statement at fault. */
export function buildRawTransaction(dialect: Dialect, s: RawSettings): TransactionPlan {
  const action = rawAction(s.SQL_RAWACTION);
  const lex = lexOptions(dialect);
  let texts: string[];
  try {
    texts = splitStatements(s.SQL_RAWVALUE, lex);
  } catch (e) {
    throw new SettingError('SQL_RAWVALUE', describeError(e));
  }
  if (texts.length === 0) throw new SettingError('SQL_RAWVALUE', 'raw mode needs the SQL text');
  if (texts.length > TRANSACTION_STATEMENT_LIMIT) {
    throw new TooManyStatementsError(
      'SQL_RAWVALUE',
      `${texts.length} statements; a raw transaction holds at most ${TRANSACTION_STATEMENT_LIMIT}`,
    );
  }
  const statements = texts.map((text, i) => {
    const which = `statement ${i + 1} of ${texts.length}`;
    if (controlsTransaction(text, dialect))
      throw new SettingError(
        'SQL_RAWVALUE',
        `${which}: '${text.split(/\s/, 1)[0]}' would end or nest the transaction; the service begins it and commits or rolls it back`,
      );
    const kind = (action === 'query' && i === texts.length - 1) || returnsRows(text, lex) ? 'query' : 'exec';
    try {
      return rawStatement(dialect, kind, text, `SQL_RAWVALUE ${which}`);
    } catch (e) {
      throw new SettingError('SQL_RAWVALUE', `${which}: ${describeError(e)}`);
    }
  });
  const params = statements
    .flatMap((st) => st.params)
    .filter((p, i, all) => all.findIndex((q) => q.name === p.name) === i);
  return { kind: 'transaction', statements, sql: statements.map((st) => st.sql).join('; '), params };
}

/**
 * The answer of a committed transaction: Data `affected` with one count per statement (for a
 * statement run as a query, the rows it returned) and, when a statement returned rows, the last such
 * statement's rows in the SELECT shape (its columns and `rowcount` in Data, the rows in List).
 */
export function transactionResult(outcomes: readonly Outcome[]): Result {
  let rows: Extract<Outcome, { rows: unknown }> | undefined;
  const affected = outcomes.map((o) => {
    if (!('rows' in o)) return String(o.affected);
    rows = o;
    return String(o.rows.length);
  });
  const result = rows ? rowsResult(rows.rows, rows.columns) : success(emptyMap(), []);
  // the statements' counts win over a column that happens to be named 'affected' (it stays in List)
  result.Data.affected = affected;
  return result;
}
