/**
 * hivenode as a user installs it: `npm pack` in the repository, `npm install -g` of the tarball into a
 * temporary prefix, then the installed `hivenode` run from an empty directory — so the package must
 * carry its build, its examples and the demo's templates, and find them next to itself rather than
 * in the current directory.
 *
 * The install fetches hivenode's dependencies from the npm registry (or the npm cache). sqlite3's
 * native binding comes, as it does for a user, as a prebuilt binary (prebuild-install) rather than
 * built from source: this machine reaches no release host, so the binary the repository's own install
 * has is offered where prebuild-install looks first, a directory of local prebuilds
 * (npm_config_sqlite3_local_prebuilds) — the way an organisation without access to GitHub serves it.
 * Were the names not to match (a newer sqlite3 resolved), the install builds from source, 1 to 2
 * minutes more: hence the generous timeouts below; nothing here measures speed.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../adapters/ports.js';
import { tempDir } from '../temp.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const MINUTE = 60_000;

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** Runs a command to its end (killed after `limitMs`), with both output streams kept. */
function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; limitMs: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.limitMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/**
 * A directory of local prebuilds holding the sqlite3 binding of the repository's own install, named as
 * prebuild-install names the release it would download (`sqlite3-v<version>-napi-v<n>-linux-x64.tar.gz`,
 * the newest N-API version the package lists that this Node has).
 */
async function localSqlitePrebuild(work: string): Promise<string> {
  const dir = join(work, 'prebuilds');
  mkdirSync(dir);
  const sqlite3 = join(REPO, 'node_modules', 'sqlite3');
  const meta = JSON.parse(readFileSync(join(sqlite3, 'package.json'), 'utf8')) as {
    version: string;
    binary: { napi_versions: number[] };
  };
  const napi = Math.max(...meta.binary.napi_versions.filter((v) => v <= Number(process.versions.napi)));
  const name = `sqlite3-v${meta.version}-napi-v${napi}-${process.platform}-${process.arch}.tar.gz`;
  const packed = await run('tar', ['-czf', join(dir, name), '-C', sqlite3, 'build/Release/node_sqlite3.node'], {
    cwd: work,
    limitMs: MINUTE,
  });
  expect(packed.code, packed.err).to.equal(0);
  return dir;
}

