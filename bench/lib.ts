/**
 * Shared pieces of the benchmarks: closed-loop drivers, medians of interleaved rounds, and the one
 * machine-readable line every figure is reported through (scripts/bench-report.ts turns those lines
 * into the tables of BENCHMARKS.md; the human lines each bench prints stay as they were).
 */
import { readFileSync } from 'node:fs';
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
export async function interleavedSamples(
  rounds: number,
  measurements: Array<() => Promise<number>>,
): Promise<number[][]> {
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
export async function interleaved(
  rounds: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<{ a: number; b: number }> {
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
  const ratio =
    f.ratio ?? (f.baselineValue !== undefined && f.baselineValue > 0 ? f.hivenode / f.baselineValue : undefined);
  console.log(FIGURE_PREFIX + JSON.stringify({ ...f, ...(ratio === undefined ? {} : { ratio }) }));
}

/** CPU seconds a process has used so far (utime + stime from /proc, in clock ticks of 1/100 s). */
export function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds this process has used so far (every thread). */
function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** What one slice of load gives: the requests answered in it (and whatever else the caller keeps). */
export interface SliceLoad {
  requests: number;
}

/** One target of sliced rounds. */
export interface SlicedTarget<R extends SliceLoad> {
  /** Loads the target for `seconds`. */
  load(seconds: number): Promise<R>;
  /**
   * The process whose CPU the target costs; without it, this process's (a target served in this
   * process, loaded from a child such as wrk, while no other target is loaded).
   */
  pid?: number;
  /** Runs before each of the target's slices, not counted (a page shown or hidden, say). */
  prepare?(): Promise<void>;
}

export interface SlicedOptions {
  rounds: number;
  /** Slices a round: in each, every target is loaded once, for sliceSeconds. */
  slices: number;
  sliceSeconds: number;
  /** Slices run first and not counted (V8 compiling the hot paths, pools filling). */
  warmupSlices?: number;
}

export interface Sliced<R> {
  /** Every counted slice's result, per target (in the order given), in the order run. */
  slices: R[][];
  /** Per target, per round: requests a second over the round's slices. */
  rps: number[][];
  /** Per target, per round: microseconds of its process's CPU per request answered over the round's slices. */
  cpuPerRequest: number[][];
}

/**
 * Rounds of sliced interleaving: a round is `slices` slices of `sliceSeconds`, and in every slice
 * each target is loaded once, in an order that turns from slice to slice (so no target always runs
 * right after the same other one); a target's figure for the round is summed over its slices. The
 * two sides of a ratio so take turns every second and meet the same load, where one run of 4 s per
 * target a round let the machine's other work fall on one side more than the other: two identical
 * processes spread with a standard deviation of 0.067 a round on a quiet machine and 0.073 under a
 * synthetic load with one run each a round, 0.009 and 0.015 with the slices (the tracing bench,
 * bench/gateway-tracing.ts, 8 rounds each). Read ratios as pairedRatio of the rounds' figures.
 */
export async function slicedRounds<R extends SliceLoad>(
  targets: Array<SlicedTarget<R>>,
  o: SlicedOptions,
): Promise<Sliced<R>> {
  const cpuOf = (t: SlicedTarget<R>): number => (t.pid === undefined ? ownCpuSeconds() : cpuSecondsOf(t.pid));
  const slice = async (first: number, seen?: (k: number, r: R, cpu: number) => void): Promise<void> => {
    for (let j = 0; j < targets.length; j++) {
      const k = (first + j) % targets.length;
      const t = targets[k]!;
      await t.prepare?.();
      const before = cpuOf(t);
      const r = await t.load(o.sliceSeconds);
      seen?.(k, r, cpuOf(t) - before);
    }
  };
  for (let i = 0; i < (o.warmupSlices ?? 0); i++) await slice(i);
  const out: Sliced<R> = {
    slices: targets.map(() => []),
    rps: targets.map(() => []),
    cpuPerRequest: targets.map(() => []),
  };
  for (let round = 0; round < o.rounds; round++) {
    const sums = targets.map(() => ({ cpu: 0, requests: 0 }));
    for (let s = 0; s < o.slices; s++) {
      await slice(round * o.slices + s, (k, r, cpu) => {
        out.slices[k]!.push(r);
        sums[k]!.cpu += cpu;
        sums[k]!.requests += r.requests;
      });
    }
    for (const [k, sum] of sums.entries()) {
      out.rps[k]!.push(sum.requests / (o.slices * o.sliceSeconds));
      out.cpuPerRequest[k]!.push(sum.requests > 0 ? (sum.cpu * 1e6) / sum.requests : NaN);
    }
  }
  return out;
}
