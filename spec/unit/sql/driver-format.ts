/**
 * What a driver receives for a statement: Sequelize's own bind rewriting (formatBindParameters) for
 * the dialect, with Sequelize constructed without connecting — how the statements of SQL Server and
 * Oracle, which have no server here, are checked.
 */
import { Sequelize } from 'sequelize';
import type { Dialect } from '../../../actors/sql/dialect.js';

export function formatBind(
  dialect: Dialect,
  sql: string,
  bind: Record<string, unknown> | unknown[],
): [string, unknown] {
  const seq = new Sequelize({ dialect, logging: false });
  const Query = (
    (seq as unknown as { dialect: unknown }).dialect as {
      Query: { formatBindParameters(sql: string, v: unknown, d: string): [string, unknown] };
    }
  ).Query;
  return Query.formatBindParameters(sql, bind, dialect);
}
