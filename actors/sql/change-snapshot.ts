/**
 * SQL_CHANGESNAPSHOT (README, Change streams): the rows the tables hold when a stream starts, read in
 * one consistent view that matches the stream's start exactly — as Debezium's initial snapshot — so
 * every row is either in the snapshot or a change after it, never both, never neither.
 *
 * PostgreSQL: a temporary replication slot created with an exported snapshot; the rows are read in
 * that snapshot (SET TRANSACTION SNAPSHOT), and only once every one was handed over is the slot copied
 * into the stream's own (pg_copy_logical_replication_slot keeps its position). A node that dies during
 * the snapshot leaves no slot behind (a temporary one ends with its connection): the next start takes
 * the snapshot again. MariaDB: a transaction WITH CONSISTENT SNAPSHOT and the binlog position it
 * matches (binlog_snapshot_file/position); the position is kept only after the last row was handed
 * over, so the same holds.
 */
import pg from 'pg';
import mysql from 'mysql2/promise';
import type { Connection as CoreConnection } from 'mysql2';
import type { DatabaseOptions } from './connection-options.js';
import type { ChangeNames, ChangeTable } from './change-names.js';
import { quoteName } from './dialect.js';
import { pgClientConfig } from './change-setup.js';
import type { BinlogPosition } from './binlog-setup.js';
import { mysqlConfig } from './binlog-setup.js';
import { ConfigError } from '../../protocol/errors.js';

/** Rows fetched at a time from a PostgreSQL cursor. */
const FETCH = 500;

/** Hands one row over; false when the reader stopped (the snapshot then ends unfinished). */
export type SnapshotRow = (table: ChangeTable, row: Record<string, unknown>, index: number) => Promise<boolean>;

/** The temporary slot a snapshot is taken with, beside the stream's own name. */
function snapshotSlot(slot: string): string {
  return `${slot.slice(0, 54)}_snapshot`;
}

/**
 * Takes the snapshot and creates the stream's slot at its position. Returns the slot's position
 * (the consistent point), or undefined when `onRow` stopped it first (no slot is created then).
 */
export async function pgSnapshot(
  o: DatabaseOptions,
  names: ChangeNames,
  onLsn: (lsn: string) => void,
  onRow: SnapshotRow,
): Promise<string | undefined> {
  const replication = new pg.Client(pgClientConfig(o, true));
  const reader = new pg.Client(pgClientConfig(o));
  await replication.connect();
  try {
    await reader.connect();
    const temp = snapshotSlot(names.slot);
    // the exported snapshot lives while the replication connection stays idle: it does nothing more until the copy
    const created = await replication.query<{ consistent_point: string; snapshot_name: string }>(
      `CREATE_REPLICATION_SLOT ${temp} TEMPORARY LOGICAL pgoutput EXPORT_SNAPSHOT`,
    );
    const { consistent_point: lsn, snapshot_name: snapshot } = created.rows[0]!;
    onLsn(lsn);
    await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await reader.query(`SET TRANSACTION SNAPSHOT '${snapshot.replace(/'/g, "''")}'`);
    for (const table of names.tables) {
      await reader.query(
        `DECLARE snapshot_rows NO SCROLL CURSOR FOR SELECT * FROM ${quoteName('postgres', `${table.schema}.${table.name}`)}`,
      );
      let index = 0;
      for (;;) {
        const batch = await reader.query<Record<string, unknown>>(`FETCH ${FETCH} FROM snapshot_rows`);
        for (const row of batch.rows) if (!(await onRow(table, row, index++))) return undefined;
        if (batch.rows.length < FETCH) break;
      }
      await reader.query('CLOSE snapshot_rows');
    }
    await reader.query('COMMIT');
    await reader.query('SELECT pg_copy_logical_replication_slot($1, $2, false)', [temp, names.slot]);
    return lsn;
  } finally {
    await reader.end().catch(() => undefined);
    await replication.end().catch(() => undefined);
  }
}

/**
 * Takes the snapshot in a consistent read and returns the binlog position it matches, or undefined
 * when `onRow` stopped it first.
 */
export async function binlogSnapshot(
  o: DatabaseOptions,
  names: ChangeNames,
  onPosition: (p: BinlogPosition) => void,
  onRow: SnapshotRow,
): Promise<BinlogPosition | undefined> {
  const conn = await mysql.createConnection(mysqlConfig(o));
  try {
    await conn.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await conn.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    // MariaDB tells the binlog position the snapshot matches (MySQL does not: there it is refused)
    const [status] = await conn.query<mysql.RowDataPacket[]>("SHOW STATUS LIKE 'binlog_snapshot_%'");
    const file = status.find((r) => r.Variable_name === 'Binlog_snapshot_file')?.Value as string | undefined;
    const at = status.find((r) => r.Variable_name === 'Binlog_snapshot_position')?.Value as string | undefined;
    if (!file || !at)
      throw new ConfigError(
        "SQL_CHANGESNAPSHOT needs MariaDB's snapshot position (status binlog_snapshot_file/position), which this server does not report (MySQL): leave SQL_CHANGESNAPSHOT false and copy the existing rows otherwise",
      );
    const position = { file, position: Number(at) };
    onPosition(position);
    for (const table of names.tables) {
      // the driver's own connection streams a result (its promise wrapper reads it whole)
      const core = (conn as unknown as { connection: CoreConnection }).connection;
      const rows = core
        .query(`SELECT * FROM ${quoteName('mysql', `${table.schema}.${table.name}`)}`)
        .stream({ highWaterMark: 256 });
      let index = 0;
      try {
        for await (const row of rows as AsyncIterable<Record<string, unknown>>)
          if (!(await onRow(table, row, index++))) return undefined;
      } finally {
        rows.destroy();
      }
    }
    await conn.query('COMMIT');
    return position;
  } finally {
    await conn.end().catch(() => conn.destroy());
  }
}
