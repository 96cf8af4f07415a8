/**
 * The global through which the bundled command line imports an ES module it cannot name when bundling
 * (launch.ts sets it; scripts/bundle.ts writes each such `import(x)` as a call of it). A registered
 * symbol, so the bundle and the launcher agree on it without sharing a module.
 */
export const IMPORT_HOOK = Symbol.for('hivenode.import');
