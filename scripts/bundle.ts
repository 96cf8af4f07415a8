/**
 * The command line as a bundle (`make build` runs it after tsc): tsc's dist/bin/hivenode.js together
 * with every hivenode module it imports statically becomes dist/bin/hivenode.cjs; what it imports
 * when needed (importModule's literal `import()`: each service kind, the NATS client, the console, the
 * commands other than `run`) goes to chunks under dist/bin/chunks/, loaded only then.
 * dist/bin/hivenode.js, the file users run, is left a two-line ES module that requires hivenode.cjs.
 * Node's ESM loader resolves, reads, compiles and links each file of a module graph on its own: the
 * ~230 modules of a node of every service were most of its start-up (README, "Start-up: what a
 * process loads"). Rollup rather than esbuild: esbuild makes a chunk of every set of entries sharing
 * code (55 files for that node), rollup leaves out of a chunk what its importer has already loaded
 * (29). CommonJS rather than ES modules: the 29 files still cost the ESM loader a URL-based
 * resolution of each of their ~370 imports (`node:` modules included), a package-scope lookup per
 * file and an ES-module facade per built-in (node:tls computes its root certificates for it), 20-60 ms
 * of the 270-370 ms of CPU to ready measured here; `require` of the same files skips all of that.
 * Packages stay outside (node_modules, loaded as before: `import()` stays `import()`, a static import
 * of a package becomes its `require`, with Node's own interop: the default import is
 * `module.exports`); the library (dist/index.js and the rest of tsc's output) is untouched.
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { rollup } from 'rollup';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = `${ROOT}dist/bin`;
const ENTRY = `${BIN}/hivenode.js`;
const BUNDLE = `${BIN}/hivenode.cjs`;
/** What users run: the bundle, required (a `.js` file of this package is an ES module). */
const LAUNCHER = `#!/usr/bin/env node
// the command line, bundled as CommonJS by scripts/bundle.ts (README, "Start-up: what a process loads")
import { createRequire } from 'node:module';
createRequire(import.meta.url)('./hivenode.cjs');
`;

// the input is tsc's output, which the bundle replaces: bundling the launcher would bundle nothing
if (!existsSync(ENTRY) || readFileSync(ENTRY, 'utf8').includes('./hivenode.cjs')) {
  throw new Error(`${ENTRY} is not tsc's output: run tsc -p tsconfig.json first (make build does both)`);
}
const bundle = await rollup({
  input: { hivenode: ENTRY },
  // packages and node's own modules are imported from where they are, as tsc's output imports them
  external: (id) => id.startsWith('node:') || builtinModules.includes(id) || !(id.startsWith('.') || id.startsWith('/')),
  onLog: (level, log, handler) => {
    // import cycles are eslint's concern (import/no-cycle, within the layers); the chunk-merging report is noise
    if (log.code === 'CIRCULAR_DEPENDENCY' || log.code === 'OPTIMIZE_CHUNK_STATUS') return;
    handler(level, log);
  },
});
// chunk names carry a hash: the chunks of an earlier build would otherwise pile up beside these
rmSync(`${BIN}/chunks`, { recursive: true, force: true });
// interop 'default': `import x from 'package'` is the package's module.exports, as Node's ESM loader has it
await bundle.write({ dir: BIN, format: 'cjs', interop: 'default', entryFileNames: '[name].cjs', chunkFileNames: 'chunks/[name]-[hash].cjs', experimentalMinChunkSize: 20_000 });
await bundle.close();
writeFileSync(ENTRY, LAUNCHER);
// tsc's source map of the entry describes the file the bundle replaced
rmSync(`${ENTRY}.map`, { force: true });

// a name clash between modules is resolved by renaming (`X$1`): a class's name shows in errors and logs
const renamed = [BUNDLE, ...readdirSync(`${BIN}/chunks`).map((f) => `${BIN}/chunks/${f}`)].flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\bclass (\w+\$\d+)/g)].map((m) => `${m[1]} in ${f}`));
if (renamed.length > 0) throw new Error(`the bundle renamed classes; give them distinct names: ${renamed.join(', ')}`);
