/**
 * The change-stream reader (README, Change streams): reads a PostgreSQL logical replication slot with
 * pgoutput (pg-logical-replication; docs/ARCHITECTURE.md, Library choices) and hands every changed row
 * to OUTPUTCHANNEL with `execute`, one at a time, in commit order.
 *
 * What holds: the slot's confirmed_flush_lsn is reported only once every row of a transaction was
 * acknowledged by the hive (the commit's end LSN, exactly: the library's acknowledge reports the LSN
 * after the one it is given, so it gets the one before). A hand-over that is refused or times out is
 * retried with back-off and holds reading back (the library pauses the socket while a row is being
 * handed over; the server stops sending when its buffers fill). A lost connection, a database restart
 * or a restart of the node start reading again at confirmed_flush_lsn: the rows of a transaction not
 * yet confirmed come again, under the same idempotency-key (change-message.ts) — at least once, in
 * order, no gap. Keepalives are answered with the confirmed position, never the keepalive's own (rows
 * before it may still wait in the socket).
 */
import { LogicalReplicationService, PgoutputPlugin } from 'pg-logical-replication';
import type { Pgoutput } from 'pg-logical-replication';
import { Code } from '../../protocol/codes.js';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { ServiceContext } from '../service/context.js';
import type { DatabaseOptions } from './connection-options.js';
import type { ChangeNames } from './change-setup.js';
import { pgClientConfig, prepareChanges, slotPosition } from './change-setup.js';
import type { ChangeOperation } from './change-message.js';
import { changeMessage, lsnText, lsnValue } from './change-message.js';

const MAX_BACKOFF_MS = 5_000;

export interface ChangeStatus {
  slot: string;
  publication: string;
  tables: string[];
  connected: boolean;
  emitted: number;
  transactions: number;
  refusals: number;
  reconnects: number;
  /** The last commit end LSN reported to the server as flushed. */
  confirmed?: string;
  lastError?: string;
  /** Milliseconds from the last emitted row's commit to its acknowledged hand-over. */
  lagMs?: number;
}

export interface ChangeOptions {
  db: DatabaseOptions;
  names: ChangeNames;
  channel: string;
  cls: string;
  /** Longest wait for one acknowledged hand-over before it is tried again. */
  handoverTimeoutMs: number;
  /** Whether the slot and publication were checked at start (else the reader does it first). */
  prepared: boolean;
}

export interface RunningChanges {
  status(): ChangeStatus;
  stop(): Promise<void>;
}

/** The transaction being read: its rows so far and its commit position. */
interface OpenTx {
  commitLsn: string;
  commitTime: Date;
  xid: number;
  rows: number;
}


