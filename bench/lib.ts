/**
 * Shared pieces of the benchmarks: closed-loop drivers, medians of interleaved rounds, and the one
 * machine-readable line every figure is reported through (scripts/bench-report.ts turns those lines
 * into the tables of BENCHMARKS.md; the human lines each bench prints stay as they were).
 */
import { PACKAGE_ROOT } from '../bin/package-info.js';

/**
 * The repository root, whether a bench runs from bench/ under tsx or compiled from dist/bench/ (as
 * `make bench` runs them: the compiled code is what `hivenode` runs, and tsx's transform measured
 * 15-30% slower on the hot paths). Files beside the sources are found from here.
 */
export const REPO = PACKAGE_ROOT;

/** Runs `total` operations with `concurrency` outstanding at a time; returns operations per second. */
export async function drive(total: number, concurrency: number, op: () => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await op();
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/**
 * Rounds of every measurement alternated (so drift in a shared machine hits all of them alike);
 * returns the median of each, in the order given.
 */
export async function interleavedAll(rounds: number, measurements: Array<() => Promise<number>>): Promise<number[]> {
  return (await interleavedSamples(rounds, measurements)).map(median);
}

/** As interleavedAll, every round's value of each measurement (samples[k][round]). */
export async function interleavedSamples(rounds: number, measurements: Array<() => Promise<number>>): Promise<number[][]> {
  const samples = measurements.map(() => [] as number[]);
  for (let i = 0; i < rounds; i++) {
    for (const [k, measure] of measurements.entries()) samples[k]!.push(await measure());
  }
  return samples;
}

/**
 * The median of the rounds' own ratios a[i] / b[i]: each round's pair ran back to back, so a burst of
 * load on a shared machine falls on both sides of one ratio, where the ratio of the two medians can
 * take its numerator and denominator from rounds under different load.
 */
export function pairedRatio(a: number[], b: number[]): number {
  return median(a.map((x, i) => x / b[i]!));
}

/** Rounds of A and B alternated; medians of each. */
export async function interleaved(rounds: number, a: () => Promise<number>, b: () => Promise<number>): Promise<{ a: number; b: number }> {
  const [ma, mb] = await interleavedAll(rounds, [a, b]);
  return { a: ma!, b: mb! };
}

export const fmt = (n: number): string => Math.round(n).toLocaleString('en');

/** Resident set size of this process in MiB, after a collection when --expose-gc is given. */
export function rssMiB(): number {
  globalThis.gc?.();
  return process.memoryUsage().rss / 1048576;
}

/** One figure of BENCHMARKS.md: hivenode's value, and the named baseline or peer it is compared with. */
export interface Figure {
  /** What was measured, e.g. 'gateway strict → hive → echo, 32 connections'. */
  figure: string;
  hivenode: number;
  unit: string;
  /** The baseline or peer, named: 'raw node:http', 'Node-RED 4.1 (http in → function → http response)'. */
  baseline?: string;
  baselineValue?: number;
  /** The baseline is a peer product users choose between (Node-RED, BullMQ, got), not a raw building block. */
  peer?: boolean;
  /** The stated target, e.g. '≥ 0.6' (of the ratio) or '≤ 5 ms' (of hivenode's value). */
  target?: string;
  /** The ratio when it is not hivenode / baselineValue: the median of paired rounds' ratios (pairedRatio). */
  ratio?: number;
  /** Whether the target was met in this run. */
  met?: boolean;
  /** Times, latencies and memory: smaller is better, so a ratio below 1 favours hivenode. */
  lowerIsBetter?: boolean;
}

/** The prefix scripts/bench-report.ts looks for. */
export const FIGURE_PREFIX = 'BENCH ';

/** Prints one figure as a machine-readable line; the ratio is hivenode / baseline. */
export function report(f: Figure): void {
  const ratio = f.ratio ?? (f.baselineValue !== undefined && f.baselineValue > 0 ? f.hivenode / f.baselineValue : undefined);
  console.log(FIGURE_PREFIX + JSON.stringify({ ...f, ...(ratio === undefined ? {} : { ratio }) }));
}
