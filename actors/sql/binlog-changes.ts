/**
 * The MariaDB/MySQL change-stream reader (README, Change streams): reads the row-based binlog as a
 * replica does (@vlasky/zongji on mysql2; docs/ARCHITECTURE.md, Library choices) and hands every
 * changed row of the SQL_TABLE tables to OUTPUTCHANNEL with `execute`, one at a time, in commit order
 * (the binlog holds committed transactions only, in the order they committed; a rolled-back one is
 * never written to it).
 *
 * What holds: the server keeps no position for a binlog reader, so the stream keeps the `file:position`
 * after the last transaction whose every row the hive acknowledged (binlog-position.ts: SQL_STATEFILE,
 * or the shared bucket on a NATS hive), and a new stream first keeps the binlog's end as it starts. A
 * hand-over that is refused or times out is offered again (change-run.ts) and holds reading back: the
 * events read meanwhile wait in a bounded queue, and the binlog connection is paused while it is full
 * (the server then stops sending). After a lost connection, a server restart or a restart of the node,
 * reading resumes at the kept position: a transaction not yet kept comes again, under the same
 * idempotency-key — at least once, in order, no gap.
 */
import ZongJi from '@vlasky/zongji';
import type { AnyBinlogEvent, RowData, UpdateRowData } from '@vlasky/zongji';
import { ConfigError } from '../../protocol/errors.js';
import type { ServiceContext } from '../service/context.js';
import type { ChangeOperation } from './change-message.js';
import { changeMessage } from './change-message.js';
import type { ChangeFigures, ChangeOptions, RunningChanges } from './change-run.js';
import { CONFIRM_ON_ARRIVAL, ChangeRun } from './change-run.js';
import { binlogEnd, binlogFailure, mysqlConfig, parsePosition, positionText, prepareBinlog } from './binlog-setup.js';
import type { PositionMemory } from './binlog-position.js';
import { binlogSnapshot } from './change-snapshot.js';
import { PositionKeeper } from './binlog-position.js';
import { MarkMovedError } from './shared-mark.js';

/** Events read ahead of the hand-over before the binlog connection is paused, and resumed at. */
const QUEUE_HIGH = 512;
const QUEUE_LOW = 128;
/** How often the position moves on past transactions of other tables only (re-reading them costs nothing but time). */
const IDLE_KEEP_MS = 1_000;
/** The binlog event header: 19 bytes, and 4 more of checksum where the server writes one (zongji's event size leaves them out). */
const EVENT_HEADER = 19;
const EVENT_CHECKSUM = 4;

export interface BinlogStatus extends ChangeFigures {
  tables: string[];
  serverId: number;
  /** Where the position is kept. */
  positionIn: string;
}

export interface BinlogOptions extends ChangeOptions {
  memory: PositionMemory;
  serverId: number;
}

/** What the binlog handler queues for the hand-over, in binlog order. */
type Item =
  | { kind: 'begin'; gtid: string; time: Date; start: string }
  | { kind: 'rows'; operation: Exclude<ChangeOperation, 'read'>; table: string; rows: RowData[] | UpdateRowData[] }
  | { kind: 'commit'; position: string }
  | { kind: 'truncate'; statement: string };

/** The transaction being handed over. */
interface OpenTx {
  gtid: string;
  time: Date;
  start: string;
  rows: number;
}

