/**
 * Set-up of a MariaDB/MySQL change stream (README, Change streams): the server settings and
 * privileges the row-based binlog needs, checked with a one-line refusal naming what is missing
 * (`log_bin`, `binlog_format=ROW`, REPLICATION SLAVE, BINLOG MONITOR), the tables checked, and the
 * binlog position where a new stream starts. Runs on an ordinary mysql2 connection; binlog-changes.ts
 * then reads the binlog on a replication connection (@vlasky/zongji).
 */
import mysql from 'mysql2/promise';
import type { ConnectionOptions } from 'mysql2';
import { createHash } from 'node:crypto';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { DatabaseOptions } from './connection-options.js';
import type { ChangeNames } from './change-names.js';

/** mysql2 options of the service's database. DATETIME values are read as UTC, as the SQL service's Sequelize reads them. */
export function mysqlConfig(o: DatabaseOptions): ConnectionOptions {
  return {
    ...(o.protocol === 'unix' ? { socketPath: o.host } : { host: o.host, port: o.port }),
    user: o.username,
    password: o.password,
    ...(o.database.trim() !== '' ? { database: o.database } : {}),
    timezone: 'Z',
    // BIGINT beyond 2^53 as an exact string (a snapshot's rows; the binlog decoder does the same)
    supportBigNumbers: true,
    connectTimeout: 10_000,
  };
}

/** A binlog position, `file:position`. */
export interface BinlogPosition {
  file: string;
  position: number;
}

export function positionText(p: BinlogPosition): string {
  return `${p.file}:${p.position}`;
}

/** The position of a text `file:position`; undefined when it is not one. */
export function parsePosition(text: string): BinlogPosition | undefined {
  const at = text.lastIndexOf(':');
  const file = text.slice(0, at);
  const position = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isSafeInteger(position) || position < 4) return undefined;
  return { file, position };
}

/**
 * The replica server id the stream reads with, from its NAME: a server ends the older of two
 * replication connections with one id, so two streams of different NAMEs must differ, and a stream
 * that takes over (another node, a restart) ends the connection the old reader left open.
 */
export function binlogServerId(serviceName: string): number {
  // 2^31 ids above 1,000,000: clear of the small ids servers are usually given
  return 1_000_000 + (createHash('sha256').update(`hivenode:${serviceName}`).digest().readUInt32BE(0) % 2 ** 31);
}

const ACCESS_DENIED = new Set([
  'ER_SPECIFIC_ACCESS_DENIED_ERROR',
  'ER_ACCESS_DENIED_ERROR',
  'ER_DBACCESS_DENIED_ERROR',
  'ER_TABLEACCESS_DENIED_ERROR',
]);

function isAccessDenied(e: unknown): boolean {
  return ACCESS_DENIED.has((e as { code?: string }).code ?? '');
}

/** The refusal of a user without the replication privileges, naming the GRANT to run. */
export function privilegeRefusal(user: string, missing: string): ConfigError {
  return new ConfigError(
    `SQL_CHANGES needs the ${missing} privilege for SQL_USERNAME '${user}': GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '${user}'@'%' (BINLOG MONITOR is REPLICATION CLIENT on MySQL and MariaDB before 10.5)`,
  );
}

/**
 * Checks log_bin, binlog_format=ROW, the REPLICATION SLAVE privilege and the tables. Returns notes for
 * the log (binlog_row_image not FULL: updates and deletes carry only some old values). A ConfigError
 * (one line) when the server cannot stream; other errors (the server does not answer) are thrown as
 * they are, for a retry.
 */
