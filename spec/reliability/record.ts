/**
 * The battery's recorder: every reliability test writes what it did (load, faults), how it ended and
 * its measured figures as one JSON line to test-artifacts/reliability.jsonl (or
 * HIVENODE_RELIABILITY_RECORDS). scripts/reliability-report.ts turns those lines into RELIABILITY.md,
 * so the published table is always what a run measured, never typed by hand. A failing test is
 * recorded too, with its reason, before mocha reports it.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SCALE } from './scale.js';
import type { Scale } from './scale.js';
import type { Skip } from '../support/installed.js';

/** A measured figure: a count, a duration, a rate… named by its key (with its unit in the name). */
export type Figures = Record<string, number | string>;

/** One line of the records file. */
export interface ReliabilityRecord {
  /** Group of the battery (crash loops, overload, dependencies, actor faults, bad input). */
  suite: string;
  test: string;
  /** The load applied, in words with numbers. */
  load: string;
  /** The faults injected, in words with numbers. */
  faults: string;
  /** 'pass', 'FAIL: <reason>' or 'skipped: <reason>'. */
  result: string;
  figures: Figures;
  scale: Scale;
  seconds: number;
  /** ISO time the test finished. */
  time: string;
}

/** What a battery test declares before it runs. */
export interface Plan {
  suite: string;
  load: string;
  faults: string;
}

const REPO = resolve(new URL('../../', import.meta.url).pathname);
export const RECORDS_FILE =
  process.env.HIVENODE_RELIABILITY_RECORDS ?? resolve(REPO, 'test-artifacts', 'reliability.jsonl');

let started = false;

/** Appends one record; the first record of a process starts the file afresh (one run, one file). */
export function writeRecord(record: ReliabilityRecord): void {
  mkdirSync(dirname(RECORDS_FILE), { recursive: true });
  const line = `${JSON.stringify(record)}\n`;
  if (started) appendFileSync(RECORDS_FILE, line);
  else writeFileSync(RECORDS_FILE, line);
  started = true;
}

/**
 * A mocha test that records itself: `body` fills `figures` while it runs; whether it passes, throws
 * or skips, the record is written with what was measured so far.
 */
export function reliabilityTest(
  title: string,
  plan: Plan,
  timeoutMs: number,
  body: (figures: Figures, skip: Skip) => Promise<void>,
): Mocha.Test {
  return it(title, async function () {
    this.timeout(timeoutMs);
    const figures: Figures = {};
    const began = Date.now();
    let result = 'pass';
    let skipped: string | undefined;
    const skip: Skip = (reason) => {
      skipped = reason;
      return this.skip();
    };
    try {
      await body(figures, skip);
    } catch (e) {
      result = skipped !== undefined ? `skipped: ${skipped}` : `FAIL: ${(e as Error).message.split('\n')[0]}`;
      throw e;
    } finally {
      writeRecord({
        ...plan,
        test: title,
        result,
        figures,
        scale: SCALE,
        seconds: Math.round((Date.now() - began) / 100) / 10,
        time: new Date().toISOString(),
      });
    }
  });
}
