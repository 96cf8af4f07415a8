/**
 * How a test starts the `hivenode` command line as a process of its own. From the sources through tsx
 * by default, so no build is needed (`npx mocha spec/x.spec.ts` right after an edit runs what was
 * edited); in `make test`, which has just compiled dist/ with tsc, from that JavaScript
 * (scripts/test.sh sets HIVENODE_TEST_BUILD=dist): tsx's own start and transforms cost each process
 * about a second on 2 cores, and the suites start a few hundred.
 */
import { fileURLToPath } from 'node:url';

const SOURCE_BIN = fileURLToPath(new URL('../../bin/hivenode.ts', import.meta.url));
const BUILT_BIN = fileURLToPath(new URL('../../dist/bin/hivenode.js', import.meta.url));

/** True when the tests run the compiled command line. */
export const RUNS_BUILD = process.env.HIVENODE_TEST_BUILD === 'dist';

/** Node's arguments before the command line's own: `spawn(process.execPath, [...HIVENODE_ARGS, 'run', file])`. */
export const HIVENODE_ARGS: readonly string[] = RUNS_BUILD
  ? [BUILT_BIN]
  : ['--import', import.meta.resolve('tsx'), SOURCE_BIN];

/** The same as one shell command line (for scripts that call `hivenode`). */
export const HIVENODE_COMMAND = [process.execPath, ...HIVENODE_ARGS].join(' ');
