/**
 * Set-up of a PostgreSQL change stream (README, Change streams): the server setting and privilege it
 * needs, checked with a one-line refusal naming what is missing; the publication of the SQL_TABLE
 * tables and the pgoutput replication slot, created when missing. Runs on an ordinary connection;
 * changes.ts then reads the slot on a replication connection.
 */
import pg from 'pg';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { DatabaseOptions } from './connection-options.js';
import { quoteName } from './dialect.js';
import type { ChangeNames } from './change-names.js';

/** pg client options of the service's database (a replication connection when asked). */
export function pgClientConfig(o: DatabaseOptions, replication = false): pg.ClientConfig {
  return {
    host: o.host,
    port: o.port,
    database: o.database,
    user: o.username,
    password: o.password,
    ...(replication ? { replication: 'database' } : {}),
    connectionTimeoutMillis: 10_000,
  };
}

/** A ConfigError for the set-up statement that failed, naming what the user must do where PostgreSQL tells. */
function refusal(step: string, e: unknown): Error {
  const code = (e as { code?: string }).code;
  // 42501 insufficient_privilege, 42P01 undefined_table, 55000 object_not_in_prerequisite_state
  if (code === '42501' || code === '42P01' || code === '55000')
    return new ConfigError(`SQL_CHANGES: ${step} was refused: ${describeError(e)}`);
  return e as Error;
}

/**
 * Checks wal_level and the REPLICATION privilege, then creates the publication and the slot when
 * missing. A ConfigError (one line, naming the setting, privilege or table) when the server cannot
 * stream; other errors (the server does not answer) are thrown as they are, for a retry.
 */
export async function prepareChanges(
  o: DatabaseOptions,
  names: ChangeNames,
  createSlot = true,
): Promise<{ created: string[] }> {
  const client = new pg.Client(pgClientConfig(o));
  await client.connect();
  const created: string[] = [];
  try {
    const wal = (await client.query<{ wal_level: string }>('SHOW wal_level')).rows[0]?.wal_level;
    if (wal !== 'logical')
      throw new ConfigError(
        `SQL_CHANGES needs the PostgreSQL server setting wal_level=logical (it is '${wal}'): set it in postgresql.conf (or ALTER SYSTEM SET wal_level = logical) and restart the server`,
      );
    const role = (
      await client.query<{ ok: boolean; name: string }>(
        'SELECT (rolreplication OR rolsuper) AS ok, rolname AS name FROM pg_roles WHERE rolname = current_user',
      )
    ).rows[0];
    if (!role?.ok)
      throw new ConfigError(
        `SQL_CHANGES needs the REPLICATION privilege for SQL_USERNAME '${role?.name ?? o.username}': ALTER ROLE ${role?.name ?? o.username} REPLICATION`,
      );
    for (const t of names.tables) {
      const found = await client.query('SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2', [
        t.schema,
        t.name,
      ]);
      if (found.rowCount === 0)
        throw new ConfigError(`SQL_TABLE: table '${t.qualified}' does not exist in database '${o.database}'`);
    }
    const pub = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [names.publication]);
    const list = names.tables.map((t) => quoteName('postgres', `${t.schema}.${t.name}`)).join(', ');
    if (pub.rowCount === 0) {
      try {
        await client.query(`CREATE PUBLICATION ${quoteName('postgres', names.publication)} FOR TABLE ${list}`);
      } catch (e) {
        throw refusal(
          `CREATE PUBLICATION ${names.publication} FOR TABLE ${list} (the user must own the tables, or create the publication itself)`,
          e,
        );
      }
      created.push(`publication ${names.publication}`);
    } else {
      const have = new Set(
        (
          await client.query<{ t: string }>(
            "SELECT schemaname || '.' || tablename AS t FROM pg_publication_tables WHERE pubname = $1",
            [names.publication],
          )
        ).rows.map((r) => r.t),
      );
      const missing = names.tables.filter((t) => !have.has(t.qualified));
      if (missing.length > 0)
        throw new ConfigError(
          `SQL_CHANGEPUBLICATION: publication '${names.publication}' does not publish ${missing.map((t) => t.qualified).join(', ')}: ALTER PUBLICATION ${names.publication} ADD TABLE ${missing.map((t) => t.qualified).join(', ')}`,
        );
    }
    const slot = (
      await client.query<{ plugin: string; database: string }>(
        'SELECT plugin, database FROM pg_replication_slots WHERE slot_name = $1',
        [names.slot],
      )
    ).rows[0];
    // with SQL_CHANGESNAPSHOT the slot is made by the snapshot (change-snapshot.ts), at its exported view
    if (slot === undefined && createSlot) {
      try {
        await client.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [names.slot]);
      } catch (e) {
        throw refusal(`creating the replication slot ${names.slot}`, e);
      }
      created.push(`replication slot ${names.slot}`);
    } else if (slot !== undefined && (slot.plugin !== 'pgoutput' || slot.database !== o.database)) {
      throw new ConfigError(
        `SQL_CHANGESLOT: slot '${names.slot}' exists for plugin '${slot.plugin}' in database '${slot.database}'; a change stream needs a pgoutput slot of database '${o.database}': name another slot or drop that one`,
      );
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  return { created };
}

/** The slot's confirmed_flush_lsn (where reading resumes), or undefined when it has none yet. */
export async function slotPosition(o: DatabaseOptions, slot: string): Promise<string | undefined> {
  const client = new pg.Client(pgClientConfig(o));
  await client.connect();
  try {
    const row = (
      await client.query<{ lsn: string | null }>(
        'SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1',
        [slot],
      )
    ).rows[0];
    return row?.lsn ?? undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Drops a replication slot (hivenode changes drop); false when there was none. */
export async function dropSlot(o: DatabaseOptions, slot: string): Promise<boolean> {
  const client = new pg.Client(pgClientConfig(o));
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    if (found.rowCount === 0) return false;
    await client.query('SELECT pg_drop_replication_slot($1)', [slot]);
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}
