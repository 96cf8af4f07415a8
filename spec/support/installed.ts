/**
 * What a test does when a server or tool it needs is missing: on a developer's machine it skips (the
 * rest of the suite still runs), in CI it fails — `make test` installs everything it needs
 * (scripts/test.sh), so a missing server there is a broken install, never a pass.
 */

/** Skips the running test or suite with a reason (a reliability row records it: spec/reliability/record.ts). */
export type Skip = (reason: string) => never;

/** Fails in CI, skips elsewhere, when `available` is false; `skip` is the mocha context or a recording Skip. */
export function requireInstalled(available: boolean, reason: string, skip: Mocha.Context | Skip): void {
  if (available) return;
  if (process.env.CI) throw new Error(reason);
  if (typeof skip === 'function') return skip(reason);
  console.log(`      skipped: ${reason}`);
  skip.skip();
}
