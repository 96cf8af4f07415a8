/**
 * SQL_ROWCODES (README, The SQL service: many rows in one message): the answer of a SQL_BATCH
 * message carries Data `codes`, one per row in the order of the rows, and `messages` beside them,
 * the shape a queue's batch reads (README, The queue: Batches) so that one refused row fails alone.
 * The rows go in as they always do (one multi-row statement where the engine allows); only when
 * that fails for a row's values are they written again one by one, each in its own savepoint
 * (transaction.ts, runEach), and the refused rows answer their own Code.
 */
import { Code } from '../../protocol/codes.js';
import { codeOf, describeError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import type { Outcome, WriteOutcome } from './outcome.js';
import { rowsWrittenResult } from './results.js';

/** A multi-row write's statement outcome as a write (a statement that answered rows wrote none). */
export function writtenOf(outcome: Outcome): WriteOutcome {
  return 'affected' in outcome ? outcome : { affected: 0 };
}

/** Whether a failed multi-row write is worth redoing row by row: the database refused values (a 4xx), not itself (5xx, timeout). */
export function refusedForValues(error: Error): boolean {
  const code = codeOf(error);
  return code >= 400 && code < 500;
}

/** The answer of rows written at once: every row's code 200. */
export function allRowsWritten(outcomes: readonly Outcome[], rows: number): Result {
  const result = rowsWrittenResult(outcomes.map(writtenOf));
  result.Data.codes = new Array<string>(rows).fill(String(Code.Success));
  return result;
}

/** The answer of rows redone one by one: each row's outcome, or the Code and reason that refused it; 207 when any was refused. */
export function eachRowResult(each: readonly (Outcome | Error)[]): Result {
  const written: WriteOutcome[] = [];
  const codes: string[] = [];
  const messages: string[] = [];
  for (const o of each) {
    if (o instanceof Error) {
      codes.push(String(codeOf(o)));
      messages.push(describeError(o));
    } else {
      written.push(writtenOf(o));
      codes.push(String(Code.Success));
      messages.push('');
    }
  }
  const result = rowsWrittenResult(written);
  result.Data.codes = codes;
  result.Data.messages = messages;
  const refused = each.length - written.length;
  if (refused > 0) {
    result.Code = Code.MultiStatus;
    result.Message = `${refused} of ${each.length} rows refused (Data codes and messages, one per row); the other rows are written`;
  }
  return result;
}
