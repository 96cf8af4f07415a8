/**
 * The tests' two ways to wait, written once: `sleep` for a pause that is itself what a test exercises
 * (a window of time that must pass), `until` for everything else — a condition polled until it holds,
 * so a test waits as long as the machine needs and no longer (a fixed sleep is either too short on a
 * loaded machine or wasted time on a quiet one).
 */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How long `until` waits, how often it looks, and what its timeout error names. */
export interface UntilOptions {
  /** The longest wait (default 5,000 ms). */
  readonly ms?: number;
  /** The pause between two looks (default 5 ms: a check is cheap; pass more for one that is not). */
  readonly every?: number;
  /** What is awaited, for the error: "timed out after 5000 ms waiting for <what>" (a function is asked at the timeout, to tell what was seen). */
  readonly what?: string | (() => string);
}

/**
 * Waits until `check` holds, looking every `every` ms; throws when `ms` pass first. A check that reads
 * asynchronously is awaited (a Promise is never taken for true). A number for `options` is the `ms`.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  options: number | UntilOptions = {},
): Promise<void> {
  const { ms = 5_000, every = 5, what = 'the condition' } = typeof options === 'number' ? { ms: options } : options;
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end)
      throw new Error(`timed out after ${ms} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await sleep(every);
  }
}
