/**
 * The bundle's code cache (bin/code-cache.ts) on real CommonJS files required in this process: what it
 * writes, that V8 takes it the next time, and where it declines to work (an untrusted directory, a
 * cache V8 refuses). The bundled command line's own use of it is checked on the installed package
 * (spec/package/install.spec.ts).
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CodeCache, CodeCacheStats } from '../../../bin/code-cache.js';
import { codeCacheDir, installCodeCache } from '../../../bin/code-cache.js';
import { tempDir } from '../../temp.js';

const require = createRequire(import.meta.url);
const CODE_CACHE = fileURLToPath(new URL('../../../bin/code-cache.ts', import.meta.url));

/**
 * A process of its own installs the cache, requires a.cjs and writes what is due: within one process
 * V8 finds a script it compiled before in its own compilation cache, and never reads the cached data.
 */
function inChild(root: string, dir: string): { stats: CodeCacheStats; result: number } {
  const script = `import { installCodeCache } from ${JSON.stringify(CODE_CACHE)};
import { createRequire } from 'node:module';
const cache = installCodeCache({ root: ${JSON.stringify(root)}, dir: ${JSON.stringify(dir)}, writeAfterMs: 60_000 });
const result = createRequire(import.meta.url)(${JSON.stringify(join(root, 'a.cjs'))}).twice(21);
cache.write();
console.log(JSON.stringify({ stats: cache.stats, result }));
cache.uninstall();`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the child failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { stats: CodeCacheStats; result: number };
}

/** Requires `file` afresh (out of require's cache) and returns its exports. */
function load(file: string): unknown {
  delete require.cache[file];
  return require(file);
}

describe('code cache of the bundled command line', () => {
  let root: string;
  let dir: string;
  let cache: CodeCache | undefined;

  beforeEach(() => {
    const base = tempDir('hn-code-cache-');
    root = join(base, 'bundle');
    dir = join(base, 'cache');
    mkdirSync(root);
    writeFileSync(
      join(root, 'a.cjs'),
      '#!/usr/bin/env node\nexports.twice = (n) => n * 2;\nexports.dir = __dirname;\n',
    );
  });
  afterEach(() => cache?.uninstall());

  it('compiles a file under its root, writes its cache once asked, and the next load takes it', () => {
    cache = installCodeCache({ root, dir, writeAfterMs: 60_000 })!;
    const a = load(join(root, 'a.cjs')) as { twice(n: number): number; dir: string };
    expect(a.twice(21)).to.equal(42);
    expect(a.dir).to.equal(root);
    expect(cache.stats).to.deep.equal({ accepted: 0, compiled: 1, written: 0 });
    cache.write();
    expect(cache.stats.written).to.equal(1);
    const files = readdirSync(dir);
    expect(files).to.have.length(1);
    expect(files[0]).to.match(/^a\.cjs-[0-9a-f]{32}\.v8$/);
    expect(statSync(join(dir, files[0]!)).mode & 0o777).to.equal(0o600);
    expect(statSync(dir).mode & 0o777).to.equal(0o700);

    expect((load(join(root, 'a.cjs')) as { twice(n: number): number }).twice(5)).to.equal(10);
    expect(cache.stats.accepted).to.equal(1);
    // taken: nothing is due, nothing is written again
    cache.write();
    expect(cache.stats.written).to.equal(1);
  });

  it('a changed file gets a cache of its own; files outside the root are left to Node', () => {
    const outside = join(root, '..', 'b.cjs');
    writeFileSync(outside, 'exports.b = 1;\n');
    cache = installCodeCache({ root, dir, writeAfterMs: 60_000 })!;
    load(join(root, 'a.cjs'));
    expect((load(outside) as { b: number }).b).to.equal(1);
    cache.write();
    writeFileSync(join(root, 'a.cjs'), 'exports.twice = (n) => n * 3;\n');
    expect((load(join(root, 'a.cjs')) as { twice(n: number): number }).twice(2)).to.equal(6);
    expect(cache.stats).to.include({ accepted: 0, compiled: 2 });
    cache.write();
    expect(readdirSync(dir).filter((f) => f.startsWith('a.cjs-'))).to.have.length(2);
    expect(readdirSync(dir).filter((f) => f.startsWith('b.cjs-'))).to.deep.equal([]);
  });

  it('in another process: the cache is taken, and one V8 refuses (damaged) is compiled over and written again', () => {
    const before = inChild(root, dir);
    expect(before.stats).to.deep.equal({ accepted: 0, compiled: 1, written: 1 });
    expect(before.result).to.equal(42);
    expect(inChild(root, dir).stats).to.deep.equal({ accepted: 1, compiled: 0, written: 0 });
    const [name] = readdirSync(dir);
    writeFileSync(join(dir, name!), Buffer.from('not a code cache'));
    const damaged = inChild(root, dir);
    expect(damaged.stats).to.deep.equal({ accepted: 0, compiled: 1, written: 1 });
    expect(damaged.result).to.equal(42);
    expect(inChild(root, dir).stats).to.deep.equal({ accepted: 1, compiled: 0, written: 0 });
  });

  it('declines a directory others can write to, and then Node compiles as usual', () => {
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o777);
    expect(installCodeCache({ root, dir, writeAfterMs: 60_000 })).to.equal(undefined);
    expect((load(join(root, 'a.cjs')) as { twice(n: number): number }).twice(1)).to.equal(2);
    expect(readdirSync(dir)).to.deep.equal([]);
  });

  it('where the cache is kept: HIVENODE_CODE_CACHE, off, or under XDG_CACHE_HOME', () => {
    expect(codeCacheDir({ HIVENODE_CODE_CACHE: '/srv/cache' })).to.equal('/srv/cache');
    expect(codeCacheDir({ HIVENODE_CODE_CACHE: 'off' })).to.equal(undefined);
    expect(codeCacheDir({ XDG_CACHE_HOME: '/home/u/.cache' })).to.equal('/home/u/.cache/hivenode/code-cache');
    expect(codeCacheDir({})).to.match(/\/hivenode\/code-cache$|hivenode-code-cache-/);
  });
});
