/**
 * What the change-stream readers (PostgreSQL's changes.ts, MariaDB's binlog-changes.ts) share
 * (README, Change streams): the acknowledged hand-over of one row, offered again with back-off while
 * the hive refuses or times out (reading holds meanwhile: nothing is skipped), the reconnect loop
 * around one reading session, and waits that end at once when the reader stops, so a drain never
 * waits out a back-off.
 */
import { Code } from '../../protocol/codes.js';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { Message } from '../../protocol/message.js';
import { changeMessage } from './change-message.js';
import type { ServiceContext } from '../service/context.js';
import type { Lease } from '../hive/lease.js';
import type { DatabaseOptions } from './connection-options.js';
import type { ChangeNames } from './change-names.js';

const MAX_BACKOFF_MS = 5_000;

/**
 * TEST ONLY: the change-stream takeover test (spec/reliability/change-stream-takeover.spec.ts) sets
 * HIVENODE_TEST_BROKEN_EARLY_CONFIRM=1 to build the readers
 * deliberately broken — the position moves on as changes arrive, before the hive acknowledged them
 * (PostgreSQL: a keepalive's position and a transaction's at its begin; MariaDB: a transaction's end as
 * its commit event is read) — and shows that its test then loses changes across a SIGKILL; nothing
 * else may set it.
 */
export const CONFIRM_ON_ARRIVAL = process.env.HIVENODE_TEST_BROKEN_EARLY_CONFIRM === '1';

/** The figures both readers report (status, /metrics as hivenode_service_figure). */
export interface ChangeFigures {
  connected: boolean;
  emitted: number;
  transactions: number;
  refusals: number;
  reconnects: number;
  /** The last position kept as acknowledged (PostgreSQL: commit end LSN; MariaDB: binlog file:position). */
  confirmed?: string;
  lastError?: string;
  /** Milliseconds from the last emitted row's commit to its acknowledged hand-over. */
  lagMs?: number;
  /** On a NATS hive with a lease: whether this node's reader is the active one of its NAME. */
  active?: boolean;
}

/** What both readers are started with. */
export interface ChangeOptions {
  db: DatabaseOptions;
  names: ChangeNames;
  channel: string;
  cls: string;
  /** Longest wait for one acknowledged hand-over before it is tried again. */
  handoverTimeoutMs: number;
  /** Whether the set-up was checked at start (else the reader does it first). */
  prepared: boolean;
  /** SQL_CHANGESNAPSHOT: a new stream first emits the tables' rows as `read`. */
  snapshot: boolean;
  /** On a NATS hive (SQL_POLLLEASE): read only while holding the NAME's lease. */
  lease: Lease | undefined;
}

/** A reader as the service holds it. */
export interface RunningChanges {
  status(): Record<string, unknown>;
  stop(): Promise<void>;
}

/** The lease of the stream's NAME went to another node (or ran out): this reader stops reading and stands by. */
class LeaseLost extends Error {}

export class ChangeRun {
  stopped = false;
  /** On a NATS hive: the one reader per NAME reads only while it holds this (README, Change streams). */
  lease: Lease | undefined;
  /** Ends the reading session under way (its connection): the lease was lost. */
  private abortSession: (() => void) | undefined;
  /** Failed reading sessions in a row (0 once one streams). */
  failures = 0;
  private readonly waking = new Set<() => void>();

