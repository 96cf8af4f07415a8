import { expect } from 'chai';
import { renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WatchedFile } from '../../../actors/net/watched-file.js';
import { ConfigError } from '../../../protocol/errors.js';
import { tempDir } from '../../temp.js';

/** Parses 'n=<number>' lines into their sum; throws on any other line, like a config file parser. */
function parseSum(text: string, file: string): number {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .reduce((sum, l, i) => {
      const m = /^n=(\d+)$/.exec(l);
      if (!m) throw new ConfigError(`${file} line ${i + 1}: expected n=<number>`);
      return sum + Number(m[1]);
    }, 0);
}

describe('actors/shared/watched-file', () => {
  it('is read at start; an unreadable or bad file is a ConfigError naming the parameter, or the parser’s line', () => {
    const dir = tempDir('hn-watched-');
    expect(() => new WatchedFile(join(dir, 'none'), parseSum, { param: 'Thing', kind: 'thing file' })).to.throw(
      ConfigError,
      /^Thing: cannot read thing file '.*none': ENOENT$/,
    );
    writeFileSync(join(dir, 'bad'), 'n=1\nx\n');
    expect(() => new WatchedFile(join(dir, 'bad'), parseSum, { param: 'Thing', kind: 'thing file' })).to.throw(
      ConfigError,
      /bad line 2: expected/,
    );
  });

  it('sees an atomic replace with the same size and modification time (by inode); logs each bad version once and keeps the last good value', () => {
    const dir = tempDir('hn-watched-');
    const file = join(dir, 'f');
    writeFileSync(file, 'n=1\n');
    const errors: string[] = [];
    const watched = new WatchedFile(file, parseSum, {
      param: 'Thing',
      kind: 'thing file',
      recheckMs: 0,
      onReloadError: (m) => errors.push(m),
    });
    expect(watched.get()).to.equal(1);
    const { mtime } = statSync(file);
    writeFileSync(`${file}.new`, 'n=2\n');
    utimesSync(`${file}.new`, mtime, mtime);
    renameSync(`${file}.new`, file);
    expect(watched.get()).to.equal(2);
    writeFileSync(`${file}.new`, 'n=3\noops\n');
    renameSync(`${file}.new`, file);
    expect([watched.get(), watched.get()]).to.deep.equal([2, 2]);
    rmSync(file);
    expect([watched.get(), watched.get()]).to.deep.equal([2, 2]);
    expect(errors).to.deep.equal([
      `Thing: thing file '${file}' changed but ${file} line 2: expected n=<number>; keeping what was read before`,
      `Thing: thing file '${file}' changed but cannot read it: ENOENT; keeping what was read before`,
    ]);
    writeFileSync(file, 'n=4\nn=5\n');
    expect(watched.get()).to.equal(9);
  });

  it('looks at the file at most every recheckMs', () => {
    const dir = tempDir('hn-watched-');
    const file = join(dir, 'f');
    writeFileSync(file, 'n=1\n');
    const watched = new WatchedFile(file, parseSum, { param: 'Thing', kind: 'thing file', recheckMs: 60_000 });
    writeFileSync(file, 'n=1\nn=1\n');
    expect(watched.get(), 'not re-read within the interval').to.equal(1);
  });
});
