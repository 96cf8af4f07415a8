/**
 * The SQL service as a change stream (SQL_CHANGES; README, Change streams): it only reads the
 * database's change log and emits; it neither polls nor listens. PostgreSQL reads a logical
 * replication slot (changes.ts), MariaDB/MySQL the row-based binlog (binlog-changes.ts); each
 * engine's client is loaded only when a stream of it starts. The set-up is checked at start when the
 * database answers (a refusal is a ConfigError, one line); when it does not, the reader tries again
 * until it does.
 */
import { ConfigError, describeError } from '../../protocol/errors.js';
import { importModule } from '../../protocol/import-module.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import type { DatabaseOptions } from './connection-options.js';
import type { SqlConfig } from './planner.js';
import { changeNames } from './change-names.js';
import type { PositionMemory } from './binlog-position.js';
import { FilePosition, POSITION_LABEL, SharedPosition } from './binlog-position.js';
import { sharedLease } from './shared-polling.js';
import { SharedMark } from './shared-mark.js';
import type { Mark } from './track-state.js';
import { TrackState } from './track-state.js';

/** How the lease names a change stream's reader in the log. */
const READER = { name: 'change stream reader' };

/** The position SQL_STATEFILE holds, where a stream moved onto a NATS hive starts ({} when none). */
function seedMark(file: string): Mark {
  const state = new TrackState(file, POSITION_LABEL);
  return state.load() === undefined ? state.current() : {};
}

/** The engines with a change stream here; ConfigError naming the others. */
export function changeEngine(engine: string): 'postgres' | 'mariadb' {
  if (engine === 'postgres') return 'postgres';
  if (engine === 'mariadb' || engine === 'mysql') return 'mariadb';
  throw new ConfigError(
    `SQL_CHANGES: ${engine} publishes no change stream; SQL_ENGINE postgres or mariadb/mysql does (SQL_POLLMODE with SQL_TRACKCOLUMN reads new rows on ${engine})`,
  );
}

export async function startChangeStream(ctx: ServiceContext<SqlConfig>, db: DatabaseOptions): Promise<RunningService> {
  const c = ctx.config;
  const engine = changeEngine(db.engine);
  for (const [set, name] of [
    [c.SQL_POLLMODE, 'SQL_POLLMODE'],
    [c.SQL_RAWMODE, 'SQL_RAWMODE'],
    [c.SQL_BATCH, 'SQL_BATCH'],
  ] as const) {
    if (set) throw new ConfigError(`SQL_CHANGES streams the changes of SQL_TABLE; it cannot be combined with ${name}`);
  }
  if (c.SQL_INITFILE.trim() !== '')
    throw new ConfigError(
      'SQL_CHANGES reads an existing table; SQL_INITFILE is not run in this mode (create the tables with a statement-mode service or beforehand)',
    );
  const handoverTimeoutMs = c.SQL_TIMEOUT > 0 ? c.SQL_TIMEOUT : 30_000;
  return engine === 'postgres'
    ? startSlotStream(ctx, db, handoverTimeoutMs)
    : startBinlogStream(ctx, db, handoverTimeoutMs);
}

