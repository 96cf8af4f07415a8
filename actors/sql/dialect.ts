/**
 * Engine families and what differs between them in generated SQL: how an identifier is quoted, how
 * rows are limited, which literal syntax the scanner must know, and the Sequelize dialect. MariaDB
 * is driven through the mysql dialect (mysql2; docs/ARCHITECTURE.md, Library choices).
 */
import type { LexOptions } from './lexer.js';

export type Engine = 'postgres' | 'mysql' | 'mariadb' | 'mssql' | 'oracle' | 'sqlite';

/** The Sequelize dialect of an engine (also the family for quoting and limits). */
export type Dialect = 'postgres' | 'mysql' | 'mssql' | 'oracle' | 'sqlite';

export function dialectOf(engine: Engine): Dialect {
  return engine === 'mariadb' ? 'mysql' : engine;
}

export function lexOptions(dialect: Dialect): LexOptions {
  return {
    backslashEscapes: dialect === 'mysql',
    bracketQuotes: dialect === 'mssql',
    dollarQuotes: dialect === 'postgres',
    hashComments: dialect === 'mysql',
    dashCommentNeedsSpace: dialect === 'mysql',
  };
}

/**
 * One identifier part: ASCII letters, digits and underscore, not starting with a digit, at most 128
 * characters (the longest any of the engines allows). Nothing else is accepted, so quoting never
 * has to escape anything; the quote characters are refused by the pattern itself.
 */
const IDENTIFIER_PART = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Quotes one validated identifier part for the dialect. */
export function quotePart(dialect: Dialect, part: string): string {
  if (!IDENTIFIER_PART.test(part))
    throw new Error(`'${part}' is not a valid identifier (letters, digits and _, not starting with a digit)`);
  switch (dialect) {
    case 'mysql':
      return `\`${part}\``;
    case 'mssql':
      return `[${part}]`;
    case 'postgres':
    case 'oracle':
    case 'sqlite':
      return `"${part}"`;
  }
}

/** Quotes a possibly qualified name (`schema.table`, `table.column`), each part validated. */
export function quoteName(dialect: Dialect, name: string, maxParts = 2): string {
  const parts = name.split('.');
  if (parts.length > maxParts) throw new Error(`'${name}' has more than ${maxParts} dot-separated parts`);
  return parts.map((p) => quotePart(dialect, p.trim())).join('.');
}

/** Text of LIMIT/OFFSET for the dialect; `limit`/`offset` are bind tokens or validated integers. */
export function limitClause(
  dialect: Dialect,
  limit: string | undefined,
  offset: string | undefined,
  hasOrderBy: boolean,
): string {
  if (limit === undefined && offset === undefined) return '';
  switch (dialect) {
    case 'postgres':
      return [limit !== undefined ? ` LIMIT ${limit}` : '', offset !== undefined ? ` OFFSET ${offset}` : ''].join('');
    case 'mysql':
      // MySQL has no OFFSET without LIMIT; its manual suggests the largest unsigned BIGINT
      return ` LIMIT ${limit ?? '18446744073709551615'}${offset !== undefined ? ` OFFSET ${offset}` : ''}`;
    case 'sqlite':
      return ` LIMIT ${limit ?? '-1'}${offset !== undefined ? ` OFFSET ${offset}` : ''}`;
    case 'mssql':
    case 'oracle': {
      // OFFSET … FETCH is SQL:2008; SQL Server accepts it only after an ORDER BY
      const order = dialect === 'mssql' && !hasOrderBy ? ' ORDER BY (SELECT NULL)' : '';
      return `${order} OFFSET ${offset ?? '0'} ROWS${limit !== undefined ? ` FETCH NEXT ${limit} ROWS ONLY` : ''}`;
    }
  }
}
