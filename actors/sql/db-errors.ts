/**
 * Database failures as Result codes (ARCHITECTURE §4): no connection within SQL_ACQUIRETIMEOUT → 503
 * (retry later: the pool is saturated), the database unreachable or refusing the login → 502 with the
 * driver's reason, a statement over SQL_TIMEOUT → 504, values the database refuses (constraint
 * violations, a value that is not a number for a number column, too long) → 400 because the caller's
 * Data is at fault, anything else the database reports → 502. Messages carry the database's own
 * reason, never the SQL text with values or the connection password.
 */
import { BadInputError, HiveError, TimeoutError, UnavailableError, UpstreamError } from '../../protocol/errors.js';
import type { Dialect } from './dialect.js';

interface DriverError {
  code?: unknown;
  errno?: unknown;
  number?: unknown;
  errorNum?: unknown;
  message?: unknown;
}

const MYSQL_TIMEOUT = new Set([1969, 3024]);
const MYSQL_BAD_VALUE = new Set([1048, 1062, 1216, 1217, 1264, 1265, 1292, 1366, 1406, 1451, 1452, 3819, 4025]);
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
      return typeof d.code === 'string' && /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG)/.test(d.code);
  }
}

/** The error a failed statement is answered with. */
export function mapDbError(e: unknown, dialect: Dialect, limits: { acquireTimeoutMs: number; poolSize: number; timeoutMs: number }): HiveError {
  if (e instanceof HiveError) return e;
  const name = (e as Error | undefined)?.name ?? '';
  const message = (e as Error | undefined)?.message || String(e);
  if (name === 'SequelizeConnectionAcquireTimeoutError') {
    return new UnavailableError(`no database connection became free within ${limits.acquireTimeoutMs} ms (pool of ${limits.poolSize}); retry later`, { cause: e });
  }
  if (/^Sequelize(Connection|ConnectionRefused|AccessDenied|HostNotFound|HostNotReachable|InvalidConnection|ConnectionTimedOut)Error$/.test(name)) {
    return new UpstreamError(`database unavailable: ${message}`, { cause: e });
  }
  const d = driverError(e);
  if (isTimeout(dialect, d, message)) return new TimeoutError(`the statement did not finish within ${limits.timeoutMs} ms and was cancelled (${message})`, { cause: e });
  if (isBadValue(dialect, d)) return new BadInputError(`the database refused the values: ${message}`, { cause: e });
  return new UpstreamError(`database error: ${message}`, { cause: e });
}
