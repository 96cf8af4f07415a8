/**
 * The queue's shared log with Durability journal (docs/ARCHITECTURE.md, The journal): every append
 * is written to the node's journal (jetstream-journal.ts) and fsynced there while JetStream stores it,
 * and answered once both hold it. `recover()` publishes again what the journal keeps and the stream
 * lost — after a NATS outage, a lost stream leader, this node's restart, or a fenced append that finds
 * the stream gone back — with the same message ids and in the order first written:
 *
 * - Fenced records (the queue's own log, whose appends each expect the topic's last record) form a
 *   chain from the position the oldest kept one was fenced on. The stream's records after that
 *   position are compared with the chain: the matching ones survived; from the first missing one on,
 *   the rest is published again, each fenced on the one before, so a writer meanwhile still fences
 *   it out. A record there that is not ours means another node wrote the queue after our records:
 *   those the stream lost cannot be put back without undoing its writes, so the journal is given up
 *   (logged with the count) and the append fails as fenced.
 * - Unfenced records (kept entries) are published again when they follow a record of the chain that
 *   was lost (the stream loses its newest records first), with their message ids (JetStream's
 *   duplicate window drops one that did survive).
 * - A record published again has a new position; a fenced append naming the old one is given the new.
 *
 * Snapshots are not journaled (their position fields name log positions that change when records are
 * published again); the store's compaction waits for the journal's hold before it purges (jetstream-store.ts).
 */
import { randomUUID } from 'node:crypto';
import { StorageFullError, describeError } from '../../protocol/errors.js';
import type { LogRecord, SharedLog } from '../hive/transport.js';
import { LogFencedError } from '../hive/transport.js';
import type { Logger } from '../observe/logger.js';
import type { JournalRecord, LogJournal } from './jetstream-journal.js';

/** How long publishing again waits for the stream to answer after its servers came back (a meta leader, then the stream's, are elected). */
const RECOVER_WAIT_MS = 90_000;

/**
 * Runs `run` again on any failure but a fence or a full stream until RECOVER_WAIT_MS: servers coming
 * back from a power cut answer "stream not found", "no responders" or time out for a while.
 */
