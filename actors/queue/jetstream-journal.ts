/**
 * The journal of a queue on JetStream with Durability journal (README, Durability of the queue on
 * JetStream; docs/ARCHITECTURE.md, The journal): every record the holding node appends to the
 * queue's stream is also written here and fsynced before the append is answered, and kept until the
 * servers have surely fsynced it themselves — `holdMs` (their background sync interval plus a margin)
 * after JetStream last acknowledged it, with the connection up all that time. What it still keeps is
 * published again (journaled-log.ts) after a NATS outage, a lost stream leader or this node's restart.
 *
 * On disk: segment files seg-<n>.jnl under <PersistPath>/<NAME>/journal-<slot>, one JSON line per
 * record ({i: message id, t: topic, a: fence position, d: base64 bytes}) or per dropped record
 * ({x: message id}: its append was refused, it must never be published again). Writes are
 * group-committed: every record waiting while a write+fsync runs goes into the next one. A new segment
 * is begun every ROTATE_MS; a finished segment is deleted once every record in it is dropped or held
 * long enough. A line cut short by a crash is the last one written and was never answered: skipped.
 *
 * One process at a time writes a journal (store-lock.ts). Nodes sharing a PersistPath on one machine
 * take the first free slot; a node started later takes a dead node's slot with its records, and
 * publishes them again when it holds the queue.
 */
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageFullError, StoreHeldError, UnavailableError, describeError } from '../../protocol/errors.js';
import { GroupCommit } from '../shared/group-commit.js';
import type { Logger } from '../observe/logger.js';
import { makeDirectory } from '../shared/make-directory.js';
import { StoreLock } from './store-lock.js';

/** A journaled append: its message id, topic, fence (`after`, for a fenced append) and bytes. */
export interface JournalRecord {
  id: string;
  topic: string;
  after?: number;
  data: Uint8Array;
}

/** A new segment is begun this often, so a held-long-enough one can be deleted whole. */
const ROTATE_MS = 5_000;
/** How often finished segments are looked at for deletion. */
const SWEEP_MS = 1_000;
/** Slots tried for nodes sharing one PersistPath on one machine. */
const SLOTS = 64;
const SEGMENT = /^seg-(\d+)\.jnl$/;

/** One segment file: its records not yet held long enough, and when JetStream last acknowledged one of them. */
interface Segment {
  n: number;
  file: string;
  /** Records written and neither acknowledged nor dropped. */
  pending: number;
  lastAck: number;
  finished: boolean;
}

type Line = { kind: 'record'; record: JournalRecord } | { kind: 'drop'; id: string };

export class LogJournal {
  private readonly segments: Segment[] = [];
  private current: { segment: Segment; file: FileHandle; openedAt: number } | undefined;
  /** A write+fsync is under way (the current segment is not finished meanwhile). */
  private writing = false;
  /** The segment each record not yet acknowledged or dropped is in. */
  private readonly where = new Map<string, Segment>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  private readonly commits = new GroupCommit<Line>(
    (lines) => this.writeLines(lines),
    (e) =>
      /ENOSPC/.test(describeError(e))
        ? new StorageFullError(`the queue's journal is full: ${describeError(e)}`, { cause: e })
        : new UnavailableError(`the queue's journal could not be written: ${describeError(e)}`, { cause: e }),
  );

