/**
 * The command line as a bundle (`make build` runs it after tsc), in two parts:
 * - dist/bin/cli.cjs: tsc's dist/bin/hivenode.js together with every hivenode module it imports
 *   statically; what it imports when needed (importModule's literal `import()`: each service kind, the
 *   NATS client, the console, the commands other than `run`) goes to chunks under dist/bin/chunks/,
 *   loaded only then. Node's ESM loader resolves, reads, compiles and links each file of a module graph
 *   on its own: the ~230 modules of a node of every service were most of its start-up (README,
 *   "Start-up: what a process loads"). Rollup rather than esbuild: esbuild makes a chunk of every set of
 *   entries sharing code (55 files for that node), rollup leaves out of a chunk what its importer has
 *   already loaded (29).
 * - dist/bin/hivenode.js, the file users run: bin/launch.ts bundled alone, which installs V8's code
 *   cache for those files and loads cli.cjs (bin/code-cache.ts).
 * The bundle is CommonJS because Node 20 compiles CommonJS from a code cache and ES modules never.
 * Packages stay outside (node_modules, required as before); the library (dist/index.js and the rest of
 * tsc's output) is untouched.
 */
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Plugin, RollupOptions } from 'rollup';
import { rollup } from 'rollup';
import { IMPORT_HOOK } from '../bin/import-hook.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = `${ROOT}dist/bin`;
const ENTRY = `${BIN}/hivenode.js`;
const LAUNCHER = `${BIN}/launch.js`;

// the input is tsc's output, which the bundle replaces: bundling the launcher would bundle nothing
if (!existsSync(ENTRY) || !existsSync(LAUNCHER) || readFileSync(ENTRY, 'utf8').includes("'./cli.cjs'")) {
  throw new Error(`${ENTRY} is not tsc's output: run tsc -p tsconfig.json first (make build does both)`);
}

const external = (id: string): boolean =>
  id.startsWith('node:') || builtinModules.includes(id) || !(id.startsWith('.') || id.startsWith('/'));
const quiet: Pick<RollupOptions, 'onLog'> = {
  onLog: (level, log, handler) => {
    // import cycles are eslint's concern (import/no-cycle, within the layers); the chunk-merging report is noise
    if (log.code === 'CIRCULAR_DEPENDENCY' || log.code === 'OPTIMIZE_CHUNK_STATUS') return;
    handler(level, log);
  },
};

/**
 * An `import()` of a module known only at run time (a module:// interceptor) calls the launcher's
 * import (bin/launch.ts: why); one of a package stays a `require` (dynamicImportInCjs: false), one of
 * hivenode's own modules becomes its chunk's.
 */
const runtimeImports: Plugin = {
  name: 'runtime-imports',
  renderDynamicImport: ({ targetModuleId }) =>
    targetModuleId === null ? { left: `globalThis[Symbol.for('${IMPORT_HOOK.description}')](`, right: ')' } : null,
};

const cli = await rollup({ input: { cli: ENTRY }, external, plugins: [runtimeImports], ...quiet });
// chunk names carry a hash: the chunks of an earlier build would otherwise pile up beside these
rmSync(`${BIN}/chunks`, { recursive: true, force: true });
await cli.write({
  dir: BIN,
  format: 'cjs',
  dynamicImportInCjs: false,
  entryFileNames: '[name].cjs',
  chunkFileNames: 'chunks/[name]-[hash].cjs',
  experimentalMinChunkSize: 20_000,
});
await cli.close();

const launcher = await rollup({ input: LAUNCHER, external, ...quiet });
await launcher.write({ file: ENTRY, format: 'es' });
await launcher.close();
// tsc's source maps describe the files the bundle replaced
for (const f of [`${ENTRY}.map`, `${LAUNCHER}.map`]) rmSync(f, { force: true });

const files = [`${BIN}/cli.cjs`, ...readdirSync(`${BIN}/chunks`).map((f) => `${BIN}/chunks/${f}`)];
const texts = files.map((f) => ({ f, text: readFileSync(f, 'utf8') }));
// a name clash between modules is resolved by renaming (`X$1`): a class's name shows in errors and logs
const renamed = texts.flatMap(({ f, text }) => [...text.matchAll(/\bclass (\w+\$\d+)/g)].map((m) => `${m[1]} in ${f}`));
if (renamed.length > 0) throw new Error(`the bundle renamed classes; give them distinct names: ${renamed.join(', ')}`);
// an import() left in the bundle would fail once its file is compiled from the code cache
const imports = texts.flatMap(({ f, text }) =>
  [...text.matchAll(/^(?!\s*(?:\*|\/\/)).*\bimport\(/gm)].map((m) => `${f}: ${m[0].trim().slice(0, 120)}`),
);
if (imports.length > 0) throw new Error(`import() left in the CommonJS bundle:\n${imports.join('\n')}`);
