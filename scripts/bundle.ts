/**
 * The command line as a bundle (`make build` runs it after tsc): dist/bin/hivenode.js, the file users
 * run, becomes tsc's dist/bin/hivenode.js together with every hivenode module it imports statically;
 * what it imports when needed (importModule's literal `import()`: each service kind, the NATS client,
 * the console, the commands other than `run`) goes to chunks under dist/bin/chunks/, loaded only then.
 * Node's ESM loader resolves, reads, compiles and links each file of a module graph on its own: the
 * ~230 modules of a node of every service were most of its start-up (README, "Start-up: what a
 * process loads"). Rollup rather than esbuild: esbuild makes a chunk of every set of entries sharing
 * code (55 files for that node), rollup leaves out of a chunk what its importer has already loaded
 * (29). Packages stay outside (node_modules, loaded as before); the library (dist/index.js and the
 * rest of tsc's output) is untouched.
 */
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { rollup } from 'rollup';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = `${ROOT}dist/bin`;
const ENTRY = `${BIN}/hivenode.js`;

// the input is tsc's output, which the bundle replaces: bundling a bundle would leave its old chunks' names in it
if (!existsSync(ENTRY) || readFileSync(ENTRY, 'utf8').includes("'./chunks/")) {
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
await bundle.write({ dir: BIN, format: 'es', entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js', experimentalMinChunkSize: 20_000 });
await bundle.close();
// tsc's source map of the entry describes the file the bundle replaced
rmSync(`${ENTRY}.map`, { force: true });

// a name clash between modules is resolved by renaming (`X$1`): a class's name shows in errors and logs
const renamed = [ENTRY, ...readdirSync(`${BIN}/chunks`).map((f) => `${BIN}/chunks/${f}`)].flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\bclass (\w+\$\d+)/g)].map((m) => `${m[1]} in ${f}`));
if (renamed.length > 0) throw new Error(`the bundle renamed classes; give them distinct names: ${renamed.join(', ')}`);
