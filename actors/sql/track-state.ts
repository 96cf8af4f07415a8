/**
 * The poller's memory of the last SQL_TRACKCOLUMN value it emitted, kept in SQL_STATEFILE so a
 * restart continues where it stopped instead of emitting every row again. The value keeps its type
 * (a number compares as a number, a date binds as a date), and the file names the column, so a
 * changed configuration starts afresh rather than comparing against another column's value.
 * Written to a temporary file and renamed over the old one: a crash leaves the old or the new state.
 * On a NATS hive the value lives in a bucket shared by the pollers of one NAME instead (shared-mark.ts).
 */
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { describeError } from '../../protocol/errors.js';

export type TrackValue = string | number | Date;

/** A value as stored: its type kept, so a number compares as a number and a date binds as a date. */
interface StoredValue {
  type: 'number' | 'string' | 'date';
  value: string | number;
}

interface Stored extends Partial<StoredValue> {
  column: string;
  /** The end of a batch claimed before its emit and not yet recorded as delivered. */
  pending?: StoredValue;
  savedAt: string;
}

/** What a poller remembers: the last value emitted and recorded, and a batch emitted up to `pending` whose delivery is not recorded yet. */
export interface Mark {
  last?: TrackValue;
  pending?: TrackValue;
}

/** A column value as the tracker remembers it; undefined for NULL and values it cannot order. */
export function trackValue(v: unknown): TrackValue | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (typeof v === 'string') return v;
  if (v instanceof Date && !Number.isNaN(v.getTime())) return v;
  return undefined;
}

/** A tracked value as text: a date in ISO 8601. */
export function describeTrack(value: TrackValue): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/** Whether two tracked values are the same value (dates by their time). Equality only: the database's collation decides order. */
export function sameTrack(a: TrackValue | undefined, b: TrackValue | undefined): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return a !== undefined && a === b;
}

/**
 * What the poller remembers of the last value it emitted: here a file, on a NATS hive a shared
 * bucket (shared-mark.ts). A batch is claimed (its last value written as `pending`) before it is
 * emitted and saved once a listener took it, so whoever polls next knows which rows may have gone
 * out without being recorded, and sends exactly those again under the same idempotency key.
 */
export interface TrackMemory {
  readonly last: TrackValue | undefined;
  readonly pending: TrackValue | undefined;
  /** Reads the value again where several pollers share it (before each poll); absent where one poller owns it. */
  refresh?(): Promise<void>;
  /** Records that a batch ending at `value` is about to be emitted (the last value unchanged). */
  claim(value: TrackValue): Promise<void>;
  /** Records `value` as the last one delivered (no batch pending). */
  save(value: TrackValue): Promise<void>;
}

function storedValue(value: TrackValue): StoredValue {
  return {
    type: value instanceof Date ? 'date' : typeof value === 'number' ? 'number' : 'string',
    value: value instanceof Date ? value.toISOString() : value,
  };
}

/** The value of a stored one; undefined when absent, null when of no usable type. */
function loadedValue(s: Partial<StoredValue> | undefined): TrackValue | undefined | null {
  if (s?.type === undefined && s?.value === undefined) return undefined;
  if (s.type === 'number' && typeof s.value === 'number') return s.value;
  if (s.type === 'date' && typeof s.value === 'string' && !Number.isNaN(Date.parse(s.value))) return new Date(s.value);
  if (s.type === 'string' && typeof s.value === 'string') return s.value;
  return null;
}

/** The stored text of a mark of `column` (the file's and the shared bucket's format). */
export function encodeTrack(column: string, mark: Mark): string {
  const stored: Stored = {
    column,
    ...(mark.last !== undefined ? storedValue(mark.last) : {}),
    ...(mark.pending !== undefined ? { pending: storedValue(mark.pending) } : {}),
    savedAt: new Date().toISOString(),
  };
  return JSON.stringify(stored);
}

/**
 * The mark stored in `text` for `column`, or a note saying why it was ignored (`where` names the
 * file or bucket in it): a value of another column, of no usable type, or text that is not JSON.
 */
export function decodeTrack(text: string, column: string, where: string): { mark: Mark } | { note: string } {
  try {
    const s = JSON.parse(text) as Partial<Stored>;
    if (s.column !== column)
      return { note: `${where} tracks column '${String(s.column)}', not '${column}'; starting from the beginning` };
    const last = loadedValue(s);
    const pending = loadedValue(s.pending);
    if (last === null || pending === null || (last === undefined && pending === undefined))
      return { note: `${where} holds no usable value; starting from the beginning` };
    return { mark: { ...(last !== undefined ? { last } : {}), ...(pending !== undefined ? { pending } : {}) } };
  } catch {
    return { note: `${where} is not JSON; starting from the beginning` };
  }
}

/**
 * A TrackMemory over one stored mark: claim and save make the next mark, `write` keeps it where the
 * memory keeps it (a file, a shared bucket).
 */
export abstract class MarkMemory implements TrackMemory {
  protected mark: Mark;

  constructor(mark: Mark) {
    this.mark = mark;
  }

  get last(): TrackValue | undefined {
    return this.mark.last;
  }

  get pending(): TrackValue | undefined {
    return this.mark.pending;
  }

  claim(value: TrackValue): Promise<void> {
    return this.write({ ...(this.mark.last !== undefined ? { last: this.mark.last } : {}), pending: value });
  }

  save(value: TrackValue): Promise<void> {
    return this.write({ last: value });
  }

  /** Keeps `mark` and makes it the current one. */
  protected abstract write(mark: Mark): Promise<void>;
}

export class TrackState extends MarkMemory {
  /** `file` '' keeps the mark in memory only. */
  constructor(
    private readonly file: string,
    private readonly column: string,
  ) {
    super({});
  }

  /** Reads the file; returns a note for the log when it was ignored (missing is normal). */
  load(): string | undefined {
    if (this.file === '') return undefined;
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return `state file ${this.file} cannot be read (${describeError(e)}); starting from the beginning`;
    }
    const decoded = decodeTrack(text, this.column, `state file ${this.file}`);
    if ('note' in decoded) return decoded.note;
    this.mark = decoded.mark;
    return undefined;
  }

  /** The mark as loaded or last written. */
  current(): Mark {
    return this.mark;
  }

  protected async write(mark: Mark): Promise<void> {
    this.mark = mark;
    if (this.file === '') return;
    const tmp = `${this.file}.tmp`;
    await writeFile(tmp, `${encodeTrack(this.column, mark)}\n`);
    await rename(tmp, this.file);
  }
}