describe('package: npm pack, npm install -g, hivenode from an empty directory', function () {
  this.timeout(30 * MINUTE);
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { name: string; version: string };
  const tarballName = `${pkg.name}-${pkg.version}.tgz`;
  let work: string;
  let tarball: string;
  let prefix: string;
  let bin: string;

  let prebuilds: string;

  before(async () => {
    work = tempDir('hn-package-');
    prefix = join(work, 'prefix');
    prebuilds = await localSqlitePrebuild(work);
    // npm pack runs the prepack script (the package build, tsc) first
    const packed = await run('npm', ['pack', '--pack-destination', work], { cwd: REPO, limitMs: 10 * MINUTE });
    expect(packed.code, packed.out + packed.err).to.equal(0);
    tarball = join(work, tarballName);
    expect(existsSync(tarball), `npm pack wrote no ${tarballName}`).to.equal(true);
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the tarball holds what runs — the build and every example the demo names — and no tests, benches or scripts', async () => {
    const listed = await run('tar', ['-tzf', tarball], { cwd: work, limitMs: MINUTE });
    expect(listed.code, listed.err).to.equal(0);
    const files = listed.out
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''));
    expect(files).to.include.members([
      'package.json',
      'README.md',
      'dist/bin/hivenode.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/template/index.js',
    ]);
    // every examples/… path examples/demo.yaml names (files, and the template directory's files)
    const named = [
      ...readFileSync(join(REPO, 'examples', 'demo.yaml'), 'utf8').matchAll(/examples\/[\w./-]*[\w]/g),
    ].map((m) => m[0]);
    expect(named).to.include.members(['examples/templates', 'examples/sql/demo-seed.sql', 'examples/demo.htpasswd']);
    for (const path of named) {
      const wanted = statSync(join(REPO, path)).isDirectory()
        ? readdirSync(join(REPO, path)).map((f) => `${path}/${f}`)
        : [path];
      expect(files, `the demo needs ${path}`).to.include.members(wanted);
    }
    expect(
      files.filter(
        (f) =>
          /^dist\/(spec|bench|scripts)\//.test(f) || f.endsWith('.map') || (f.endsWith('.ts') && !f.endsWith('.d.ts')),
      ),
    ).to.deep.equal([]);
  });

  it('npm install -g of the tarball puts hivenode on the prefix PATH without an EBADENGINE warning', async () => {
    // exactly the README's command; --allow-scripts lets sqlite3 build its binding under npm's
    // install-script policy (npm ≥ 11.16; older npm ignores the option with a warning)
    const env = { ...process.env, npm_config_sqlite3_local_prebuilds: prebuilds };
    const installed = await run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--allow-scripts=sqlite3', '--no-audit', '--no-fund', tarball],
      { cwd: work, env, limitMs: 25 * MINUTE },
    );
    const output = installed.out + installed.err;
    expect(installed.code, output).to.equal(0);
    expect(output).not.to.match(/EBADENGINE/);
    bin = join(prefix, 'bin', 'hivenode');
    expect(existsSync(bin), `no ${bin} after the install:\n${output}`).to.equal(true);
  });

  it('hivenode --version, from an empty directory', async () => {
    expect(bin, 'the install failed').to.be.a('string');
    const empty = join(work, 'empty-version');
    mkdirSync(empty);
    const r = await run(bin, ['--version'], { cwd: empty, limitMs: 2 * MINUTE });
    expect(r.code, r.err).to.equal(0);
    expect(r.out).to.match(new RegExp(`^hivenode ${pkg.version.replace(/\./g, '\\.')}\\n`));
    expect(r.out).to.match(/\n {2}queue +v\d+\.\d+\.\d+\n/);
  });

  it('the installed command line writes its code cache once, then starts from it; HIVENODE_CODE_CACHE=off goes without', async () => {
    expect(bin, 'the install failed').to.be.a('string');
    const cache = join(work, 'code-cache');
    const version = async (dir: string): Promise<void> => {
      const r = await run(bin, ['--version'], {
        cwd: work,
        env: { ...process.env, HIVENODE_CODE_CACHE: dir },
        limitMs: 2 * MINUTE,
      });
      expect(r.code, r.err).to.equal(0);
      expect(r.out).to.match(/^hivenode /);
    };
    await version(cache);
    const written = readdirSync(cache);
    expect(
      written.some((f) => /^cli\.cjs-[0-9a-f]{32}\.v8$/.test(f)),
      written.join(', '),
    ).to.equal(true);
    const mtimes = written.map((f) => statSync(join(cache, f)).mtimeMs);
    // V8 took every cache: nothing is due, nothing written again
    await version(cache);
    expect(readdirSync(cache)).to.deep.equal(written);
    expect(written.map((f) => statSync(join(cache, f)).mtimeMs)).to.deep.equal(mtimes);
    await version('off');
    expect(existsSync(join(work, 'off'))).to.equal(false);
  });

  it('hivenode demo --once, from an empty directory: every call answers, nothing is written there', async () => {
    expect(bin, 'the install failed').to.be.a('string');
    const empty = join(work, 'empty-demo');
    mkdirSync(empty);
    const scratch = join(work, 'tmp'); // the demo's state (SQLite file, queue store) goes to the OS temp directory
    mkdirSync(scratch);
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: scratch,
      HIVENODE_CODE_CACHE: join(work, 'demo-code-cache'),
      HIVENODE_DEMO_PORT: String(await freePort()),
      HIVENODE_DASHBOARD_PORT: String(await freePort()),
      HIVENODE_SYSLOG_PORT: String(await freePort()),
    };
    const r = await run(bin, ['demo', '--once'], { cwd: empty, env, limitMs: 3 * MINUTE });
    expect(r.code, r.out + r.err).to.equal(0);
    expect(r.out).to.contain('node running');
    expect(r.out).to.match(/call 'echo' call \{"greeting":\["hello","hive"\]\}\n {2}→ \{"Code":200/);
    expect(r.out).to.match(/"names":\[[^\]]*"fanout\.tmpl"/); // the storage service found the packaged templates
    expect(r.out).to.contain('upstream status 200');
    expect(r.out).to.match(
      /\/sql\/select[^\n]*\n {2}→ HTTP 200 \{"Code":200,"Message":"Success","Data":\{"id":\[[^\n]*"name":\["Ada","Alan"/,
    );
    expect(readdirSync(empty)).to.deep.equal([]);
    // the demo's state: a directory of the user in the OS temp directory (its SQLite file, queue store, syslog record)
    const state = readdirSync(scratch).find((d) => d.startsWith('hivenode-demo-'));
    expect(state, readdirSync(scratch).join(', ')).to.be.a('string');
    expect(existsSync(join(scratch, state!, 'demo.sqlite'))).to.equal(true);
    // the chunks of every service kind the demo runs, and the console's, were cached
    expect(readdirSync(join(work, 'demo-code-cache')).length).to.be.greaterThan(10);
  });
});
