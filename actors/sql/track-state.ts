/**
 * The poller's memory of the last SQL_TRACKCOLUMN value it emitted, kept in SQL_STATEFILE so a
 * restart continues where it stopped instead of emitting every row again. The value keeps its type
 * (a number compares as a number, a date binds as a date), and the file names the column, so a
 * changed configuration starts afresh rather than comparing against another column's value.
 * Written to a temporary file and renamed over the old one: a crash leaves the old or the new state.
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

export class TrackState {
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
    try {
      const s = JSON.parse(text) as Partial<Stored>;
      if (s.column !== this.column) return `state file ${this.file} tracks column '${String(s.column)}', not '${this.column}'; starting from the beginning`;
      if (s.type === 'number' && typeof s.value === 'number') this.value = s.value;
      else if (s.type === 'date' && typeof s.value === 'string' && !Number.isNaN(Date.parse(s.value))) this.value = new Date(s.value);
      else if (s.type === 'string' && typeof s.value === 'string') this.value = s.value;
      else return `state file ${this.file} holds no usable value; starting from the beginning`;
      return undefined;
    } catch {
      return `state file ${this.file} is not JSON; starting from the beginning`;
    }
  }

  get last(): TrackValue | undefined {
    return this.value;
  }

  async save(value: TrackValue): Promise<void> {
    this.value = value;
    if (this.file === '') return;
    const stored: Stored = {
      column: this.column,
      type: value instanceof Date ? 'date' : typeof value === 'number' ? 'number' : 'string',
      value: value instanceof Date ? value.toISOString() : value,
      savedAt: new Date().toISOString(),
    };
    const tmp = `${this.file}.tmp`;
    await writeFile(tmp, `${JSON.stringify(stored)}\n`);
    await rename(tmp, this.file);
  }
}