export async function prepareBinlog(o: DatabaseOptions, names: ChangeNames): Promise<{ notes: string[] }> {
  const conn = await mysql.createConnection(mysqlConfig(o));
  const notes: string[] = [];
  try {
    const [settings] = await conn.query<mysql.RowDataPacket[]>(
      'SELECT @@GLOBAL.log_bin AS log_bin, @@GLOBAL.binlog_format AS format, @@GLOBAL.binlog_row_image AS image, CURRENT_USER() AS user',
    );
    const s = settings[0]!;
    if (Number(s.log_bin) !== 1)
      throw new ConfigError(
        'SQL_CHANGES needs the MariaDB/MySQL server setting log_bin (the binary log is off): start the server with log_bin (e.g. log_bin=mariadb-bin in my.cnf), binlog_format=ROW and a server_id, and restart it',
      );
    if (String(s.format).toUpperCase() !== 'ROW')
      throw new ConfigError(
        `SQL_CHANGES needs the server setting binlog_format=ROW (it is '${String(s.format)}'): SET GLOBAL binlog_format = 'ROW' (and binlog_format=ROW in my.cnf); sessions already open keep the old format until they reconnect`,
      );
    if (String(s.image).toUpperCase() !== 'FULL')
      notes.push(
        `binlog_row_image is '${String(s.image)}', not FULL: updates and deletes carry only some of their columns' old values (before_<column>), and an update's Data only the changed columns`,
      );
    const [user, host] = splitUser(String(s.user));
    // the privileges granted to the user itself (a role's grants are not seen here: the read then fails with the same refusal)
    const [privs] = await conn.query<mysql.RowDataPacket[]>(
      'SELECT PRIVILEGE_TYPE AS p FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?',
      [`'${user}'@'${host}'`],
    );
    const have = new Set(privs.map((r) => String(r.p).toUpperCase()));
    if (!have.has('REPLICATION SLAVE')) throw privilegeRefusal(o.username, 'REPLICATION SLAVE');
    for (const t of names.tables) {
      const [found] = await conn.query<mysql.RowDataPacket[]>(
        'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
        [t.schema, t.name],
      );
      if (found.length === 0)
        throw new ConfigError(
          `SQL_TABLE: table '${t.qualified}' does not exist (or SQL_USERNAME '${o.username}' may not see it)`,
        );
    }
  } finally {
    await conn.end().catch(() => undefined);
  }
  return { notes };
}

function splitUser(text: string): [string, string] {
  const at = text.lastIndexOf('@');
  return at < 0 ? [text, '%'] : [text.slice(0, at), text.slice(at + 1)];
}

/** The end of the server's binlog now: where a new stream starts reading. */
export async function binlogEnd(o: DatabaseOptions): Promise<BinlogPosition> {
  const conn = await mysql.createConnection(mysqlConfig(o));
  try {
    return await masterPosition(conn, o);
  } finally {
    await conn.end().catch(() => undefined);
  }
}

/** SHOW MASTER STATUS on a connection: the current binlog file and position. */
export async function masterPosition(conn: mysql.Connection, o: DatabaseOptions): Promise<BinlogPosition> {
  let rows: mysql.RowDataPacket[];
  try {
    [rows] = await conn.query<mysql.RowDataPacket[]>('SHOW MASTER STATUS');
  } catch (e) {
    if (isAccessDenied(e)) throw privilegeRefusal(o.username, 'BINLOG MONITOR');
    throw e;
  }
  const r = rows[0];
  if (!r)
    throw new ConfigError(
      'SQL_CHANGES needs the MariaDB/MySQL server setting log_bin (SHOW MASTER STATUS shows no binary log): start the server with log_bin and binlog_format=ROW',
    );
  return { file: String(r.File), position: Number(r.Position) };
}

/**
 * A failure of the binlog connection as the user must see it: a refused dump (no REPLICATION SLAVE)
 * or a position the server no longer has (its binlog purged or reset) is a ConfigError naming the
 * fix; anything else (the server went away) is returned as it is, for a retry.
 */
export function binlogFailure(e: unknown, o: DatabaseOptions, from: string, where: string): unknown {
  if (isAccessDenied(e)) return privilegeRefusal(o.username, 'REPLICATION SLAVE');
  const errno = (e as { errno?: number }).errno;
  // 1236 ER_MASTER_FATAL_ERROR_READING_BINLOG: the file or position is gone (purged, RESET MASTER)
  if (errno === 1236)
    return new ConfigError(
      `SQL_CHANGES: the server no longer has the binlog at ${from} (kept in ${where}): ${describeError(e)}; the changes since are lost to this stream — remove the position from ${where} to start at the current end, and keep binlogs longer (expire_logs_days / binlog_expire_logs_seconds)`,
    );
  return e;
}
