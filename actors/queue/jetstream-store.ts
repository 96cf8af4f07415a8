/**
 * The queue's store on JetStream (Store jetstream): the queue's writes go into a shared
 * log of the NATS hive (actors/hive/nats-log.ts: a stream with Replicas copies) as records of lines
 * (log-records.ts), group-committed like the SQLite store's transactions: every write waiting
 * while a record is being appended goes into the next record together, and each write's promise
 * resolves only once JetStream acknowledged its record at the stream's replication.
 *
 * - A start replays the log: the newest complete snapshot, then the records after it.
 * - Every append expects the log's last record to be this store's last one (a fenced append): a
 *   second node writing the same queue makes this store's next write fail (LogFencedError, 503), so
 *   two writers never interleave; the queue then reloads (queue-holder.ts).
 * - The log is compacted once it grew by `compactBytes` since the last snapshot: the state is
 *   replayed from the log, written as a snapshot, and the records it covers are purged.
 * - Kept entries have topics of their own (jetstream-kept.ts): a kept entry is written before the
 *   record that takes it from the live entries, a replayed one removed after the record that puts it
 *   back, so a crash between the two leaves a copy too many, never none.
 */
import { randomUUID } from 'node:crypto';
import { UnavailableError, describeError } from '../../protocol/errors.js';
import type { SharedLog } from '../hive/transport.js';
import { LogFencedError } from '../hive/transport.js';
import { GroupCommit } from '../shared/group-commit.js';
import type { Logger } from '../observe/logger.js';
import { JetStreamKept } from './jetstream-kept.js';
import type { KeepOp, UnkeepOp } from './kept.js';
import type { LoggedOp } from './log-records.js';
import { LogState, encodeOp, packLines } from './log-records.js';
import type { QueueStore, ScheduleRow, SeenRow, StoreOp, StoredRow } from './store.js';

/** The topic of the queue's writes, and of its snapshots. */
const LOG = 'log';
export const SNAPSHOT = 'snap';
/** A snapshot record begins with this line: #<tab>id<tab>asOf<tab>part<tab>'end' on its last part. */
const SNAPSHOT_MARK = '#';
/**
 * When the log is compacted: once the records since the last snapshot are larger than it (at least
 * COMPACT_BYTES), so rewriting the state costs at most as much as was written; or once they are
 * more than COMPACT_RECORDS and an eighth of its size, so a start reads few records one by one.
 */
const COMPACT_BYTES = 64 * 1024 * 1024;
const COMPACT_RECORDS = 20_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** How long a start waits for the stream to answer (a leader election after a lost server takes seconds). */
const START_WAIT_MS = 60_000;

/**
 * Runs a read of a start again while the stream answers 503 (it has no leader, or its server's
 * link is down): a node taking a queue over after a lost machine meets exactly that. A fenced
 * write is not retried: it means another node holds the queue.
 */
