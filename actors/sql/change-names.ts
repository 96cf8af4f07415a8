/**
 * The names of a change stream (README, Change streams): the tables of SQL_TABLE, and on PostgreSQL
 * the replication slot and publication (SQL_CHANGESLOT, SQL_CHANGEPUBLICATION, default
 * hivenode_<NAME>). No driver here: every engine's stream and `hivenode changes drop` read them.
 */
import { ConfigError, describeError } from '../../protocol/errors.js';
import { quoteName } from './dialect.js';
import { parseTable } from './identifiers.js';

/** PostgreSQL names (slots, publications) are at most NAMEDATALEN - 1 bytes. */
const MAX_NAME = 63;
/** What PostgreSQL accepts as a replication slot name. */
const SLOT_NAME = /^[a-z0-9_]{1,63}$/;

export interface ChangeTable {
  schema: string;
  name: string;
  /** schema.name, as the messages' `table` control carries it. */
  qualified: string;
}

export interface ChangeNames {
  slot: string;
  publication: string;
  tables: ChangeTable[];
}

/** hivenode_<NAME> in the characters a slot name may hold. */
function defaultChangeName(serviceName: string): string {
  return `hivenode_${serviceName.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, MAX_NAME);
}

/**
 * The slot, publication and tables of a configuration; ConfigError naming the parameter otherwise.
 * A table without a schema is in `defaultSchema` (PostgreSQL: public; MariaDB: SQL_DATABASE). On
 * MariaDB there is no slot nor publication: `slot` is the stream's name (hivenode_<NAME>), which the
 * idempotency keys carry.
 */
export function changeNames(
  c: { SQL_CHANGESLOT: string; SQL_CHANGEPUBLICATION: string; SQL_TABLE: string },
  serviceName: string,
  engine: 'postgres' | 'mariadb' = 'postgres',
  defaultSchema = 'public',
): ChangeNames {
  if (engine === 'mariadb') {
    for (const [value, name] of [
      [c.SQL_CHANGESLOT, 'SQL_CHANGESLOT'],
      [c.SQL_CHANGEPUBLICATION, 'SQL_CHANGEPUBLICATION'],
    ] as const) {
      if (value.trim() !== '')
        throw new ConfigError(
          `${name} names a PostgreSQL ${name === 'SQL_CHANGESLOT' ? 'replication slot' : 'publication'}; a MariaDB change stream reads the binlog and keeps its position in SQL_STATEFILE: leave ${name} empty`,
        );
    }
  }
  const slot = c.SQL_CHANGESLOT.trim() || defaultChangeName(serviceName);
  if (!SLOT_NAME.test(slot))
    throw new ConfigError(
      `SQL_CHANGESLOT: '${slot}' is not a replication slot name (1 to 63 lower-case letters, digits and _)`,
    );
  const publication = c.SQL_CHANGEPUBLICATION.trim() || defaultChangeName(serviceName);
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(publication))
    throw new ConfigError(
      `SQL_CHANGEPUBLICATION: '${publication}' is not a publication name (letters, digits and _, at most 63)`,
    );
  const texts = c.SQL_TABLE.split(',').map((t) => t.trim());
  if (texts.length === 0 || texts.some((t) => t === ''))
    throw new ConfigError(
      "SQL_CHANGES needs SQL_TABLE: the table (or comma-separated tables) whose changes are streamed, e.g. 'orders' or 'public.orders, public.items'",
    );
  const dialect = engine === 'mariadb' ? 'mysql' : 'postgres';
  const tables = texts.map((text) => {
    let t;
    try {
      t = parseTable(text);
      quoteName(dialect, t.schema === undefined ? t.name : `${t.schema}.${t.name}`);
    } catch (e) {
      throw new ConfigError(`SQL_TABLE: '${text}': ${describeError(e)}`);
    }
    if (t.alias !== undefined)
      throw new ConfigError(`SQL_TABLE: '${text}' has an alias; a change stream names tables only`);
    const schema = t.schema ?? defaultSchema;
    return { schema, name: t.name, qualified: `${schema}.${t.name}` };
  });
  return { slot, publication, tables };
}
