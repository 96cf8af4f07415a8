/**
 * What the change-stream reliability rows share (change-stream-kill.spec.ts, change-stream-takeover.spec.ts):
 * a client committing single-row inserts into two tables (`ta` even ids, `tb` odd ones), and the
 * count of what a recorder (an echo service with RecordFile) took — the changes missing, the ones
 * recorded twice, the tables whose changes came out of commit order.
 */
import { recorded } from '../integration/queue/helpers.js';
import type { EngineHarness } from '../adapters/sql/harness.js';
import type { Figures } from './record.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Writer {
  /** The highest id committed so far (ids commit in order, one per transaction). */
  written(): number;
  /** Resolves once `count` changes are committed, or the writer was stopped. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Commits `count` inserts, one transaction every `everyMs` — single-row ones into `ta` (even ids) and
 * `tb` (odd), or `rowsPerTx` rows each, a transaction's rows into one table (in turn); a write cut by
 * a restart is tried again (a duplicate key means it had committed).
 */
export function startWriter(db: EngineHarness, count: number, everyMs: number, rowsPerTx = 1): Writer {
  let written = 0;
  let writing = true;
  let txs = 0;
  const done = (async () => {
    while (writing && written < count) {
      const last = Math.min(count, written + rowsPerTx);
      const ids = Array.from({ length: last - written }, (_, i) => written + 1 + i);
      const table = (rowsPerTx === 1 ? last : txs) % 2 === 0 ? 'ta' : 'tb';
      try {
        await db.exec(`INSERT INTO ${table} (id) VALUES ${ids.map((id) => `(${id})`).join(', ')}`);
        written = last;
        txs++;
      } catch (e) {
        if (!/duplicate/i.test(String(e))) {
          await sleep(100);
          continue;
        }
        written = last;
        txs++;
      }
      await sleep(everyMs);
    }
  })();
  return {
    written: () => written,
    done,
    async stop() {
      writing = false;
      await done.catch(() => undefined);
    },
  };
}

/** The two tables, created empty. */
export async function createTables(db: EngineHarness): Promise<void> {
  await db.exec('CREATE TABLE ta (id INT PRIMARY KEY)');
  await db.exec('CREATE TABLE tb (id INT PRIMARY KEY)');
}

/** Every change the recorder took, in the order it took them. */
export function recordedChanges(recordFile: string): Array<{ id: number; table: string }> {
  return recorded(recordFile).map((r) => ({
    id: Number(r.message.Data.id?.[0]),
    table: r.message.Control.table?.[0] ?? '',
  }));
}

/**
 * Waits (at most `boundMs`) until the recorder took every id up to `written`, or — for a build that
 * loses changes — until it took the last one and nothing more came for two seconds. The milliseconds waited.
 */
export async function awaitRecorded(recordFile: string, written: number, boundMs: number): Promise<number> {
  const began = Date.now();
  let count = -1;
  let still = Date.now();
  for (;;) {
    const seen = recordedChanges(recordFile);
    const ids = new Set(seen.map((x) => x.id));
    if (ids.size >= written || Date.now() - began > boundMs) break;
    if (seen.length !== count) {
      count = seen.length;
      still = Date.now();
    } else if (ids.has(written) && Date.now() - still > 2_000) break;
    await sleep(200);
  }
  return Date.now() - began;
}

export interface Outcome {
  missing: number[];
  twice: number;
  /** Tables whose changes' first appearances are not in commit order (ids rise with it). */
  outOfOrder: string[];
}

/** What the recorder took against the ids 1..written of `tables` (as the stream names them: public.ta, hive.ta). */
export function outcome(recordFile: string, written: number, tables: string[]): Outcome {
  const seen = recordedChanges(recordFile);
  const distinct = new Set(seen.map((x) => x.id));
  const missing = Array.from({ length: written }, (_, i) => i + 1).filter((id) => !distinct.has(id));
  const outOfOrder = tables.filter((t) => {
    const firsts: number[] = [];
    const had = new Set<number>();
    for (const x of seen) {
      if (x.table !== t || had.has(x.id)) continue;
      had.add(x.id);
      firsts.push(x.id);
    }
    return firsts.some((id, i) => i > 0 && id < firsts[i - 1]!);
  });
  return { missing, twice: seen.length - distinct.size, outOfOrder };
}

/** The outcome's figures under the row's names. */
export function outcomeFigures(figures: Figures, written: number, o: Outcome): void {
  figures['changes committed'] = written;
  figures['changes missing'] = o.missing.length;
  figures['changes recorded twice'] = o.twice;
  figures['tables out of commit order'] = o.outOfOrder.length;
}

/** The SQL service's parameters as a YAML flow map's entries. */
export function flowParams(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `${k}: "${v}"`)
    .join(', ');
}
