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
import type { ServiceContext } from '../service/context.js';
import { pgClientConfig, prepareChanges, slotPosition } from './change-setup.js';
import type { ChangeOperation } from './change-message.js';
import { changeMessage, lsnText, lsnValue } from './change-message.js';
import { pgSnapshot } from './change-snapshot.js';
import type { ChangeFigures, ChangeOptions, RunningChanges } from './change-run.js';
import { CONFIRM_ON_ARRIVAL, ChangeRun } from './change-run.js';

export interface ChangeStatus extends ChangeFigures {
  slot: string;
  publication: string;
  tables: string[];
}

/** The transaction being read: its rows so far and its commit position. */
interface OpenTx {
  commitLsn: string;
  commitTime: Date;
  xid: number;
  rows: number;
}

/**
 * Whether pg-logical-replication holds no received row still to hand over: its flow-control queue is
 * empty and not being worked (fields of its own, read as they are in 2.5; a version without them
 * counts as busy, so the slot then moves only on commits).
 */
function libraryIdle(svc: LogicalReplicationService): boolean {
  const inner = svc as unknown as { _messageQueue?: unknown; _processing?: unknown };
  return Array.isArray(inner._messageQueue) && inner._messageQueue.length === 0 && inner._processing === false;
}

export function startChanges(ctx: ServiceContext<unknown>, opts: ChangeOptions): RunningChanges {
  const { names } = opts;
  const status: ChangeStatus = {
    slot: names.slot,
    publication: names.publication,
    tables: names.tables.map((t) => t.qualified),
    connected: false,
    emitted: 0,
    transactions: 0,
    refusals: 0,
    reconnects: 0,
  };
  const run = new ChangeRun(ctx, opts.channel, opts.handoverTimeoutMs, status, opts.lease);
  const tables = new Set(status.tables);
  let service: LogicalReplicationService | undefined;
  let connecting: Promise<void> = Promise.resolve();
  let prepared = opts.prepared;

  const confirm = (svc: LogicalReplicationService, lsn: string): void => {
    const v = lsnValue(lsn);
    // a stopping reader confirms nothing more: a row it gave up handing over is read again at the next start
    if (v === 0n || run.stopped || (run.lease && !run.lease.holds())) return;
    // the position only moves forward (a keepalive's may trail a commit just confirmed)
    if (status.confirmed !== undefined && v <= lsnValue(status.confirmed)) return;
    void svc.acknowledge(lsnText(v - 1n)).catch(() => undefined);
    status.confirmed = lsnText(v);
  };

  const readOnce = async (): Promise<void> => {
    if (!prepared) {
      const { created } = await prepareChanges(opts.db, names, !opts.snapshot);
      prepared = true;
      if (created.length > 0) ctx.log.info(`change stream: created ${created.join(' and ')}`);
    }
    // where the slot stands: reading resumes there, and keepalives are answered with it — the later of
    // the slot's and this reader's own (an acknowledgement lost with the connection; on a NATS hive, what
    // another node's reader confirmed while this one stood by)
    const kept = await slotPosition(opts.db, names.slot);
    if (kept !== undefined && (status.confirmed === undefined || lsnValue(kept) > lsnValue(status.confirmed)))
      status.confirmed = kept;
    if (status.confirmed === undefined && opts.snapshot) {
      // a new stream: the rows first, then the changes after them (change-snapshot.ts)
      let lsn = '';
      const { onRow, rows } = run.snapshotRows(opts.cls, names.slot, () => lsn);
      const at = await pgSnapshot(opts.db, names, (l) => (lsn = l), onRow);
      if (at === undefined) return;
      status.confirmed = at;
      ctx.log.info(
        `change stream: snapshot of ${rows()} row${rows() === 1 ? '' : 's'} of ${status.tables.join(', ')} emitted; slot ${names.slot} created at ${at}`,
      );
    }
    // stopped while preparing: no replication connection is opened any more
    if (run.stopped) return;
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [names.publication] });
    const svc = new LogicalReplicationService(
      pgClientConfig(opts.db, true) as ConstructorParameters<typeof LogicalReplicationService>[0],
      { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } },
    );
    service = svc;
    run.session(() => void svc.destroy());
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
      if (run.stopped) void svc.destroy();
      status.connected = true;
      run.streaming(`slot ${names.slot}`);
    });
    svc.on('heartbeat', (lsn: string, _ts: number, shouldRespond: boolean) => {
      // A keepalive carries the server's sent position: everything before it is in the socket ahead of
      // it. When no row of it is still waiting (no transaction open, the library's queue empty), all of
      // it was handed over or was not ours, so the slot may move there — else a stream of quiet tables
      // never moves its slot: the server keeps all WAL since, and a fast shutdown waits (up to
      // wal_sender_timeout) for this reader to confirm what the server sent (README, Change streams).
      // Otherwise the answer repeats the confirmed position. Unanswered, the server ends the
      // connection after wal_sender_timeout.
      if (CONFIRM_ON_ARRIVAL || (tx === undefined && libraryIdle(svc))) confirm(svc, lsn);
      if (shouldRespond && status.confirmed)
        void svc.acknowledge(lsnText(lsnValue(status.confirmed) - 1n)).catch(() => undefined);
    });
    svc.on('data', async (lsn: string, log: Pgoutput.Message) => {
      if (run.stopped) return;
      try {
        if (log.tag === 'begin') {
          tx = {
            commitLsn: lsnText(lsnValue(log.commitLsn ?? lsn)),
            commitTime: new Date(Number((log.commitTime.valueOf() as bigint) / 1000n)),
            xid: log.xid,
            rows: 0,
          };
          // the deliberately broken build (test only, change-run.ts) confirms a transaction before handing its rows over
          if (CONFIRM_ON_ARRIVAL) confirm(svc, lsnText(lsnValue(tx.commitLsn) + 1n));
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
          const message = changeMessage(opts.cls, names.slot, {
            operation: log.tag as ChangeOperation,
            table,
            position: lsnText(lsnValue(lsn)),
            txPosition: tx.commitLsn,
            index,
            commitTime: tx.commitTime,
            tx: tx.xid,
            values,
            before,
          });
          await run.handOver(message, tx.commitTime);
        } else if (log.tag === 'truncate') {
          // a TRUNCATE is no row change: it is logged, not emitted (README, Change streams)
          ctx.log.warn(
            `change stream: TRUNCATE of ${log.relations.map((r) => `${r.schema}.${r.name}`).join(', ')} (tx ${tx?.xid ?? '?'}) is not emitted: it removes rows without a change per row`,
          );
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
    if (!run.stopped && failure !== undefined) throw failure;
    if (!run.stopped) throw new Error('the replication connection ended');
  };

  const running = run.loop(readOnce, () => status.confirmed ?? "the slot's confirmed position");

  return {
    status: () => ({ ...status }),
    async stop() {
      run.stop();
      await connecting;
      await service?.destroy().catch(() => undefined);
      await running;
    },
  };
}
