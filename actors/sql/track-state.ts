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

interface Stored {
  column: string;
  type: 'number' | 'string' | 'date';
  value: string | number;
  savedAt: string;
}

/** A column value as the tracker remembers it; undefined for NULL and values it cannot order. */
export function trackValue(v: unknown): TrackValue | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (typeof v === 'string') return v;
  if (v instanceof Date && !Number.isNaN(v.getTime())) return v;
  return undefined;
}

/** What the poller remembers of the last value it emitted: here a file, on a NATS hive a shared bucket (shared-mark.ts). */
export interface TrackMemory {
  readonly last: TrackValue | undefined;
  /** Reads the value again where several pollers share it (before each poll); absent where one poller owns it. */
  refresh?(): Promise<void>;
  save(value: TrackValue): Promise<void>;
}

/** The stored text of a value of `column` (the file's and the shared bucket's format). */
export function encodeTrack(column: string, value: TrackValue): string {
  const stored: Stored = {
    column,
    type: value instanceof Date ? 'date' : typeof value === 'number' ? 'number' : 'string',
    value: value instanceof Date ? value.toISOString() : value,
    savedAt: new Date().toISOString(),
  };
  return JSON.stringify(stored);
}

/**
 * The value stored in `text` for `column`, or a note saying why it was ignored (`where` names the
 * file or bucket in it): a value of another column, of no usable type, or text that is not JSON.
 */
export function decodeTrack(text: string, column: string, where: string): { value: TrackValue } | { note: string } {
  try {
    const s = JSON.parse(text) as Partial<Stored>;
    if (s.column !== column) return { note: `${where} tracks column '${String(s.column)}', not '${column}'; starting from the beginning` };
    if (s.type === 'number' && typeof s.value === 'number') return { value: s.value };
    if (s.type === 'date' && typeof s.value === 'string' && !Number.isNaN(Date.parse(s.value))) return { value: new Date(s.value) };
    if (s.type === 'string' && typeof s.value === 'string') return { value: s.value };
    return { note: `${where} holds no usable value; starting from the beginning` };
  } catch {
    return { note: `${where} is not JSON; starting from the beginning` };
  }
}

export class TrackState implements TrackMemory {
  private value: TrackValue | undefined;

  /** `file` '' keeps the value in memory only. */
  constructor(
    private readonly file: string,
    private readonly column: string,
  ) {}

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
    this.value = decoded.value;
    return undefined;
  }

  get last(): TrackValue | undefined {
    return this.value;
  }

  async save(value: TrackValue): Promise<void> {
    this.value = value;
    if (this.file === '') return;
    const tmp = `${this.file}.tmp`;
    await writeFile(tmp, `${encodeTrack(this.column, value)}\n`);
    await rename(tmp, this.file);
  }
}
