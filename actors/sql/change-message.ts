/**
 * One changed row as a hive message (README, Change streams): Class SQL_POLLCLASS, Operation
 * insert/update/delete, Data the row's columns (new values; a delete's old values), Control `table`,
 * `position`, `commit_time`, `tx`, the old values as `before_<column>` where the server sends them
 * (REPLICA IDENTITY FULL, binlog_row_image FULL), and an `idempotency-key` made of the stream (the
 * slot), the transaction's position (PostgreSQL: its commit LSN; MariaDB: where it begins in the
 * binlog) and the row's place in it — the same whenever the transaction is read again after a restart.
 *
 * Values are strings as in a SELECT result (results.ts: dates ISO 8601, binary base64, JSON as JSON
 * text, numeric exactly as the server wrote it); NULL is an empty list, so it differs from ''.
 */
import { createHash } from 'node:crypto';
import type { Message, ValueMap } from '../../protocol/message.js';
import { emptyMap, isForbiddenKey, makeMessage } from '../../protocol/message.js';
import { IDEMPOTENCY_KEY, fitsIdempotencyKey } from '../../protocol/idempotency.js';
import { textValue } from './results.js';

/** `read`: a row of the snapshot taken before the stream starts (SQL_CHANGESNAPSHOT). */
export type ChangeOperation = 'insert' | 'update' | 'delete' | 'read';

export interface RowChange {
  operation: ChangeOperation;
  /** schema.table */
  table: string;
  /** The position of the change record (a WAL LSN; a binlog file:position). */
  position: string;
  /** Its transaction's position (the commit LSN; the binlog file:position of its start) and its place (0-based) among the transaction's row changes. */
  txPosition: string;
  index: number;
  commitTime: Date;
  /** The transaction: PostgreSQL's xid, MariaDB's GTID (domain-server-sequence). */
  tx: number | string;
  values: Record<string, unknown>;
  before: Record<string, unknown> | null;
}

/** A Data (or Control) list of one value; NULL (and an unchanged TOAST value not sent) is the empty list. */
function listOf(v: unknown): string[] {
  return v === null || v === undefined ? [] : [textValue(v)];
}

function put(map: ValueMap, name: string, v: unknown): void {
  map[isForbiddenKey(name) ? `_${name}` : name] = listOf(v);
}

/** The idempotency key of a change: stable across re-reads, within what a queue accepts. */
function changeKey(stream: string, txPosition: string, index: number): string {
  const key = `sql-change:${stream}:${txPosition}:${index}`;
  return fitsIdempotencyKey(key) ? key : `sql-change:sha256:${createHash('sha256').update(key).digest('hex')}`;
}

export function changeMessage(cls: string, stream: string, c: RowChange): Message {
  const Data = emptyMap();
  for (const [k, v] of Object.entries(c.values)) put(Data, k, v);
  const Control: ValueMap = emptyMap();
  Control.table = [c.table];
  Control.position = [c.position];
  Control.commit_time = [c.commitTime.toISOString()];
  Control.tx = [String(c.tx)];
  if (c.before) for (const [k, v] of Object.entries(c.before)) put(Control, `before_${k}`, v);
  Control[IDEMPOTENCY_KEY] = [changeKey(stream, c.txPosition, c.index)];
  return makeMessage({ Class: cls, Operation: c.operation, Control, Data });
}

/** An LSN ('16/B374D848') as a number, and back. */
export function lsnValue(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi ?? '0'}`) << 32n) + BigInt(`0x${lo ?? '0'}`);
}

export function lsnText(v: bigint): string {
  return `${(v >> 32n).toString(16).toUpperCase()}/${(v & 0xffffffffn).toString(16).toUpperCase()}`;
}
