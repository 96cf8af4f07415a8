/**
 * The kept entries (kept.ts) of a queue on JetStream: one record per kept entry in the queue's
 * shared log, under the topic kept.<state>.<key> — so a start never reads them (the live entries are
 * under their own topic), one entry is found by its topic, the entries of a state are counted by
 * the server, and a replay or purge removes an entry's topic. Filters are applied while reading the
 * state's records, oldest kept first, as the memory store applies them (kept.ts keptRowMatches).
 * The count of each state is kept here and written into the log with the writes that change it
 * (meta values kept.dead, kept.done): counting on the server needs a consumer, which a cluster
 * that lost a server cannot make for tens of seconds (2.9; measured), and a start must not wait.
 */
import type { SharedLog } from '../hive/transport.js';
import { EntryState } from './entry.js';
import type { KeepOp, KeptCounts, KeptEntries, KeptFilter, KeptRow, KeptState } from './kept.js';
import { KEPT_STATES, keptRowAttribute, keptRowMatches, pageByReading } from './kept.js';
import { countInto } from './responses.js';

/** Rows per chunk handed to a reader, as the other stores hand them. */
const READ_CHUNK = 5_000;
/** Removals sent at once. */
const PARALLEL = 64;

/** Entry keys are UUIDs; a key a request names is looked up only when it can be a topic word. */
const TOPIC_WORD = /^[A-Za-z0-9_-]{1,200}$/;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The meta values holding the counts. */
const COUNT_META: Record<KeptState, string> = { [EntryState.Dead]: 'kept.dead', [EntryState.Done]: 'kept.done' };

export class JetStreamKept implements KeptEntries {
  private counts: KeptCounts = { [EntryState.Dead]: 0, [EntryState.Done]: 0 };
  /** Whether the counts changed since they were last written. */
  changed = false;

  constructor(
    private readonly log: SharedLog,
    /** Writes the counts into the log (through the store's order of writes). */
    private readonly writeCounts: () => Promise<void>,
  ) {}

  /** The counts a start replayed from the log (none yet: no entry was ever kept). */
  loaded(meta: ReadonlyMap<string, string>): void {
    for (const state of KEPT_STATES) this.counts[state] = Number(meta.get(COUNT_META[state]) ?? 0) || 0;
    this.changed = false;
  }

  /** The counts as the writes that record them. */
  countOps(): Array<{ type: 'meta'; name: string; value: string }> {
    this.changed = false;
    return KEPT_STATES.map((state) => ({
      type: 'meta' as const,
      name: COUNT_META[state],
      value: String(this.counts[state]),
    }));
  }

  /** Writes a kept entry (before the log record that takes it out of the live entries). */
  async put(op: KeepOp): Promise<void> {
    const { type: _type, ...row } = op;
    await this.log.append(`kept.${row.state}.${row.key}`, encoder.encode(JSON.stringify(row)));
    this.counts[row.state]++;
    this.changed = true;
  }

  /** Removes kept entries by key, of the given state or of whichever they have. */
  async remove(keys: readonly string[], state?: KeptState): Promise<void> {
    const one = async (key: string): Promise<void> => {
      for (const s of state ? [state] : KEPT_STATES) {
        const purged = await this.log.purge(`kept.${s}.${key}`);
        if (purged > 0) {
          this.counts[s] = Math.max(0, this.counts[s] - 1);
          this.changed = true;
          return;
        }
      }
    };
    for (let i = 0; i < keys.length; i += PARALLEL) await Promise.all(keys.slice(i, i + PARALLEL).map(one));
  }

  async read(filter: KeptFilter, withDocs: boolean, onRows: (rows: KeptRow[]) => void | Promise<void>): Promise<void> {
    if (filter.key !== undefined) {
      const row = await this.get(filter.key);
      if (row && keptRowMatches(row, filter)) await onRows([withDocs ? row : { ...row, doc: '' }]);
      return;
    }
    let chunk: KeptRow[] = [];
    await this.log.read(`kept.${filter.state}.>`, async (records) => {
      for (const r of records) {
        const row = JSON.parse(decoder.decode(r.data)) as KeptRow;
        if (!keptRowMatches(row, filter)) continue;
        chunk.push(withDocs ? row : { ...row, doc: '' });
        if (chunk.length === READ_CHUNK) {
          const full = chunk;
          chunk = [];
          await onRows(full);
        }
      }
    });
    if (chunk.length > 0) await onRows(chunk);
  }

  page(filter: KeptFilter, offset: number, limit: number): Promise<{ keys: string[]; total: number }> {
    return pageByReading(this, filter, offset, limit);
  }

  async group(filter: KeptFilter, groupBy: string): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    await this.read(filter, true, (rows) => {
      for (const row of rows) countInto(counts, keptRowAttribute(row, groupBy));
    });
    return counts;
  }

  async get(key: string): Promise<KeptRow | undefined> {
    if (!TOPIC_WORD.test(key)) return undefined;
    for (const state of [EntryState.Dead, EntryState.Done]) {
      const r = await this.log.last(`kept.${state}.${key}`);
      if (r) return JSON.parse(decoder.decode(r.data)) as KeptRow;
    }
    return undefined;
  }

  async count(): Promise<KeptCounts> {
    return { ...this.counts };
  }

  async purge(filter: KeptFilter, limit = Infinity): Promise<number> {
    const keys: string[] = [];
    await this.read(filter, false, (rows) => {
      for (const r of rows) if (keys.length < limit) keys.push(r.key);
    });
    await this.remove(keys, filter.state);
    if (this.changed) await this.writeCounts();
    return keys.length;
  }
}