export function startChanges(ctx: ServiceContext<unknown>, opts: ChangeOptions): RunningChanges {
  const { names } = opts;
  const status: ChangeStatus = { slot: names.slot, publication: names.publication, tables: names.tables.map((t) => t.qualified), connected: false, emitted: 0, transactions: 0, refusals: 0, reconnects: 0 };
  const tables = new Set(status.tables);
  let stopped = false;
  let service: LogicalReplicationService | undefined;
  let connecting: Promise<void> = Promise.resolve();
  let prepared = opts.prepared;
  let failures = 0;
  /** Waits that end early when the reader stops, so a drain never waits out a back-off. */
  const waking = new Set<() => void>();
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        waking.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waking.add(done);
    });

  const confirm = (svc: LogicalReplicationService, lsn: string): void => {
    const v = lsnValue(lsn);
    // a stopping reader confirms nothing more: a row it gave up handing over is read again at the next start
    if (v === 0n || stopped) return;
    void svc.acknowledge(lsnText(v - 1n)).catch(() => undefined);
    status.confirmed = lsnText(v);
  };

  /** Hands one row over until the hive acknowledges it (or the reader stops). */
  const handOver = async (message: ReturnType<typeof changeMessage>, commitTime: Date): Promise<void> => {
    let failures = 0;
    while (!stopped) {
      const r = await ctx.hive.execute(opts.channel, message, opts.handoverTimeoutMs);
      if (r.Code === Code.Success) {
        if (failures > 0) ctx.log.info(`change stream: channel '${opts.channel}' took the change again after ${failures} refusal${failures === 1 ? '' : 's'}; reading resumes`);
        status.emitted++;
        status.lagMs = Math.max(0, Date.now() - commitTime.getTime());
        return;
      }
      failures++;
      status.refusals++;
      status.lastError = `hand-over to '${opts.channel}' answered ${r.Code}: ${r.Message}`;
      if (failures === 1) ctx.log.warn(`change stream: ${status.lastError}; reading holds at ${message.Control.position?.[0] ?? '?'} and the change is offered again until it is taken`);
      await sleep(Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(failures, 10)));
    }
  };

  const readOnce = async (): Promise<void> => {
    if (!prepared) {
      const { created } = await prepareChanges(opts.db, names);
      prepared = true;
      if (created.length > 0) ctx.log.info(`change stream: created ${created.join(' and ')}`);
    }
    // where the slot stands: reading resumes there, and keepalives are answered with it
    status.confirmed ??= await slotPosition(opts.db, names.slot);
    // stopped while preparing: no replication connection is opened any more
    if (stopped) return;
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [names.publication] });
    const svc = new LogicalReplicationService(pgClientConfig(opts.db, true) as ConstructorParameters<typeof LogicalReplicationService>[0], { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } });
    service = svc;
    // settles once the connection streams or has failed: a stop waits for it, since ending a client
    // that is still connecting leaves its connect unsettled (and the reader with it)
    let settle = (): void => undefined;
    connecting = new Promise<void>((resolve) => (settle = resolve));
    let tx: OpenTx | undefined;
    let failure: unknown;
    svc.on('error', (e: Error) => {
      failure ??= e;
    });
    svc.on('start', () => {
      // stopped while connecting: the stop's destroy found no connection yet
      settle();
      if (stopped) void svc.destroy();
      status.connected = true;
      if (failures > 0) ctx.log.info(`change stream: reading slot ${names.slot} again after ${failures} failed attempt${failures === 1 ? '' : 's'}`);
      failures = 0;
    });
    svc.on('heartbeat', (_lsn: string, _ts: number, shouldRespond: boolean) => {
      // the server ends a connection that leaves its keepalives unanswered for wal_sender_timeout;
      // the answer repeats the confirmed position (never the keepalive's: rows before it may still wait)
      if (shouldRespond && status.confirmed) void svc.acknowledge(lsnText(lsnValue(status.confirmed) - 1n)).catch(() => undefined);
    });
    svc.on('data', async (lsn: string, log: Pgoutput.Message) => {
      if (stopped) return;
      try {
        if (log.tag === 'begin') {
          tx = { commitLsn: lsnText(lsnValue(log.commitLsn ?? lsn)), commitTime: new Date(Number(log.commitTime.valueOf() as bigint / 1000n)), xid: log.xid, rows: 0 };
        } else if (log.tag === 'commit') {
          if (tx && tx.rows > 0) status.transactions++;
          tx = undefined;
          if (log.commitEndLsn) confirm(svc, log.commitEndLsn);
        } else if ((log.tag === 'insert' || log.tag === 'update' || log.tag === 'delete') && tx) {
          const table = `${log.relation.schema}.${log.relation.name}`;
          const index = tx.rows++;
          if (!tables.has(table)) return;
          const values = log.tag === 'delete' ? (log.old ?? log.key ?? {}) : log.new;
          const before = log.tag === 'insert' ? null : log.old;
          const message = changeMessage(opts.cls, names.slot, { operation: log.tag as ChangeOperation, table, position: lsnText(lsnValue(lsn)), commitLsn: tx.commitLsn, index, commitTime: tx.commitTime, tx: tx.xid, values, before });
          await handOver(message, tx.commitTime);
        } else if (log.tag === 'truncate') {
          // a TRUNCATE is no row change: it is logged, not emitted (README, Change streams)
          ctx.log.warn(`change stream: TRUNCATE of ${log.relations.map((r) => `${r.schema}.${r.name}`).join(', ')} (tx ${tx?.xid ?? '?'}) is not emitted: it removes rows without a change per row`);
        }
      } catch (e) {
        // a row that cannot be made a message stops reading here (the library would go on to the next)
        failure ??= e;
        void svc.destroy();
      }
    });
    try {
      await svc.subscribe(plugin, names.slot, status.confirmed ?? '0/0');
    } catch (e) {
      failure ??= e;
    }
    settle();
    status.connected = false;
    await svc.destroy().catch(() => undefined);
    if (!stopped && failure !== undefined) throw failure;
    if (!stopped) throw new Error('the replication connection ended');
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        await readOnce();
      } catch (e) {
        if (stopped) break;
        if (e instanceof ConfigError) {
          // the server cannot stream (found after an outage at start): said once, tried again slowly
          if (status.lastError !== e.message) ctx.log.error(e.message);
          status.lastError = e.message;
          await sleep(MAX_BACKOFF_MS * 6);
          continue;
        }
        failures++;
        status.reconnects++;
        status.lastError = describeError(e);
        if (failures === 1) ctx.log.warn(`change stream: ${status.lastError}; reading again from ${status.confirmed ?? "the slot's confirmed position"} with back-off`);
        else ctx.log.debug(`change stream attempt ${failures} failed: ${status.lastError}`);
        await sleep(Math.min(MAX_BACKOFF_MS, 200 * 2 ** Math.min(failures, 10)));
        continue;
      }
    }
  };
  const running = loop();

  return {
    status: () => ({ ...status }),
    async stop() {
      stopped = true;
      for (const wake of [...waking]) wake();
      await connecting;
      await service?.destroy().catch(() => undefined);
      await running;
    },
  };
}

/** Refuses SQL_CHANGES on engines without a change stream here. */
export function checkChangesEngine(engine: string): void {
  if (engine === 'postgres') return;
  if (engine === 'mariadb' || engine === 'mysql') throw new ConfigError(`SQL_CHANGES: change streams from ${engine} (the row-based binlog) are not yet built; SQL_ENGINE postgres streams changes`);
  throw new ConfigError(`SQL_CHANGES: ${engine} publishes no change stream; SQL_ENGINE postgres does (SQL_POLLMODE with SQL_TRACKCOLUMN reads new rows on ${engine})`);
}
