/**
 * Closed-loop load for the battery: a fixed number of workers, each sending its next request as soon
 * as the previous one is answered, every answer kept as a timed sample. One helper serves the actor
 * fault, PostgreSQL and NATS tests, so they count outcomes the same way.
 */

/** One answered request: when it was sent and answered (ms since the load began) and its code. */
export interface Sample {
  sentMs: number;
  atMs: number;
  code: number;
}

/** Sends one request (`i` counts from 0) and resolves with the answer's code. */
export type Send = (i: number) => Promise<number>;

/** Runs `workers` loops until `total` requests were sent (when given) or `stop()` is true. */
export async function closedLoop(
  opts: { workers: number; total?: number; stop?: () => boolean },
  send: Send,
): Promise<Sample[]> {
  const began = Date.now();
  const samples: Sample[] = [];
  let next = 0;
  const more = (): boolean => (opts.total === undefined || next < opts.total) && !(opts.stop?.() ?? false);
  await Promise.all(
    Array.from({ length: opts.workers }, async () => {
      while (more()) {
        const sentMs = Date.now() - began;
        const code = await send(next++);
        samples.push({ sentMs, atMs: Date.now() - began, code });
      }
    }),
  );
  return samples;
}

/** The samples sent in the last `ms` of the load (a late timeout answer belongs to when it was sent). */
export function lastSent(samples: readonly Sample[], ms: number): Sample[] {
  const end = samples.reduce((max, s) => Math.max(max, s.sentMs), 0);
  return samples.filter((s) => s.sentMs >= end - ms);
}

/** Counts samples per code, for example `{ '200': 980, '502': 20 }`. */
export function countCodes(samples: readonly Sample[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of samples) counts[String(s.code)] = (counts[String(s.code)] ?? 0) + 1;
  return counts;
}

/** Codes as one figure string, for example `200×980 502×20`. */
export function describeCodes(samples: readonly Sample[]): string {
  return Object.entries(countCodes(samples))
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
}