  private constructor(
    readonly dir: string,
    /** How long a record stays after JetStream acknowledged it (the servers' sync interval plus a margin). */
    readonly holdMs: number,
    private readonly lock: StoreLock,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    for (const name of readdirSync(dir)) {
      const m = SEGMENT.exec(name);
      // a segment from before this start: kept until it was published again (renew) and held since
      if (m)
        this.segments.push({ n: Number(m[1]), file: join(dir, name), pending: 0, lastAck: Infinity, finished: true });
    }
    this.segments.sort((a, b) => a.n - b.n);
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * Opens the first free slot's journal under `base` (made when missing) for the stream `identity`: a
   * journal written for another stream (one deleted and made again, another hive on this PersistPath)
   * is emptied, never published into this one.
   */
  static async open(
    base: string,
    identity: string,
    holdMs: number,
    log: Logger,
    now: () => number = Date.now,
  ): Promise<LogJournal> {
    for (let slot = 0; slot < SLOTS; slot++) {
      const dir = join(base, `journal-${slot}`);
      makeDirectory(dir, 'PersistPath');
      let lock: StoreLock;
      try {
        lock = await StoreLock.acquire(join(dir, 'journal.lock'), `the queue journal ${dir}`);
      } catch (e) {
        if (e instanceof StoreHeldError && slot < SLOTS - 1) continue;
        throw e;
      }
      const journal = new LogJournal(dir, holdMs, lock, log, now);
      await journal.bind(identity);
      return journal;
    }
    throw new UnavailableError('no free journal slot');
  }

  private async bind(identity: string): Promise<void> {
    const file = join(this.dir, 'stream');
    let was: string | undefined;
    try {
      was = readFileSync(file, 'utf8');
    } catch {
      was = undefined;
    }
    if (was === identity) return;
    if (was !== undefined && this.segments.length > 0)
      this.log.warn(`queue journal ${this.dir} was written for ${was}, not ${identity}: its records are dropped`);
    await this.discard();
    writeFileSync(`${file}.tmp`, identity);
    const fd = openSync(`${file}.tmp`, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(`${file}.tmp`, file);
  }

  /** Whether records from before this start (or not yet held long enough) are kept. */
  get empty(): boolean {
    return this.segments.length === 0 && !this.current;
  }

  /** Writes a record and fsyncs it (group-committed). */
  write(record: JournalRecord): Promise<void> {
    if (this.closed) return Promise.reject(new UnavailableError('the queue journal is closed'));
    return this.commits.submit({ kind: 'record', record });
  }

  /** JetStream acknowledged the record: it is released `holdMs` from now (if the connection stays up). */
  acked(id: string): void {
    const segment = this.where.get(id);
    if (!segment) return;
    this.where.delete(id);
    segment.pending--;
    segment.lastAck = this.now();
  }

  /** The record's append was refused: it must never be published again. */
  async drop(id: string): Promise<void> {
    const segment = this.where.get(id);
    this.where.delete(id);
    if (segment) segment.pending--;
    if (!this.closed)
      await this.commits
        .submit({ kind: 'drop', id })
        .catch((e: unknown) =>
          this.log.warn(
            `queue journal: a refused record could not be marked (${describeError(e)}); it is published again after a restart only if the stream lacks it`,
          ),
        );
  }

  /**
   * Everything kept was just published again (or the connection came back): held from now on, as if
   * JetStream had acknowledged every record now. Records never acknowledged stay pending.
   */
  renew(): void {
    const now = this.now();
    for (const s of this.segments) s.lastAck = now;
  }

  /** The records kept, in the order written, without the dropped ones (read from the segment files). */
  kept(): JournalRecord[] {
    const records: JournalRecord[] = [];
    const dropped = new Set<string>();
    for (const s of this.segments) {
      let text: string;
      try {
        text = readFileSync(s.file, 'utf8');
      } catch {
        continue; // deleted meanwhile: held long enough
      }
      for (const line of text.split('\n')) {
        const parsed = parseLine(line);
        if (parsed?.kind === 'record') records.push(parsed.record);
        else if (parsed?.kind === 'drop') dropped.add(parsed.id);
      }
    }
    return records.filter((r) => !dropped.has(r.id));
  }

  /** Forgets every record kept (they cannot be published again: another node wrote the queue after them). */
  async discard(): Promise<void> {
    await this.commits.idle();
    await this.finishCurrent();
    for (const s of this.segments.splice(0)) unlinkQuietly(s.file);
    this.where.clear();
  }

  /** Resolves once everything written so far is held long enough (or the journal closed). */
  async held(): Promise<void> {
    await this.commits.idle();
    if (!this.writing) await this.finishCurrent();
    const upTo = this.segments.length === 0 ? -1 : this.segments[this.segments.length - 1]!.n;
    while (!this.closed && this.segments.some((s) => s.n <= upTo))
      await new Promise((r) => setTimeout(r, SWEEP_MS).unref());
  }

  private async writeLines(lines: Line[]): Promise<void> {
    this.writing = true;
    try {
      const segment = await this.segmentToWrite();
      const text =
        lines
          .map((l) =>
            l.kind === 'record'
              ? JSON.stringify({
                  i: l.record.id,
                  t: l.record.topic,
                  a: l.record.after,
                  d: Buffer.from(l.record.data).toString('base64'),
                })
              : JSON.stringify({ x: l.id }),
          )
          .join('\n') + '\n';
      await this.current!.file.write(text);
      await this.current!.file.datasync();
      for (const l of lines) {
        if (l.kind !== 'record') continue;
        this.where.set(l.record.id, segment);
        segment.pending++;
      }
    } finally {
      this.writing = false;
    }
  }

  private async segmentToWrite(): Promise<Segment> {
    if (this.current && this.now() - this.current.openedAt >= ROTATE_MS) await this.finishCurrent();
    if (!this.current) {
      const n = (this.segments[this.segments.length - 1]?.n ?? 0) + 1;
      const segment: Segment = {
        n,
        file: join(this.dir, `seg-${n}.jnl`),
        pending: 0,
        lastAck: this.now(),
        finished: false,
      };
      const file = await open(segment.file, 'a');
      // the new file's name must survive a power cut of this machine as its contents do
      const dirFd = openSync(this.dir, 'r');
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
      this.segments.push(segment);
      this.current = { segment, file, openedAt: this.now() };
    }
    return this.current.segment;
  }

  private async finishCurrent(): Promise<void> {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    current.segment.finished = true;
    await current.file.close();
  }

  /** Deletes the finished segments whose records are all acknowledged (or dropped) and held long enough. */
  private sweep(): void {
    if (this.current && this.now() - this.current.openedAt >= ROTATE_MS && !this.writing) void this.finishCurrent();
    const now = this.now();
    for (let i = 0; i < this.segments.length;) {
      const s = this.segments[i]!;
      if (s.finished && s.pending <= 0 && now - s.lastAck >= this.holdMs) {
        unlinkQuietly(s.file);
        this.segments.splice(i, 1);
      } else i++;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await this.commits.idle();
    await this.finishCurrent();
    this.lock.release();
  }
}

function parseLine(line: string): Line | undefined {
  if (!line) return undefined;
  try {
    const o = JSON.parse(line) as { i?: string; t?: string; a?: number; d?: string; x?: string };
    if (typeof o.x === 'string') return { kind: 'drop', id: o.x };
    if (typeof o.i !== 'string' || typeof o.t !== 'string' || typeof o.d !== 'string') return undefined;
    return {
      kind: 'record',
      record: {
        id: o.i,
        topic: o.t,
        ...(typeof o.a === 'number' ? { after: o.a } : {}),
        data: new Uint8Array(Buffer.from(o.d, 'base64')),
      },
    };
  } catch {
    return undefined; // cut short by a crash: never answered
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}
