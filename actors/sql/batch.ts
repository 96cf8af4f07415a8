/**
 * The rows one message writes through a multi-row statement (rows.ts), cut into statements. With
 * SQL_BATCH each SQL_VALUEPARAMS field carries N values and row i takes value i of each field; the
 * fields must be equally long (else 400 naming them) and N at most SQL_MAXBATCH (else 413). Without
 * it (an UPSERT) the message is one row of first values, [] being NULL as for INSERT. A batch has no
 * NULL: every value is the string given.
 *
 * An UPSERT batch may name each key once: the same key twice would be written twice in one statement,
 * which PostgreSQL and MERGE refuse and MySQL and SQLite resolve by order, and across statements of
 * one batch would depend on where the chunks are cut. Keys are compared as the strings given.
 */
import { BadInputError, TooLargeError } from '../../protocol/errors.js';
import type { ValueMap } from '../../protocol/message.js';
import type { RowsStatement } from './rows.js';
import { BINDS_BY_POSITION } from './rows.js';

type Value = string | null;

/** One statement of a batch: its text, its bound values (rows.ts BINDS_BY_POSITION), and the rows it carries. */
export interface RowsChunk {
  sql: string;
  bind: Value[] | Record<string, Value>;
  rows: number;
}

/** The bind of `values` (row by row, column by column) for the statement's engine. */
function bindOf(statement: RowsStatement, values: Value[]): RowsChunk['bind'] {
  if (BINDS_BY_POSITION.has(statement.dialect)) return values;
  const bind: Record<string, Value> = {};
  values.forEach((v, i) => (bind[`p${i + 1}`] = v));
  return bind;
}

/** The value lists of the statement's columns, by position (SQL_VALUEPARAMS may name one twice). */
function columnLists(statement: RowsStatement, data: ValueMap): (readonly string[])[] {
  return statement.names.map((name) => {
    if (!Object.hasOwn(data, name))
      throw new BadInputError(`Data '${name}' is missing (it fills a placeholder of SQL_VALUEPARAMS)`);
    return data[name]!;
  });
}

/** The rows of one batch message: N, checked against the fields' lengths and SQL_MAXBATCH. */
function batchRows(statement: RowsStatement, lists: (readonly string[])[], maxBatch: number): number {
  const rows = lists[0]?.length ?? 0;
  if (lists.some((l) => l.length !== rows)) {
    const lengths = [...new Set(statement.names)]
      .map((n) => `${n} ${lists[statement.names.indexOf(n)]!.length}`)
      .join(', ');
    throw new BadInputError(
      `SQL_BATCH: the value fields differ in length (${lengths}); row i takes value i of each field, so each must carry one value per row`,
    );
  }
  if (rows > maxBatch)
    throw new TooLargeError(`SQL_BATCH: ${rows} rows in one message, more than SQL_MAXBATCH (${maxBatch})`);
  return rows;
}

/** 400 when two rows of an UPSERT batch carry the same key. */
function checkKeysOnce(statement: RowsStatement, lists: (readonly string[])[], rows: number): void {
  if (statement.kind !== 'upsert' || rows < 2) return;
  const seen = new Map<string, number>();
  for (let r = 0; r < rows; r++) {
    const values = statement.keys.map((k) => lists[k]![r]!);
    const id = values.length === 1 ? values[0]! : JSON.stringify(values);
    const first = seen.get(id);
    if (first !== undefined) {
      const named = statement.keys.map((k, i) => `${statement.columns[k]} ${JSON.stringify(values[i])}`).join(', ');
      throw new BadInputError(
        `SQL_KEYCOLUMNS: rows ${first + 1} and ${r + 1} of the batch have the same key (${named}); a batch may write each key once`,
      );
    }
    seen.set(id, r);
  }
}

/**
 * The statements writing a message's rows, each carrying as many rows as the engine allows
 * (`statement.maxRows`), or `perStatement` (SQL_ROWCODES redoes the rows one by one); none for a batch of no rows. Errors are 400/413 naming what is wrong.
 */
export function rowsChunks(
  statement: RowsStatement,
  data: ValueMap,
  batch: { on: boolean; max: number },
  perStatement = statement.maxRows,
): RowsChunk[] {
  const lists = columnLists(statement, data);
  if (!batch.on)
    return [
      {
        sql: statement.sql(1),
        bind: bindOf(
          statement,
          lists.map((l) => l[0] ?? null),
        ),
        rows: 1,
      },
    ];
  const rows = batchRows(statement, lists, batch.max);
  checkKeysOnce(statement, lists, rows);
  const chunks: RowsChunk[] = [];
  const columns = lists.length;
  for (let start = 0; start < rows; start += perStatement) {
    const count = Math.min(perStatement, rows - start);
    const values = new Array<Value>(count * columns);
    let n = 0;
    for (let r = start; r < start + count; r++) for (let c = 0; c < columns; c++) values[n++] = lists[c]![r]!;
    chunks.push({ sql: statement.sql(count), bind: bindOf(statement, values), rows: count });
  }
  return chunks;
}
