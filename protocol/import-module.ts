/**
 * A module of this package imported when first needed (a service kind's actors and drivers, the NATS
 * client, the dashboard), so a process loads only what it runs.
 *
 * Each call site names its module twice: as `load`, a literal `import()` — what the compiled package
 * runs, and what lets the build's bundler (scripts/bundle.ts) see the module and put it in a chunk of
 * its own, loaded only then — and as `specifier`, for a CommonJS loader. The test runner's TypeScript
 * hook loads the specs and everything they import that way, and there `import()` would load a second,
 * ESM copy of the module and of every module it imports, with their own symbols and classes (a
 * message's undelivered hook, `instanceof` of the typed errors): there the module is required, so it
 * is the one copy the rest of the process already shares. spec/unit/house/import-module.spec.ts holds
 * every call site's two names to the same module.
 */
import { createRequire } from 'node:module';

/**
 * `load` (`() => import(specifier)`) in ESM and in the bundle (scripts/bundle.ts: CommonJS, where `load`
 * requires the module's chunk); under the test hook (CommonJS, the caller a .ts file) `specifier`,
 * relative to `from` (the caller's `import.meta.url`), required.
 */
export async function importModule<T>(from: string, specifier: string, load: () => Promise<T>): Promise<T> {
  if (typeof require === 'function' && from.endsWith('.ts')) return createRequire(from)(specifier) as T;
  return load();
}
