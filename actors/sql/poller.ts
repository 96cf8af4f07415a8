/**
 * The poller actor (README, The SQL service): runs the configured SELECT every SQL_POLLINTERVAL and emits the
 * rows to OUTPUTCHANNEL as Class SQL_POLLCLASS, Operation SQL_POLLOPERATION, Data shaped like a SELECT
 * result (one list per column, rowcount). A protocol message has no List, so the rows travel
 * column-wise in Data only.
 *
 * Runs never overlap: the next tick is scheduled when a run ends (at the interval after the run
 * began, or at once when the run took longer). A failing database backs the retries off up to
 * max(interval, 30 s) and is logged once when the outage begins and once when polling recovers —
 * not on every attempt. With SQL_TRACKCOLUMN only rows beyond the last emitted value are read and
 * emitted (nothing is emitted when there are none), and the value advances only once a listener
 * took the message. On a NATS hive the pollers of one NAME elect one active poller with a lease
 * (actors/hive/lease.ts) and share the tracked value (shared-mark.ts); the others stand by.
 */
import { createHash } from 'node:crypto';
import type { ValueMap } from '../../protocol/message.js';
import { makeMessage } from '../../protocol/message.js';
import { describeError } from '../../protocol/errors.js';
import type { ActorRef } from '../../supervisors/runtime.js';
import type { ServiceContext } from '../service/context.js';
import { InFlight } from '../service/serve.js';
import type { Database } from './database.js';
import type { Row } from './results.js';
import { rowsResult } from './results.js';
import type { Plan } from './statement.js';
import type { Lease } from '../hive/lease.js';
import { MarkMovedError } from './shared-mark.js';
import type { TrackMemory, TrackValue } from './track-state.js';
import { describeTrack, sameTrack, trackValue } from './track-state.js';
import { IDEMPOTENCY_KEY, fitsIdempotencyKey } from '../../protocol/idempotency.js';

/** Data name the tracking condition's bound value is registered under (no message supplies it). */
export const TRACK_PARAM = 'sql_track_last';

const MAX_BACKOFF_MS = 30_000;

export interface PollerOptions {
  intervalMs: number;
  cls: string;
  operation: string;
  channel: string;
  /** The SELECT of the first poll (and of every poll without tracking). */
  first: Plan;
  /** The poller's NAME: with tracking, each batch's idempotency key is made of it (batchKey). */
  name: string;
  /** With tracking: the SELECT reading rows beyond the last value, its row key, its column and its memory. */
  tracking?: { next: Plan; key: string; column: string; state: TrackMemory };
  /** On a NATS hive: polls only while it holds the lease of its NAME (actors/hive/lease.ts). */
  lease?: Lease;
  /** Resolves once SQL_INITFILE has run (rejects while the database does not answer); undefined once it has. */
  ready: () => Promise<void> | undefined;
}

interface PollerStatus {
  polls: number;
  emitted: number;
  rowsEmitted: number;
  undelivered: number;
  failures: number;
  lastError?: string;
  lastValue?: string;
  /** With a lease: whether this poller is the active one of its NAME. */
  active?: boolean;
}

export interface RunningPoller {
  status(): PollerStatus;
  stop(deadlineMs: number): Promise<void>;
}

type PollerMsg = { type: 'tick' };

/** Delay before the next attempt after `failures` consecutive failures. */
export function backoffDelay(intervalMs: number, failures: number): number {
  if (failures <= 0) return intervalMs;
  const cap = Math.max(intervalMs, MAX_BACKOFF_MS);
  return Math.min(cap, intervalMs * 2 ** Math.min(failures, 20));
}

/**
 * The idempotency-key control of a tracked batch: made of the NAME, the column and the batch's last
 * value, so whichever poller of the NAME sends these rows (again) sends them under the same key. A key
 * the queue would refuse (too long, not printable ASCII) is replaced by its SHA-256.
 */
export function batchKey(name: string, column: string, end: TrackValue): string {
  const key = `sql-poll:${name}:${column}:${describeTrack(end)}`;
  return fitsIdempotencyKey(key) ? key : `sql-poll:sha256:${createHash('sha256').update(key).digest('hex')}`;
}

function bindOf(plan: Plan, last: TrackValue | undefined): Record<string, unknown> {
  const bind: Record<string, unknown> = {};
  for (const p of plan.params) bind[p.key] = p.name === TRACK_PARAM ? last : undefined;
  return bind;
}

