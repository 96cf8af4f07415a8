/**
 * V8's code cache for the bundled command line (scripts/bundle.ts): each CommonJS file of the bundle is
 * compiled from the cache V8 wrote for it at an earlier start, so a process skips parsing the bundle
 * and compiling the functions its start runs. Node 20 has no module compile cache of its own
 * (`module.enableCompileCache` came in Node 22), and its ES module loader takes no cached data: that is
 * why the bundle is CommonJS. Measured on a node of all six services, start to ready, 10 interleaved
 * starts each: ESM bundle 306 ms, the same bundle as CommonJS 277 ms, with this cache 233 ms (README,
 * "Start-up").
 *
 * What is cached: only files under `root` (the bundle's own), never packages, whose loading is left to
 * Node. A file's cache is named by a hash of Node's version, the architecture, the file's path and its
 * content, so a rebuilt file never meets an old cache; V8 itself refuses a cache made by another V8 or
 * with other flags (`cachedDataRejected`), and the file is then compiled as usual and its cache
 * written again.
 *
 * When it is written: `writeAfterMs` after installing (the functions the start ran are compiled by
 * then and go into the cache; a node is ready well before) and at exit for files loaded later, only for
 * files that had no cache V8 took. A start that found every cache writes nothing.
 *
 * Where: a directory only this user can write (created 0700; refused if another user owns it or others
 * can write to it: the cache is code this process runs). A cache that cannot be read, written or
 * trusted only costs the speed-up: the file is compiled as without it, and nothing is reported.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { Script } from 'node:vm';

/** Caches not written again for this long are removed when a cache is written (older builds' files). */
const STALE_MS = 14 * 24 * 3600_000;

/** What Node's CommonJS loader gives `_compile` (not in @types/node: an internal, stable since Node 0.x). */
interface CompilingModule {
  exports: unknown;
  require(id: string): unknown;
  _compile(content: string, filename: string): unknown;
}
interface ModuleInternals {
  prototype: CompilingModule;
  wrap(content: string): string;
  _resolveFilename(request: string, parent: CompilingModule, isMain: boolean, options?: { paths?: string[] }): string;
  _extensions: unknown;
  _cache: unknown;
}

export interface CodeCacheOptions {
  /** Files under this directory are compiled with the cache; any other file as Node does. */
  root: string;
  /** Where the caches are kept (made if missing). */
  dir: string;
  /** When to write the caches of the files loaded so far. */
  writeAfterMs: number;
}

/** What a process did with the cache (the tests read it). */
export interface CodeCacheStats {
  /** Files compiled with a cache V8 took. */
  accepted: number;
  /** Files compiled without one (none yet, or refused by V8). */
  compiled: number;
  /** Caches written. */
  written: number;
}

export interface CodeCache {
  readonly stats: CodeCacheStats;
  /** Writes the caches still missing now (also done after `writeAfterMs` and at exit). */
  write(): void;
  /** Puts Node's own compile back (tests); writes nothing more. */
  uninstall(): void;
}

/** A file compiled without a cache V8 took, its cache not written yet. */
interface Due {
  script: Script;
  cacheFile: string;
}

/**
 * The cache directory: HIVENODE_CODE_CACHE, or under XDG_CACHE_HOME / ~/.cache; undefined when
 * HIVENODE_CODE_CACHE is `off`.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  const set = env.HIVENODE_CODE_CACHE?.trim();
  if (set === 'off') return undefined;
  if (set) return set;
  const home = env.XDG_CACHE_HOME?.trim() || (homedir() ? join(homedir(), '.cache') : '');
  return home
    ? join(home, 'hivenode', 'code-cache')
    : join(tmpdir(), `hivenode-code-cache-${process.getuid?.() ?? 'user'}`);
}

/** The directory, made if missing, when only this user can write to it; else undefined. */
function trustedDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

function cacheName(filename: string, content: string): string {
  const hash = createHash('sha256')
    .update(`${process.version}\0${process.arch}\0${filename}\0`)
    .update(content)
    .digest('hex')
    .slice(0, 32);
  return `${filename.slice(filename.lastIndexOf(sep) + 1)}-${hash}.v8`;
}

/** Installs the cache for files under `options.root`; undefined (Node compiles as usual) when the directory cannot be trusted. */
export function installCodeCache(options: CodeCacheOptions): CodeCache | undefined {
  const dir = trustedDir(options.dir);
  if (!dir) return undefined;
  const M = Module as unknown as ModuleInternals;
  const nodeCompile = M.prototype._compile;
  const root = options.root.endsWith(sep) ? options.root : options.root + sep;
  const due: Due[] = [];
  const stats: CodeCacheStats = { accepted: 0, compiled: 0, written: 0 };
  let installed = true;

  /** What Node's `_compile` does for a CommonJS file, with the cached data added. */
  const compileWithCache = (module: CompilingModule, content: string, filename: string): unknown => {
    const cacheFile = join(dir, cacheName(filename, content));
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
    // a hashbang is valid only at a script's very start, which the wrapper takes
    const source = M.wrap(content.startsWith('#!') ? `//${content}` : content);
    const script = new Script(source, { filename, ...(cachedData ? { cachedData } : {}) });
    const taken = cachedData !== undefined && !script.cachedDataRejected;
    if (taken) stats.accepted++;
    else {
      stats.compiled++;
      due.push({ script, cacheFile });
    }
    // eslint-disable-next-line max-params -- the CommonJS module wrapper's own signature (node:module wrap)
    const wrapper = script.runInThisContext({ displayErrors: true }) as (
      this: unknown,
      exports: unknown,
      require: unknown,
      module: unknown,
      filename: string,
      dirname: string,
    ) => unknown;
    const require = Object.assign((id: string) => module.require(id), {
      resolve: (request: string, opts?: { paths?: string[] }) => M._resolveFilename(request, module, false, opts),
      main: (process as unknown as { mainModule?: unknown }).mainModule,
      extensions: M._extensions,
      cache: M._cache,
    });
    return wrapper.call(module.exports, module.exports, require, module, filename, dirname(filename));
  };
  M.prototype._compile = function compile(this: CompilingModule, content: string, filename: string): unknown {
    return installed && filename.startsWith(root)
      ? compileWithCache(this, content, filename)
      : nodeCompile.call(this, content, filename);
  };

  const write = (): void => {
    if (!installed) return;
    // taken off the list as they are written: a written file's Script is not held for nothing
    for (const l of due.splice(0)) {
      try {
        // written whole under another name, then renamed: a process starting meanwhile reads the old cache or the new, never half
        const temp = `${l.cacheFile}.${process.pid}.tmp`;
        writeFileSync(temp, l.script.createCachedData(), { mode: 0o600 });
        renameSync(temp, l.cacheFile);
        stats.written++;
      } catch {
        // a full or read-only disk costs the next start its speed-up, nothing else
      }
    }
    if (stats.written > 0) removeStale(dir);
  };
  const timer = setTimeout(write, options.writeAfterMs);
  timer.unref();
  process.on('exit', write);
  return {
    stats,
    write,
    uninstall: () => {
      clearTimeout(timer);
      process.off('exit', write);
      M.prototype._compile = nodeCompile;
      installed = false;
    },
  };
}

/** Removes caches not written for STALE_MS: those of files that no longer exist in that form. */
function removeStale(dir: string): void {
  try {
    const now = Date.now();
    for (const f of readdirSync(dir)) {
      const path = join(dir, f);
      if (now - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
    }
  } catch {
    // another process may be pruning too
  }
}
