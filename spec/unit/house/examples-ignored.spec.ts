/**
 * The examples write their files where they run, and README runs them from the clone's root: every
 * relative path an example names for a store, a database or a record file is ignored by git, so
 * trying an example leaves the clone's `git status` clean.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const WRITTEN = /^\s*(?:PersistPath|SQL_DATABASE|SQL_STATEFILE|RecordFile):\s*(\.\/\S+)/gm;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('house: what the examples write into the clone is ignored by git', () => {
  it('every relative PersistPath, SQL_DATABASE, SQL_STATEFILE and RecordFile of examples/ (and a SQLite file’s -wal/-shm) is ignored', () => {
    const paths = yamlFiles(join(REPO, 'examples')).flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(WRITTEN)].map((m) => ({ file: relative(REPO, f), path: m[1]! })),
    );
    expect(paths.length, 'the examples name relative paths (else this test checks nothing)').to.be.at.least(4);
    for (const { file, path } of paths) {
      const plain = path.replace(/^\.\//, '');
      const names = /\.sqlite$/.test(plain) ? [plain, `${plain}-wal`, `${plain}-shm`] : [plain, `${plain}/queue.db`];
      for (const name of names) {
        const r = spawnSync('git', ['check-ignore', '-q', '--no-index', name], { cwd: REPO });
        expect(r.status, `${file}: ${name} is not ignored`).to.equal(0);
      }
    }
  });
});