export function startPoller(ctx: ServiceContext<unknown>, db: Database, opts: PollerOptions): RunningPoller {
  const status: PollerStatus = { polls: 0, emitted: 0, rowsEmitted: 0, undelivered: 0, failures: 0 };
  const inFlight = new InFlight();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let consecutive = 0;

  /** Runs a write of the mark; false when another poller of the NAME moved it (this one then lost the lease). */
  const markWrite = async (write: Promise<void>): Promise<boolean> => {
    try {
      await write;
      return true;
    } catch (e) {
      if (!(e instanceof MarkMovedError)) throw e;
      opts.lease?.lost(e.message);
      return false;
    }
  };

  /** Emits one batch of rows; with tracking, claimed before and recorded after. False when it did not go out. */
  const emitBatch = async (rows: Row[], columns: string[]): Promise<boolean> => {
    const tracking = opts.tracking;
    const end = tracking && trackValue(rows[rows.length - 1]![tracking.key]);
    if (tracking && end !== undefined && !(await markWrite(tracking.state.claim(end)))) return false;
    const Control: ValueMap =
      tracking && end !== undefined ? { [IDEMPOTENCY_KEY]: [batchKey(opts.name, tracking.column, end)] } : {};
    const delivered = await ctx.hive.emit(
      opts.channel,
      makeMessage({ Class: opts.cls, Operation: opts.operation, Control, Data: rowsResult(rows, columns).Data }),
    );
    if (!delivered) {
      // the claim stays: the next poll sends these rows again under the same key
      status.undelivered++;
      return false;
    }
    status.emitted++;
    status.rowsEmitted += rows.length;
    if (tracking && end !== undefined) {
      if (!(await markWrite(tracking.state.save(end)))) return false;
      status.lastValue = describeTrack(end);
    }
    return true;
  };

  const pollOnce = async (): Promise<void> => {
    await opts.ready();
    await opts.tracking?.state.refresh?.();
    const last = opts.tracking?.state.last;
    const pending = opts.tracking?.state.pending;
    const plan = opts.tracking && last !== undefined ? opts.tracking.next : opts.first;
    const outcome = await db.run('select', plan.sql, bindOf(plan, last));
    if (!('rows' in outcome)) return;
    status.polls++;
    if (opts.tracking && outcome.rows.length === 0) return;
    // a query that outlived the lease emits nothing: the poller that took over reads the same rows
    if (opts.lease && !opts.lease.holds()) return;
    let rows = outcome.rows;
    if (opts.tracking && pending !== undefined) {
      // a batch claimed but not recorded as delivered (its poller died, or no listener took it): the
      // same rows again, alone, under the same idempotency key, so a deduplicating queue keeps one
      const key = opts.tracking.key;
      const upTo = rows.findLastIndex((row) => sameTrack(trackValue(row[key]), pending));
      if (upTo >= 0) {
        ctx.log.info(
          `sending again the batch claimed up to ${opts.tracking.column} ${describeTrack(pending)} (${upTo + 1} row${upTo === 0 ? '' : 's'}), which may have gone out unrecorded, under its idempotency-key`,
        );
        if (!(await emitBatch(rows.slice(0, upTo + 1), outcome.columns))) return;
        rows = rows.slice(upTo + 1);
        if (rows.length === 0) return;
      }
    }
    await emitBatch(rows, outcome.columns);
  };

  const ref: ActorRef<PollerMsg> = ctx.runtime.spawn<undefined, PollerMsg>(ctx.supervisor, {
    name: 'poller',
    init: () => undefined,
    receive: async (state) => {
      if (stopped) return state;
      if (opts.lease) status.active = opts.lease.holds();
      if (opts.lease && !status.active) {
        // standing by: look again soon, so a takeover polls within a third of the lease, not a whole interval later
        timer = setTimeout(
          () => ctx.runtime.tell(ref, { type: 'tick' }),
          Math.min(opts.intervalMs, Math.max(100, Math.floor(opts.lease.ttlMs / 3))),
        );
        return state;
      }
      const began = Date.now();
      inFlight.begin();
      let delay: number;
      try {
        await pollOnce();
        if (consecutive > 0)
          ctx.log.info(`poll recovered after ${consecutive} failed attempt${consecutive === 1 ? '' : 's'}`);
        consecutive = 0;
        delay = Math.max(0, opts.intervalMs - (Date.now() - began));
      } catch (e) {
        consecutive++;
        status.failures++;
        status.lastError = describeError(e);
        delay = backoffDelay(opts.intervalMs, consecutive);
        // once per outage: the first failure is a warning, the retries are debug lines
        if (consecutive === 1)
          ctx.log.warn(
            `poll failed: ${status.lastError}; retrying with back-off (at most every ${Math.max(opts.intervalMs, MAX_BACKOFF_MS)} ms) until it succeeds`,
          );
        else ctx.log.debug(`poll attempt ${consecutive} failed: ${status.lastError}; next in ${delay} ms`);
      } finally {
        inFlight.end();
      }
      if (!stopped) timer = setTimeout(() => ctx.runtime.tell(ref, { type: 'tick' }), delay);
      return state;
    },
  });
  ctx.runtime.tell(ref, { type: 'tick' });

  return {
    status: () => ({ ...status }),
    async stop(deadlineMs) {
      stopped = true;
      clearTimeout(timer);
      await inFlight.idle(deadlineMs);
      await opts.lease?.stop();
    },
  };
}