  constructor(
    private readonly ctx: ServiceContext<unknown>,
    private readonly channel: string,
    private readonly handoverTimeoutMs: number,
    readonly status: ChangeFigures,
    lease?: Lease,
  ) {
    this.lease = lease;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waking.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waking.add(done);
    });
  }

  /** Stops: every wait ends now, and no hand-over is offered again. */
  stop(): void {
    this.stopped = true;
    for (const wake of [...this.waking]) wake();
  }

  /** What ends the reading session under way, for a lost lease. */
  session(abort: () => void): void {
    this.abortSession = abort;
  }

  /** Hands one row over until the hive acknowledges it; false when the reader stopped first; LeaseLost when the lease went. */
  async handOver(message: Message, commitTime: Date): Promise<boolean> {
    let failures = 0;
    while (!this.stopped) {
      // a reader that lost its lease hands nothing more over: the one that took over reads from the kept position
      if (this.lease && !this.lease.holds()) throw new LeaseLost('the lease of this NAME went to another reader');
      const r = await this.ctx.hive.execute(this.channel, message, this.handoverTimeoutMs);
      if (r.Code === Code.Success) {
        if (failures > 0)
          this.ctx.log.info(
            `change stream: channel '${this.channel}' took the change again after ${failures} refusal${failures === 1 ? '' : 's'}; reading resumes`,
          );
        this.status.emitted++;
        this.status.lagMs = Math.max(0, Date.now() - commitTime.getTime());
        return true;
      }
      failures++;
      this.status.refusals++;
      this.status.lastError = `hand-over to '${this.channel}' answered ${r.Code}: ${r.Message}`;
      if (failures === 1)
        this.ctx.log.warn(
          `change stream: ${this.status.lastError}; reading holds at ${message.Control.position?.[0] ?? '?'} and the change is offered again until it is taken`,
        );
      await this.sleep(Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(failures, 10)));
    }
    return false;
  }

  /**
   * The hand-over of a snapshot's rows (change-snapshot.ts), all under one position: a row's key names
   * the snapshot's position, its table and its place in the table. Returns the row handler and a
   * count of the rows.
   */
  snapshotRows(
    cls: string,
    stream: string,
    position: () => string,
  ): {
    onRow: (table: { qualified: string }, row: Record<string, unknown>, index: number) => Promise<boolean>;
    rows: () => number;
  } {
    const taken = new Date();
    let rows = 0;
    return {
      onRow: async (table, row, index) => {
        const message = changeMessage(cls, stream, {
          operation: 'read',
          table: table.qualified,
          position: position(),
          txPosition: `snapshot:${position()}:${table.qualified}`,
          index,
          commitTime: taken,
          tx: 'snapshot',
          values: row,
          before: null,
        });
        const handed = await this.handOver(message, taken);
        if (handed) rows++;
        return handed;
      },
      rows: () => rows,
    };
  }

  /** A reading session streams: said once after failed attempts. */
  streaming(what: string): void {
    if (this.failures > 0)
      this.ctx.log.info(
        `change stream: reading ${what} again after ${this.failures} failed attempt${this.failures === 1 ? '' : 's'}`,
      );
    this.failures = 0;
  }

  /**
   * Runs reading sessions until the reader stops: a session that fails is started again with
   * back-off from where the position stands (`resumeAt` names it for the log); a ConfigError (the
   * server cannot stream, found after an outage at start) is said once and tried again slowly.
   */
  async loop(readOnce: () => Promise<void>, resumeAt: () => string): Promise<void> {
    const lease = this.lease;
    while (!this.stopped) {
      if (lease && !lease.holds()) {
        // standing by: another node's reader holds the NAME; look again every third of the lease
        this.status.active = false;
        await this.sleep(Math.max(100, Math.floor(lease.ttlMs / 3)));
        continue;
      }
      if (lease) this.status.active = true;
      const watch = lease
        ? setInterval(() => !lease.holds() && this.abortSession?.(), Math.max(100, Math.floor(lease.ttlMs / 3)))
        : undefined;
      try {
        await readOnce();
      } catch (e) {
        if (this.stopped) break;
        if (lease && (e instanceof LeaseLost || !lease.holds())) {
          this.status.active = false;
          this.ctx.log.info(
            `change stream: no longer the active reader of '${this.ctx.name}'; standing by (reading resumes at ${resumeAt()} wherever the lease goes)`,
          );
          continue;
        }
        if (e instanceof ConfigError) {
          if (this.status.lastError !== e.message) this.ctx.log.error(e.message);
          this.status.lastError = e.message;
          await this.sleep(MAX_BACKOFF_MS * 6);
          continue;
        }
        this.failures++;
        this.status.reconnects++;
        this.status.lastError = describeError(e);
        if (this.failures === 1)
          this.ctx.log.warn(`change stream: ${this.status.lastError}; reading again from ${resumeAt()} with back-off`);
        else this.ctx.log.debug(`change stream attempt ${this.failures} failed: ${this.status.lastError}`);
        await this.sleep(Math.min(MAX_BACKOFF_MS, 200 * 2 ** Math.min(this.failures, 10)));
      } finally {
        clearInterval(watch);
        this.abortSession = undefined;
      }
    }
  }
}