async function startSlotStream(
  ctx: ServiceContext<SqlConfig>,
  db: DatabaseOptions,
  handoverTimeoutMs: number,
): Promise<RunningService> {
  const c = ctx.config;
  const [{ prepareChanges }, { startChanges }] = await Promise.all([
    importModule(import.meta.url, './change-setup.js', () => import('./change-setup.js')),
    importModule(import.meta.url, './changes.js', () => import('./changes.js')),
  ]);
  const names = changeNames(c, ctx.name);
  let prepared = false;
  try {
    const { created } = await prepareChanges(db, names, !c.SQL_CHANGESNAPSHOT);
    prepared = true;
    if (created.length > 0) ctx.log.info(`change stream: created ${created.join(' and ')}`);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    ctx.log.warn(
      `${describeError(e)}: the database does not answer now; the change stream starts reading once it does`,
    );
  }
  const shared = await sharedLease(ctx, READER);
  const reader = startChanges(ctx, {
    db,
    names,
    channel: c.OUTPUTCHANNEL,
    cls: c.SQL_POLLCLASS,
    handoverTimeoutMs,
    prepared,
    snapshot: c.SQL_CHANGESNAPSHOT,
    lease: shared?.lease,
  });
  ctx.log.info(
    `change stream of ${names.tables.map((t) => t.qualified).join(', ')} (slot ${names.slot}, publication ${names.publication}) to channel '${c.OUTPUTCHANNEL}'`,
  );
  return {
    async drain() {
      await reader.stop();
      await shared?.lease.stop();
    },
    // the figures at the top level: /metrics exports each number as hivenode_service_figure (lagMs, emitted, refusals, …)
    status: () => ({ mode: 'changes', channel: c.OUTPUTCHANNEL, ...reader.status() }),
  };
}

async function startBinlogStream(
  ctx: ServiceContext<SqlConfig>,
  db: DatabaseOptions,
  handoverTimeoutMs: number,
): Promise<RunningService> {
  const c = ctx.config;
  if (db.database.trim() === '' && c.SQL_TABLE.split(',').some((t) => !t.includes('.')))
    throw new ConfigError(
      "SQL_CHANGES on MariaDB/MySQL: give SQL_DATABASE, or name every SQL_TABLE with its database ('shop.orders')",
    );
  const names = changeNames(c, ctx.name, 'mariadb', db.database);
  const file = c.SQL_STATEFILE.trim();
  const shared = await sharedLease(ctx, READER);
  if (file === '' && !shared)
    throw new ConfigError(
      'SQL_CHANGES on MariaDB/MySQL keeps its binlog position in SQL_STATEFILE (the server keeps none for a binlog reader): give a file, e.g. SQL_STATEFILE=/var/lib/hivenode/orders-feed.position (on a NATS hive with SQL_POLLLEASE the hive keeps it)',
    );
  // on a NATS hive the readers of the NAME share the position in the lease's bucket; SQL_STATEFILE's, if any, is where it starts
  const memory: PositionMemory = shared
    ? new SharedPosition(
        new SharedMark(
          shared.bucket,
          `mark.${shared.name}`,
          POSITION_LABEL,
          file === '' ? {} : seedMark(file),
          ctx.log,
        ),
        `the hive's bucket hivenode_pollers (mark.${shared.name})`,
      )
    : new FilePosition(file);
  const [{ prepareBinlog, binlogServerId }, { startBinlogChanges }] = await Promise.all([
    importModule(import.meta.url, './binlog-setup.js', () => import('./binlog-setup.js')),
    importModule(import.meta.url, './binlog-changes.js', () => import('./binlog-changes.js')),
  ]);
  // what is kept must be a position before anything is read: a wrong file is refused now
  if (!shared) await memory.load();
  let prepared = false;
  try {
    for (const note of (await prepareBinlog(db, names)).notes) ctx.log.warn(`change stream: ${note}`);
    prepared = true;
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    ctx.log.warn(
      `${describeError(e)}: the database does not answer now; the change stream starts reading once it does`,
    );
  }
  const serverId = binlogServerId(ctx.name);
  const reader = startBinlogChanges(ctx, {
    db,
    names,
    channel: c.OUTPUTCHANNEL,
    cls: c.SQL_POLLCLASS,
    handoverTimeoutMs,
    prepared,
    snapshot: c.SQL_CHANGESNAPSHOT,
    lease: shared?.lease,
    memory,
    serverId,
  });
  ctx.log.info(
    `change stream of ${names.tables.map((t) => t.qualified).join(', ')} (the binlog, as replica ${serverId}; position in ${memory.where}) to channel '${c.OUTPUTCHANNEL}'`,
  );
  return {
    async drain() {
      await reader.stop();
      await shared?.lease.stop();
    },
    status: () => ({ mode: 'changes', channel: c.OUTPUTCHANNEL, ...reader.status() }),
  };
}
