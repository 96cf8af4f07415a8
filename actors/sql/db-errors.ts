/**
 * Database failures as Result codes (docs/ARCHITECTURE.md, Codes and errors): no connection within
 * SQL_ACQUIRETIMEOUT → 503 (retry later: the pool is saturated), the database unreachable or
 * refusing the login → 502 with the driver's reason, a statement over SQL_TIMEOUT → 504, values the
 * database refuses (constraint violations, a value that is not a number for a number column, too
 * long, a LIKE pattern too complex) → 400 because the caller's Data is at fault, anything else the
 * database reports → 502. Values are told apart by the engine's error code (SQLSTATE class 22/23,
 * MySQL and SQL Server error numbers, ORA- numbers, SQLite result codes); only SQLite reports value
 * errors under the generic SQLITE_ERROR, so there the message is read. Messages carry the
 * database's own reason (from the driver, not Sequelize's "Validation error", and cut to a readable
 * length, since it may quote the value), never the SQL text or the connection password.
 */
import {
  BadInputError,
  HiveError,
  TimeoutError,
  UnavailableError,
  UpstreamError,
  describeError,
} from '../../protocol/errors.js';
import type { Dialect } from './dialect.js';

interface DriverError {
  code?: unknown;
  errno?: unknown;
  number?: unknown;
  errorNum?: unknown;
  message?: unknown;
}

const MYSQL_TIMEOUT = new Set([1969, 3024]);
/**
 * ER_BAD_NULL_ERROR 1048, ER_DUP_ENTRY 1062, ER_NO_REFERENCED_ROW 1216, ER_ROW_IS_REFERENCED 1217,
 * ER_INVALID_USE_OF_NULL 1138, ER_REGEXP_ERROR 1139 (MariaDB), ER_WARN_DATA_OUT_OF_RANGE 1264,
 * WARN_DATA_TRUNCATED 1265, ER_TRUNCATED_WRONG_VALUE 1292, ER_INVALID_CHARACTER_STRING 1300,
 * ER_DIVISION_BY_ZERO 1365, ER_TRUNCATED_WRONG_VALUE_FOR_FIELD 1366, ER_ILLEGAL_VALUE_FOR_TYPE 1367,
 * ER_DATA_TOO_LONG 1406, ER_WRONG_VALUE_FOR_TYPE 1411, ER_ROW_IS_REFERENCED_2 1451,
 * ER_NO_REFERENCED_ROW_2 1452, ER_DATA_OUT_OF_RANGE 1690, ER_INVALID_JSON_TEXT 3140,
 * ER_CHECK_CONSTRAINT_VIOLATED 3819, ER_CONSTRAINT_FAILED 4025 (MariaDB).
 */
const MYSQL_BAD_VALUE = new Set([
  1048, 1062, 1138, 1139, 1216, 1217, 1264, 1265, 1292, 1300, 1365, 1366, 1367, 1406, 1411, 1451, 1452, 1690, 3140,
  3819, 4025,
]);
/** SQLite's value errors reported as SQLITE_ERROR: a LIKE/GLOB pattern over its complexity limit, a bad ESCAPE, malformed JSON. */
const SQLITE_BAD_VALUE_MESSAGE =
  /LIKE or GLOB pattern too complex|ESCAPE expression must be a single character|malformed JSON/;
/** The longest engine reason quoted in an answer (a refused value may be quoted in it). */
const REASON_LIMIT = 500;
const MSSQL_BAD_VALUE = new Set([220, 241, 245, 515, 547, 2601, 2627, 2628, 8114, 8115, 8152]);
const ORACLE_BAD_VALUE = new Set([1, 1400, 1438, 1722, 1858, 1861, 2290, 2291, 2292, 12899]);

function driverError(e: unknown): DriverError {
  const outer = e as { parent?: unknown; original?: unknown };
  return ((outer.parent ?? outer.original ?? e) as DriverError | undefined) ?? {};
}

function isTimeout(dialect: Dialect, d: DriverError, message: string): boolean {
  switch (dialect) {
    case 'postgres':
      return d.code === '57014';
    case 'mysql':
      return MYSQL_TIMEOUT.has(Number(d.errno));
    case 'mssql':
      return d.code === 'ETIMEOUT';
    case 'oracle':
      return /\b(NJS-123|DPI-1067|ORA-01013)\b/.test(message);
    case 'sqlite':
      return false;
  }
}

function isBadValue(dialect: Dialect, d: DriverError): boolean {
  switch (dialect) {
    case 'postgres':
      // SQLSTATE class 22 = data exception, 23 = integrity constraint violation
      return typeof d.code === 'string' && /^2[23]/.test(d.code);
    case 'mysql':
      return MYSQL_BAD_VALUE.has(Number(d.errno));
    case 'mssql':
      return MSSQL_BAD_VALUE.has(Number(d.number));
    case 'oracle':
      return ORACLE_BAD_VALUE.has(Number(d.errorNum));
    case 'sqlite':
      if (typeof d.code !== 'string') return false;
      return (
        /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG)/.test(d.code) ||
        (d.code === 'SQLITE_ERROR' && typeof d.message === 'string' && SQLITE_BAD_VALUE_MESSAGE.test(d.message))
      );
  }
}

/** The driver's reason, cut to REASON_LIMIT characters. */
function reasonOf(d: DriverError, fallback: string): string {
  const text = typeof d.message === 'string' && d.message !== '' ? d.message : fallback;
  return text.length <= REASON_LIMIT ? text : `${text.slice(0, REASON_LIMIT)}… (${text.length} characters)`;
}

/** The error a failed statement is answered with. */
export function mapDbError(
  e: unknown,
  dialect: Dialect,
  limits: { acquireTimeoutMs: number; poolSize: number; timeoutMs: number },
): HiveError {
  if (e instanceof HiveError) return e;
  const name = (e as Error | undefined)?.name ?? '';
  const message = (e as Error | undefined)?.message || String(e);
  if (name === 'SequelizeConnectionAcquireTimeoutError') {
    return new UnavailableError(
      `no database connection became free within ${limits.acquireTimeoutMs} ms (pool of ${limits.poolSize}); retry later`,
      { cause: e },
    );
  }
  if (
    /^Sequelize(Connection|ConnectionRefused|AccessDenied|HostNotFound|HostNotReachable|InvalidConnection|ConnectionTimedOut)Error$/.test(
      name,
    )
  ) {
    return new UpstreamError(`database unavailable: ${message}`, { cause: e });
  }
  const d = driverError(e);
  if (isTimeout(dialect, d, message))
    return new TimeoutError(
      `the statement did not finish within ${limits.timeoutMs} ms and was cancelled (${message})`,
      { cause: e },
    );
  if (isBadValue(dialect, d))
    return new BadInputError(`the database refused the values: ${reasonOf(d, message)}`, { cause: e });
  return new UpstreamError(`database error: ${message}`, { cause: e });
}

/** The error with `prefix` before its message (which statement failed), of the same class so of the same Code. */
export function namingStatement(e: unknown, prefix: string): Error {
  const message = `${prefix}${describeError(e)}`;
  return e instanceof HiveError
    ? new (e.constructor as new (m: string, o: { cause: unknown }) => HiveError)(message, { cause: e })
    : new Error(message, { cause: e });
}
