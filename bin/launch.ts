#!/usr/bin/env node
/**
 * What `hivenode` runs once the command line is bundled: scripts/bundle.ts makes this file, bundled
 * alone, the package's dist/bin/hivenode.js, and the command line itself dist/bin/cli.cjs with its
 * chunks. It installs V8's code cache for the bundle's files (code-cache.ts: why, and where it is
 * kept; HIVENODE_CODE_CACHE=off goes without), then loads the command line.
 *
 * The one `import()` of the command line whose module is not known when bundling — a module://
 * interceptor, a user's ES module — is made here (IMPORT_HOOK): a function compiled from a code cache
 * has no way to import an ES module in Node 20 ("A dynamic import callback was not specified").
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';
import { codeCacheDir, installCodeCache } from './code-cache.js';
import { IMPORT_HOOK } from './import-hook.js';

/** Late enough that a node's start has run (ready in ~0.3 s), early enough to be written by most runs. */
const WRITE_CACHE_AFTER_MS = 2_000;

(globalThis as Record<symbol, unknown>)[IMPORT_HOOK] = (specifier: string): Promise<unknown> => import(specifier);
const here = dirname(fileURLToPath(import.meta.url));
const dir = codeCacheDir(process.env);
if (dir) installCodeCache({ root: here, dir, writeAfterMs: WRITE_CACHE_AFTER_MS });
createRequire(import.meta.url)('./cli.cjs');
