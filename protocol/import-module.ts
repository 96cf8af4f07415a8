/**
 * A module of this package imported when first needed (a service kind's actors and drivers, the NATS
 * client, the dashboard), so a process loads only what it runs.
 *
 * `import()` is right for the compiled package (ESM). Under a CommonJS loader — the test runner's
 * TypeScript hook loads the specs and everything they import that way — `import()` would load a
 * second, ESM copy of the module and of every module it imports, with their own symbols and classes
 * (a message's undelivered hook, `instanceof` of the typed errors): there the module is required, so
 * it is the one copy the rest of the process already shares.
 */
import { createRequire } from 'node:module';

/** `specifier` relative to `from`, the importing file's `import.meta.url`, as an `import` statement there would name it. */
export async function importModule<T>(from: string, specifier: string): Promise<T> {
  if (typeof require === 'function') return createRequire(from)(specifier) as T;
  return (await import(new URL(specifier, from).href)) as T;
}
