/**
 * The queue's writes as records of a shared log (jetstream-store.ts): one line per write, so a
 * group commit of many writes is one record. An entry's put carries its document as the rest of the
 * line, unquoted (a document is JSON, which never holds a raw newline), so neither writing nor
 * reading a put costs a second JSON round of the document. The replay (LogState) rebuilds from the
 * lines what the SQLite store holds in its tables: the live entries, meta values, idempotency keys
 * and schedules. Kept entries are not in these records: they have topics of their own (jetstream-kept.ts).
 */
import type { ScheduleRow, SeenRow, StoreOp, StoredRow } from './store.js';

/** The writes that go into the log (keep and unkeep are turned into a removal and kept records first). */
export type LoggedOp = Exclude<StoreOp, { type: 'keep' } | { type: 'unkeep' }>;

const TAB = '\t';

/** One write as its line (without the newline). */
export function encodeOp(op: LoggedOp): string {
  switch (op.type) {
    case 'put':
      return `P\t${op.key}\t${op.seq}\t${op.state}\t${op.dueAt}\t${op.doc}`;
    case 'remove':
      return `R\t${op.key}`;
    case 'clear':
      return 'C';
    case 'meta':
      return `M\t${JSON.stringify(op.name)}\t${JSON.stringify(op.value)}`;
    case 'seen':
      return `S\t${op.seenAt}\t${op.entryKey}\t${JSON.stringify(op.key)}`;
    case 'forget-seen':
      return `F\t${op.before}`;
    case 'put-schedule':
      return `H\t${JSON.stringify(op.name)}\t${op.doc}`;
    case 'remove-schedule':
      return `U\t${JSON.stringify(op.name)}`;
  }
}

/** The n-th tab-separated field from `from`: [field, where the next starts]. */
function field(line: string, from: number): [string, number] {
  const at = line.indexOf(TAB, from);
  return at < 0 ? [line.slice(from), line.length + 1] : [line.slice(from, at), at + 1];
}

/**
 * The state the log's writes build, replayed line by line: the entries in the order a load hands
 * them over (by seq), the meta values, the idempotency keys and the schedules.
 */
export class LogState {
  readonly entries = new Map<string, StoredRow>();
  readonly meta = new Map<string, string>();
  seen: SeenRow[] = [];
  readonly schedules = new Map<string, string>();

  /** Applies the lines of one record; a line it cannot read is reported and skipped. */
  apply(text: string, onUnreadable: (line: string, error: Error) => void): void {
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const line = text.slice(start, end);
      start = end + 1;
      if (line === '' || line.startsWith('#')) continue;
      try {
        this.line(line);
      } catch (e) {
        onUnreadable(line.slice(0, 120), e as Error);
      }
    }
  }

  private line(line: string): void {
    const kind = line[0];
    let at = 2;
    let key: string, text: string;
    switch (kind) {
      case 'P': {
        let seq: string, state: string, dueAt: string;
        [key, at] = field(line, at);
        [seq, at] = field(line, at);
        [state, at] = field(line, at);
        [dueAt, at] = field(line, at);
        this.entries.set(key, { key, seq: Number(seq), state, dueAt: Number(dueAt), doc: line.slice(at) });
        return;
      }
      case 'R':
        this.entries.delete(line.slice(2));
        return;
      case 'C':
        this.entries.clear();
        return;
      case 'M':
        [key, at] = field(line, at);
        this.meta.set(JSON.parse(key) as string, JSON.parse(line.slice(at)) as string);
        return;
      case 'S': {
        let seenAt: string, entryKey: string;
        [seenAt, at] = field(line, at);
        [entryKey, at] = field(line, at);
        this.seen.push({ key: JSON.parse(line.slice(at)) as string, entryKey, seenAt: Number(seenAt) });
        return;
      }
      case 'F': {
        const before = Number(line.slice(2));
        this.seen = this.seen.filter((k) => k.seenAt > before);
        return;
      }
      case 'H':
        [key, at] = field(line, at);
        this.schedules.set(JSON.parse(key) as string, line.slice(at));
        return;
      case 'U':
        this.schedules.delete(JSON.parse(line.slice(2)) as string);
        return;
      default:
        [text] = field(line, 0);
        throw new Error(`unknown record line '${text}'`);
    }
  }

  /** The entries by seq, as a load hands them over. */
  entriesBySeq(): StoredRow[] {
    return [...this.entries.values()].sort((a, b) => a.seq - b.seq);
  }

  scheduleRows(): ScheduleRow[] {
    return [...this.schedules].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, doc]) => ({ name, doc }));
  }

  /** The state as the writes that make it again: what a snapshot holds. */
  *asOps(): IterableIterator<LoggedOp> {
    for (const r of this.entriesBySeq())
      yield { type: 'put', key: r.key, seq: r.seq, state: r.state ?? 'waiting', dueAt: r.dueAt ?? 0, doc: r.doc };
    for (const [name, value] of this.meta) yield { type: 'meta', name, value };
    for (const k of this.seen) yield { type: 'seen', key: k.key, entryKey: k.entryKey, seenAt: k.seenAt };
    for (const [name, doc] of this.schedules) yield { type: 'put-schedule', name, doc };
  }
}

/**
 * Packs lines into records of at most `maxBytes` (UTF-8), a line never split: a record of a log
 * holds whole writes. A line longer than the limit goes alone (the log then refuses it).
 */
export function* packLines(lines: Iterable<string>, maxBytes: number): IterableIterator<string> {
  let parts: string[] = [];
  let size = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line) + 1;
    if (size + bytes > maxBytes && parts.length > 0) {
      yield parts.join('\n');
      parts = [];
      size = 0;
    }
    parts.push(line);
    size += bytes;
  }
  if (parts.length > 0) yield parts.join('\n');
}
