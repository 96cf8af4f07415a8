/**
 * How hard the reliability battery pushes: scaled down inside `make test` (the whole battery in a few
 * minutes on 2 shared cores), in full with HIVENODE_CHAOS=full (`make chaos`). Every battery spec
 * takes its sizes from here, so the two runs are the same code with other numbers.
 */
export const Scale = { Scaled: 'scaled', Full: 'full' } as const;
export type Scale = (typeof Scale)[keyof typeof Scale];

/** The scale of this run. */
export const SCALE: Scale = process.env.HIVENODE_CHAOS === Scale.Full ? Scale.Full : Scale.Scaled;

/** Picks the number (or any value) for this run's scale. */
export function byScale<T>(scaled: T, full: T): T {
  return SCALE === Scale.Full ? full : scaled;
}

/**
 * `describe` for a whole-system row that runs in `make chaos` only (pending in `make test`): kept out
 * of `make test` for its length, where a spec at the adapter level holds the same mechanism.
 */
export const chaosOnly: Mocha.SuiteFunction | Mocha.PendingSuiteFunction =
  SCALE === Scale.Full ? describe : describe.skip;
