/** Shared pieces of the benchmarks: closed-loop drivers and medians of interleaved rounds. */

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

/** Rounds of A and B alternated (so drift in the machine hits both alike); medians of each. */
export async function interleaved(rounds: number, a: () => Promise<number>, b: () => Promise<number>): Promise<{ a: number; b: number }> {
  const ra: number[] = [];
  const rb: number[] = [];
  for (let i = 0; i < rounds; i++) {
    ra.push(await a());
    rb.push(await b());
  }
  return { a: median(ra), b: median(rb) };
}

export const fmt = (n: number): string => Math.round(n).toLocaleString('en');