async function untilAnswered<T>(run: () => Promise<T>, log: Logger, what: string): Promise<T> {
  const until = Date.now() + RECOVER_WAIT_MS;
  for (let tries = 0; ; tries++) {
    try {
      return await run();
    } catch (e) {
      if (e instanceof LogFencedError || e instanceof StorageFullError || Date.now() > until) throw e;
      if (tries % 10 === 0) log.warn(`queue journal: ${what} is not answered yet (${describeError(e)}); trying again`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What a recovery did, for the log and the tests. */
export interface Recovery {
  kept: number;
  republished: number;
  /** Records the stream lost that could not be put back (another node wrote after them). */
  abandoned: number;
}

export class JournaledLog implements SharedLog {
  readonly maxRecordBytes: number;
  readonly servers: SharedLog['servers'];
  /** A recovery under way: appends wait for it. */
  private recovering: Promise<Recovery> | undefined;
  /** Journaled appends under way, until acknowledged or marked refused (a recovery starts once they are). */
  private readonly publishing = new Set<Promise<unknown>>();
  /** Position JetStream gave each journaled record, while it may still be published again. */
  private readonly positions = new Map<string, { seq: number; at: number }>();
  /** Old position → new, for records published again. */
  private readonly moved = new Map<number, number>();
  /** New positions of the records the last recovery published again, by message id. */
  private republished = new Map<string, number>();

  constructor(
    private readonly inner: SharedLog,
    readonly journal: LogJournal,
    private readonly log: Logger,
    /** Topics not journaled (snapshots). */
    private readonly unjournaled: ReadonlySet<string>,
  ) {
    this.maxRecordBytes = inner.maxRecordBytes;
    this.servers = inner.servers;
  }

  async append(topic: string, data: Uint8Array, after?: number, id?: string): Promise<number> {
    if (this.unjournaled.has(topic)) return this.inner.append(topic, data, after, id);
    while (this.recovering) await this.recovering.catch(() => undefined);
    const fence = after === undefined ? undefined : (this.moved.get(after) ?? after);
    const record: JournalRecord = {
      id: id ?? randomUUID(),
      topic,
      ...(fence === undefined ? {} : { after: fence }),
      data,
    };
    const written = this.journal.write(record);
    const published = this.inner.append(topic, data, fence, record.id);
    // settled once the append is acknowledged or its refusal marked in the journal: a recovery reading
    // the journal before that would publish again a record whose append is being refused
    let finished: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finished = resolve));
    this.publishing.add(done);
    try {
      const [w, p] = await Promise.allSettled([written, published]);
      if (w.status === 'fulfilled' && p.status === 'fulfilled') {
        // the store's fence now names a position JetStream just gave: the old positions are of no more use
        // (kept, one could be taken for a new position that happens to have the same number)
        if (fence !== undefined) this.moved.clear();
        return this.acknowledged(record.id, p.value);
      }
      if (w.status === 'fulfilled' && p.status === 'rejected' && p.reason instanceof LogFencedError) {
        // the stream may have gone back (a power cut of its servers): then our record is published again
        this.publishing.delete(done);
        finished();
        const again = await this.recover().then(
          () => this.republished.get(record.id),
          (e: unknown) => this.log.warn(`queue journal: publishing again failed (${describeError(e)})`),
        );
        if (again !== undefined) {
          // the store is given a new position: any old one it might name next is one it got before
          this.moved.clear();
          return this.acknowledged(record.id, again);
        }
      }
      if (w.status === 'fulfilled') await this.journal.drop(record.id);
      throw p.status === 'rejected' ? p.reason : (w as PromiseRejectedResult).reason;
    } finally {
      this.publishing.delete(done);
      finished();
    }
  }

  private acknowledged(id: string, seq: number): number {
    this.journal.acked(id);
    const now = Date.now();
    this.positions.set(id, { seq, at: now });
    // positions of records surely released by now are of no more use (Map keeps insertion order)
    for (const [key, p] of this.positions) {
      if (now - p.at < 4 * this.journal.holdMs) break;
      this.positions.delete(key);
    }
    return seq;
  }

  /** A new store reads the stream from its start: no position it names needs moving. */
  newTerm(): void {
    this.moved.clear();
    this.positions.clear();
  }

  /** Publishes again what the journal keeps and the stream lost (one recovery at a time; appends wait). */
  recover(): Promise<Recovery> {
    this.recovering ??= this.recoverNow().finally(() => (this.recovering = undefined));
    return this.recovering;
  }

  private async recoverNow(): Promise<Recovery> {
    while (this.publishing.size > 0) await Promise.allSettled([...this.publishing]);
    const records = this.journal.kept();
    const result: Recovery = { kept: records.length, republished: 0, abandoned: 0 };
    this.republished = new Map();
    if (records.length === 0) return result;
    // per fenced topic: where its chain goes on (the last surviving position) and the first lost record
    const chains = new Map<string, { at: number; firstLost: number }>();
    let firstLost = records.length;
    /** Unfenced records after the last surviving record of a chain may be lost with it. */
    let survivedUpTo = -1;
    for (const topic of new Set(records.filter((r) => r.after !== undefined).map((r) => r.topic))) {
      const chain = records.map((r, i) => ({ r, i })).filter((x) => x.r.topic === topic && x.r.after !== undefined);
      const start = chain[0]!.r.after!;
      const last = await untilAnswered(() => this.inner.last(topic), this.log, 'reading the stream');
      // the stream's newest record is our newest: everything before it survived too
      if (last && sameBytes(last.data, chain[chain.length - 1]!.r.data)) {
        survivedUpTo = Math.max(survivedUpTo, chain[chain.length - 1]!.i);
        continue;
      }
      const stream: LogRecord[] = [];
      await untilAnswered(
        async () => {
          stream.length = 0;
          await this.inner.read(topic, (rs) => void stream.push(...rs), start + 1);
        },
        this.log,
        'reading the stream',
      );
      let k = 0;
      while (k < chain.length && k < stream.length && sameBytes(stream[k]!.data, chain[k]!.r.data)) k++;
      if (k > 0) survivedUpTo = Math.max(survivedUpTo, chain[k - 1]!.i);
      if (k === chain.length) continue;
      if (k < stream.length) {
        // kept, not published: they leave the journal as they are held long enough
        result.abandoned = chain.length - k;
        this.log.error(
          `queue journal: the stream lost ${chain.length - k} record(s) of this node's that another node wrote after; they cannot be published again without undoing its writes (docs/ARCHITECTURE.md, The journal)`,
        );
        return result;
      }
      let at = k > 0 ? stream[k - 1]!.seq : start;
      if (k === 0 && (last?.seq ?? 0) !== start) {
        this.log.error(
          `queue journal: the stream lost records older than the journal keeps (it ends at ${last?.seq ?? 0}, the journal begins after ${start}): the servers fsync less often than assumed`,
        );
        at = last?.seq ?? 0;
      }
      chains.set(topic, { at, firstLost: chain[k]!.i });
      firstLost = Math.min(firstLost, chain[k]!.i);
    }
    if (firstLost === records.length) {
      this.journal.renew();
      return result;
    }
    for (let i = Math.min(firstLost, survivedUpTo + 1); i < records.length; i++) {
      const r = records[i]!;
      const chain = r.after === undefined ? undefined : chains.get(r.topic);
      // a fenced record before its chain's first lost one survived, as did an unfenced one before the last survivor
      if (r.after !== undefined ? !chain || i < chain.firstLost : i <= survivedUpTo) continue;
      const seq = await untilAnswered(
        () => this.inner.append(r.topic, r.data, chain?.at, r.id),
        this.log,
        'publishing again',
      );
      if (chain) {
        const old = this.positions.get(r.id);
        if (old) this.moved.set(old.seq, seq);
        chain.at = seq;
      }
      this.positions.set(r.id, { seq, at: Date.now() });
      this.republished.set(r.id, seq);
      result.republished++;
    }
    this.journal.renew();
    if (result.republished > 0)
      this.log.warn(
        `queue journal: ${result.republished} of ${records.length} kept record(s) were missing from the stream and were published again`,
      );
    return result;
  }

  read(pattern: string, onRecords: (records: LogRecord[]) => void | Promise<void>, from?: number): Promise<void> {
    return this.inner.read(pattern, onRecords, from);
  }
  count(pattern: string): Promise<number> {
    return this.inner.count(pattern);
  }
  last(topic: string): Promise<LogRecord | undefined> {
    return this.inner.last(topic);
  }
  end(): Promise<number> {
    return this.inner.end();
  }
  purge(pattern: string, before?: number): Promise<number> {
    return this.inner.purge(pattern, before);
  }
}