export function startBinlogChanges(ctx: ServiceContext<unknown>, opts: BinlogOptions): RunningChanges {
  const { names } = opts;
  const status: BinlogStatus = {
    tables: names.tables.map((t) => t.qualified),
    serverId: opts.serverId,
    positionIn: opts.memory.where,
    connected: false,
    emitted: 0,
    transactions: 0,
    refusals: 0,
    reconnects: 0,
  };
  const run = new ChangeRun(ctx, opts.channel, opts.handoverTimeoutMs, status, opts.lease);
  const tables = new Set(status.tables);
  const keeper = new PositionKeeper(opts.memory);
  let prepared = opts.prepared;
  let wakeSession: (() => void) | undefined;
  const schemas: Record<string, string[]> = {};
  for (const t of names.tables) (schemas[t.schema] ??= []).push(t.name);

  /** Where reading starts: the position kept, else the binlog's end now (kept first, so nothing after it is missed). */
  const startPosition = async (): Promise<string | undefined> => {
    // what is kept now, read again: on a NATS hive another node's reader may have moved it meanwhile
    await keeper.flushed().catch(() => undefined);
    keeper.reset();
    const kept = await opts.memory.load();
    if (kept !== undefined) return kept;
    if (opts.snapshot) {
      // a new stream: the rows first, then the changes after them (change-snapshot.ts)
      let at = '';
      const { onRow, rows } = run.snapshotRows(opts.cls, names.slot, () => at);
      const taken = await binlogSnapshot(opts.db, names, (p) => (at = positionText(p)), onRow);
      if (taken === undefined) return undefined;
      keeper.advance(at);
      await keeper.flushed();
      ctx.log.info(
        `change stream: snapshot of ${rows()} row${rows() === 1 ? '' : 's'} of ${status.tables.join(', ')} emitted; the stream goes on from ${at} (kept in ${opts.memory.where})`,
      );
      return at;
    }
    const end = positionText(await binlogEnd(opts.db));
    keeper.advance(end);
    await keeper.flushed();
    ctx.log.info(`change stream: a new stream starts at the binlog's end, ${end} (kept in ${opts.memory.where})`);
    return end;
  };

  const readOnce = async (): Promise<void> => {
    if (!prepared) {
      for (const note of (await prepareBinlog(opts.db, names)).notes) ctx.log.warn(`change stream: ${note}`);
      prepared = true;
    }
    const from = await startPosition();
    // stopped during the snapshot: nothing is kept, the next start takes it again
    if (from === undefined) return;
    const start = parsePosition(from);
    if (!start)
      throw new ConfigError(
        `${opts.memory.where} holds '${from}', which is no binlog position (file:position): remove it to start at the current end of the binlog`,
      );
    status.confirmed = from;
    if (run.stopped) return;

    const z = new ZongJi(mysqlConfig(opts.db));
    const queue: Item[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    let failure: unknown;
    let paused = false;
    let inTx = false;
    const end = (e?: unknown): void => {
      if (e !== undefined) failure ??= e;
      ended = true;
      wake?.();
    };
    wakeSession = () => end();
    run.session(() => end());
    const push = (item: Item): void => {
      queue.push(item);
      wake?.();
      // the library resumes the connection after its own pauses (a table's columns looked up): paused again here
      if (queue.length >= QUEUE_HIGH && z.connection) {
        z.connection.pause();
        paused = true;
      }
    };
    z.on('error', (e: Error) => end(e));
    z.on('ready', () => {
      status.connected = true;
      run.streaming(`the binlog at ${from}`);
    });
    z.on('binlog', (e: AnyBinlogEvent) => {
      if (ended) return;
      const name = e.getEventName();
      if (name === 'mariadbgtid' || name === 'gtid' || name === 'anonymousgtid') {
        const g = e as Extract<AnyBinlogEvent, { getEventName(): 'mariadbgtid' }>;
        // a standalone group (DDL) has no rows and no commit event: its Query is its end
        if (name === 'mariadbgtid' && g.standalone) return;
        inTx = true;
        const begins = e.nextPosition - e.size - EVENT_HEADER - (z.useChecksum ? EVENT_CHECKSUM : 0);
        push({
          kind: 'begin',
          gtid: e.gtid ?? '',
          time: new Date(e.timestamp),
          start: `${z.options.filename ?? start.file}:${begins}`,
        });
      } else if (name === 'writerows' || name === 'updaterows' || name === 'deleterows') {
        const r = e as Extract<AnyBinlogEvent, { getEventName(): 'writerows' | 'updaterows' | 'deleterows' }>;
        const t = r.tableMap[r.tableId];
        const table = t ? `${t.parentSchema}.${t.tableName}` : '';
        if (!tables.has(table)) return;
        push({
          kind: 'rows',
          operation: name === 'writerows' ? 'insert' : name === 'updaterows' ? 'update' : 'delete',
          table,
          rows: r.rows,
        });
      } else if (name === 'xid') {
        inTx = false;
        const position = `${z.options.filename}:${z.options.position}`;
        // the deliberately broken build (test only, change-run.ts) keeps the position as it arrives
        if (CONFIRM_ON_ARRIVAL) keeper.advance(position);
        push({ kind: 'commit', position });
      } else if (name === 'query') {
        const statement = (e as Extract<AnyBinlogEvent, { getEventName(): 'query' }>).query.trim();
        const word = (statement.split(/\s/, 1)[0] ?? '').toUpperCase();
        if (word === 'BEGIN') return;
        if (/^TRUNCATE\b/i.test(statement)) push({ kind: 'truncate', statement });
        // COMMIT ends a transaction of a non-transactional table; DDL stands alone
        if (word === 'COMMIT' || !inTx) {
          inTx = false;
          push({ kind: 'commit', position: `${z.options.filename}:${z.options.position}` });
        }
      }
    });
    z.start({
      serverId: opts.serverId,
      filename: start.file,
      position: start.position,
      includeEvents: [
        'mariadbgtid',
        'gtid',
        'anonymousgtid',
        'tablemap',
        'writerows',
        'updaterows',
        'deleterows',
        'xid',
        'query',
      ],
      includeSchema: schemas,
    });

    let tx: OpenTx | undefined;
    let lastIdleKeep = 0;
    /** The end of the last transaction read (kept or not): where one without a GTID event begins. */
    let boundary = from;
    try {
      while (!run.stopped) {
        const item = queue.shift();
        if (item === undefined) {
          if (ended) break;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        if (paused && queue.length <= QUEUE_LOW) {
          paused = false;
          z.connection?.resume();
        }
        if (item.kind === 'begin') {
          tx = { gtid: item.gtid, time: item.time, start: item.start, rows: 0 };
        } else if (item.kind === 'rows') {
          tx ??= { gtid: '', time: new Date(), start: boundary, rows: 0 };
          for (const row of item.rows) {
            const index = tx.rows++;
            const update = item.operation === 'update' ? (row as UpdateRowData) : undefined;
            const values = update ? update.after : (row as RowData);
            const before = update ? update.before : item.operation === 'delete' ? (row as RowData) : null;
            const message = changeMessage(opts.cls, names.slot, {
              operation: item.operation,
              table: item.table,
              position: tx.start,
              txPosition: tx.start,
              index,
              commitTime: tx.time,
              tx: tx.gtid,
              values,
              before,
            });
            if (!(await run.handOver(message, tx.time))) break;
          }
        } else if (item.kind === 'commit') {
          // a stopping reader keeps nothing more: a row it gave up handing over is read again at the next start
          if (run.stopped) break;
          const hadRows = (tx?.rows ?? 0) > 0;
          tx = undefined;
          boundary = item.position;
          if (hadRows) status.transactions++;
          if (!CONFIRM_ON_ARRIVAL && (hadRows || Date.now() - lastIdleKeep >= IDLE_KEEP_MS)) {
            lastIdleKeep = Date.now();
            keeper.advance(item.position);
            status.confirmed = item.position;
          }
        } else {
          // a TRUNCATE is no row change: it is logged, not emitted (README, Change streams)
          ctx.log.warn(
            `change stream: '${item.statement.slice(0, 200)}' is not emitted: a TRUNCATE removes rows without a change per row`,
          );
        }
        if (keeper.failed !== undefined) {
          // another node's reader kept a position meanwhile: this one no longer holds the NAME
          if (keeper.failed instanceof MarkMovedError) run.lease?.lost(keeper.failed.message);
          throw keeper.failed;
        }
      }
    } finally {
      status.connected = false;
      wakeSession = undefined;
      z.stop();
    }
    if (!run.stopped && failure !== undefined)
      throw binlogFailure(failure, opts.db, status.confirmed ?? from, opts.memory.where);
    if (!run.stopped) throw new Error('the binlog connection ended');
  };

  const running = run.loop(readOnce, () => status.confirmed ?? `the position kept in ${opts.memory.where}`);

  return {
    status: () => ({ ...status }),
    async stop() {
      run.stop();
      wakeSession?.();
      await running;
      await keeper
        .flushed()
        .catch((e: unknown) =>
          ctx.log.warn(`change stream: the position could not be kept in ${opts.memory.where}: ${String(e)}`),
        );
    },
  };
}