async function whileElecting<T>(run: () => Promise<T>, log: Logger): Promise<T> {
  const until = Date.now() + START_WAIT_MS;
  for (;;) {
    try {
      return await run();
    } catch (e) {
      if (!(e instanceof UnavailableError) || e instanceof LogFencedError || Date.now() > until) throw e;
      log.warn(`the queue's stream does not answer yet (${describeError(e)}); trying again`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export interface JetStreamStoreOptions {
  /** Log bytes and records appended since the last snapshot that start a compaction (tests make them small). */
  compactBytes?: number;
  compactRecords?: number;
  /**
   * Awaited before a compaction purges what its snapshot covers: with Durability journal, until the
   * servers surely fsynced the snapshot (a purge reaches their disks at once, the snapshot only with
   * their next sync: a power cut in between would leave neither).
   */
  beforePurge?: () => Promise<void>;
  /** Told once when an append finds another writer's record: this store's state is stale from then on. */
  onFenced?: (error: LogFencedError) => void;
}

/** One snapshot as its records announce it. */
interface SnapshotHeader {
  id: string;
  asOf: number;
  end: boolean;
}

function snapshotHeader(text: string): SnapshotHeader | undefined {
  const first = text.slice(0, text.indexOf('\n') < 0 ? text.length : text.indexOf('\n')).split('\t');
  if (first[0] !== SNAPSHOT_MARK || first.length < 4) return undefined;
  return { id: first[1]!, asOf: Number(first[2]), end: first[4] === 'end' };
}

export class JetStreamStore implements QueueStore {
  readonly durable = true;
  readonly kept: JetStreamKept;
  private closed = false;
  /** Position of the last log record this store knows of: the next append expects it. */
  private tail = 0;
  /** What the load replayed, until the queue has read its idempotency keys and schedules. */
  private loaded: LogState | undefined;
  private grownBytes = 0;
  private grownRecords = 0;
  private snapshotBytes = 0;
  private compacting: Promise<void> | undefined;
  private readonly compactBytes: number;
  private readonly compactRecords: number;
  private fenced: LogFencedError | undefined;
  private readonly commits = new GroupCommit<StoreOp[]>(
    (batches) => this.commit(batches.flat()),
    (e) => e as Error,
  );

  constructor(
    private readonly log: SharedLog,
    private readonly logger: Logger,
    /** Where the store is, for the log: the stream and its replication. */
    readonly where: string,
    options: JetStreamStoreOptions = {},
  ) {
    this.kept = new JetStreamKept(log, () => this.write(this.kept.countOps()));
    this.compactBytes = options.compactBytes ?? COMPACT_BYTES;
    this.compactRecords = options.compactRecords ?? COMPACT_RECORDS;
    this.onFenced = options.onFenced;
    this.beforePurge = options.beforePurge;
  }

  private readonly beforePurge: (() => Promise<void>) | undefined;
  private closeNow: () => void = () => undefined;
  private readonly closing = new Promise<void>((resolve) => (this.closeNow = resolve));

  private readonly onFenced: ((error: LogFencedError) => void) | undefined;

  /** The newest complete snapshot and the records after it, replayed. */
  private async replay(): Promise<{
    state: LogState;
    tail: number;
    logBytes: number;
    records: number;
    snapshotBytes: number;
  }> {
    const onUnreadable = (line: string, e: Error): void =>
      this.logger.error(`queue log record line is unreadable (${e.message}); it is skipped: ${line}`);
    // snapshot parts come in order; a snapshot counts once its last part is there, and the one
    // covering the most of the log wins (a node that lost the log may have written an older one later)
    let best: { state: LogState; asOf: number; bytes: number } | undefined;
    let building: { id: string; asOf: number; state: LogState; bytes: number } | undefined;
    await this.log.read(SNAPSHOT, (records) => {
      for (const r of records) {
        const text = decoder.decode(r.data);
        const header = snapshotHeader(text);
        if (!header) continue;
        if (building?.id !== header.id)
          building = { id: header.id, asOf: header.asOf, state: new LogState(), bytes: 0 };
        building.state.apply(text, onUnreadable);
        building.bytes += r.data.length;
        if (header.end && (!best || header.asOf >= best.asOf))
          best = { state: building.state, asOf: header.asOf, bytes: building.bytes };
      }
    });
    const state = best?.state ?? new LogState();
    let tail = best?.asOf ?? 0;
    let logBytes = 0;
    let records = 0;
    await this.log.read(
      LOG,
      (chunk) => {
        for (const r of chunk) {
          if (r.seq <= tail) continue;
          state.apply(decoder.decode(r.data), onUnreadable);
          tail = r.seq;
          logBytes += r.data.length;
          records++;
        }
      },
      tail + 1,
    );
    return { state, tail, logBytes, records, snapshotBytes: best?.bytes ?? 0 };
  }

  async load(onRows: (rows: StoredRow[]) => void): Promise<Map<string, string>> {
    const { state, tail, logBytes, records, snapshotBytes } = await whileElecting(() => this.replay(), this.logger);
    this.tail = tail;
    this.grownBytes = logBytes;
    this.grownRecords = records;
    this.snapshotBytes = snapshotBytes;
    this.loaded = state;
    this.kept.loaded(state.meta);
    const rows = state.entriesBySeq();
    for (let i = 0; i < rows.length; i += 20_000) onRows(rows.slice(i, i + 20_000));
    state.entries.clear();
    return new Map(state.meta);
  }

  async loadSeen(after: number): Promise<SeenRow[]> {
    return (this.loaded?.seen ?? []).filter((k) => k.seenAt > after).sort((a, b) => a.seenAt - b.seenAt);
  }

  async loadSchedules(): Promise<ScheduleRow[]> {
    return this.loaded?.scheduleRows() ?? [];
  }

  write(ops: StoreOp[]): Promise<void> {
    if (this.closed) return Promise.reject(new UnavailableError('the queue store is closed'));
    // once another node wrote the log, this store's view of it is stale: nothing more is written
    if (this.fenced) return Promise.reject(this.fenced);
    return this.commits.submit(ops);
  }

  /** Appends lines as records, each expecting the one before: the whole batch or, after a failure, a prefix of it. */
  private async appendLines(lines: Iterable<string>): Promise<void> {
    for (const text of packLines(lines, this.log.maxRecordBytes)) {
      const data = encoder.encode(text);
      try {
        this.tail = await this.log.append(LOG, data, this.tail);
      } catch (e) {
        if (e instanceof LogFencedError && !this.fenced) {
          this.fenced = new LogFencedError(
            `the queue's log was written by another node: this node no longer holds the queue (${e.message})`,
          );
          this.logger.warn(this.fenced.message);
          this.onFenced?.(this.fenced);
        }
        throw this.fenced ?? e;
      }
      this.grownBytes += data.length;
      this.grownRecords++;
    }
  }

  private dueForCompaction(): boolean {
    if (this.grownBytes >= Math.max(this.compactBytes, this.snapshotBytes)) return true;
    return this.grownRecords >= this.compactRecords && this.grownBytes * 8 >= this.snapshotBytes;
  }

  private async commit(batch: StoreOp[]): Promise<void> {
    const keeps: KeepOp[] = [];
    const unkeeps: string[] = [];
    const lines: string[] = [];
    for (const op of batch) {
      if (op.type === 'keep') {
        keeps.push(op);
        lines.push(encodeOp({ type: 'remove', key: op.key }));
      } else if (op.type === 'unkeep') unkeeps.push(...(op as UnkeepOp).keys);
      else lines.push(encodeOp(op as LoggedOp));
    }
    if (keeps.length > 0) await Promise.all(keeps.map((k) => this.kept.put(k)));
    if (unkeeps.length > 0) {
      // the counts go with the records the removals follow: a crash between counts one entry too many
      if (lines.length > 0) await this.appendLines(lines);
      await this.kept.remove(unkeeps);
      await this.appendLines(this.kept.countOps().map(encodeOp));
    } else {
      if (this.kept.changed) for (const op of this.kept.countOps()) lines.push(encodeOp(op));
      if (lines.length > 0) await this.appendLines(lines);
    }
    if (this.dueForCompaction() && !this.compacting && !this.closed) {
      this.compacting = this.compact()
        .catch((e: unknown) =>
          this.logger.warn(`queue log compaction failed (${describeError(e)}); the next write tries again`),
        )
        .finally(() => (this.compacting = undefined));
    }
  }

  /**
   * Writes the state the log holds now as a snapshot, then purges what it covers. Runs beside the
   * writes: the snapshot covers the log up to `asOf` and a start replays the records after it.
   */
  private async compact(): Promise<void> {
    const started = Date.now();
    const { state, tail } = await this.replay();
    const id = randomUUID();
    const parts = [
      ...packLines(
        (function* () {
          for (const op of state.asOps()) yield encodeOp(op);
        })(),
        this.log.maxRecordBytes - 200,
      ),
    ];
    if (parts.length === 0) parts.push('');
    let first = 0;
    let bytes = 0;
    for (let i = 0; i < parts.length; i++) {
      const header = [SNAPSHOT_MARK, id, String(tail), String(i), i === parts.length - 1 ? 'end' : ''].join('\t');
      const data = encoder.encode(parts[i] ? `${header}\n${parts[i]}` : header);
      const seq = await this.log.append(SNAPSHOT, data);
      bytes += data.length;
      if (i === 0) first = seq;
    }
    this.grownBytes = 0;
    this.grownRecords = 0;
    this.snapshotBytes = bytes;
    // a write through the queue's own order of writes, fenced as they are: a node that lost the
    // queue meanwhile purges nothing (another node's snapshot may cover more than this one)
    await this.write([{ type: 'meta', name: 'compacted', value: id }]);
    // a close does not wait for the servers' sync: the next holder's compaction purges instead
    if (this.beforePurge) await Promise.race([this.beforePurge(), this.closing]);
    if (this.closed || this.fenced) return;
    // the record at `tail` stays: the next fenced append expects the log topic's last record
    await this.log.purge(LOG, tail);
    await this.log.purge(SNAPSHOT, first);
    this.logger.info(
      `queue log compacted in ${Date.now() - started} ms: ${state.entries.size} entries in a snapshot of ${parts.length} record(s) as of position ${tail}`,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closeNow();
    await this.commits.idle();
    await this.compacting;
  }
}
