/**
 * makeDirectory: parents made one level at a time, an existing directory accepted, and every path
 * that cannot become a directory refused at once with a ConfigError naming the parameter — also under
 * /proc, where Node's recursive mkdir never returns.
 */
import { expect } from 'chai';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirectory } from '../../../actors/shared/make-directory.js';
import { ConfigError } from '../../../protocol/errors.js';
import { tempDir } from '../../temp.js';

describe('makeDirectory', () => {
  it('makes missing parents and the directory; an existing one is left as it is', () => {
    const root = tempDir('hn-mkdir-');
    const deep = join(root, 'a', 'b', 'c');
    makeDirectory(deep, 'PersistPath');
    expect(statSync(deep).isDirectory()).to.equal(true);
    mkdirSync(join(deep, 'kept'));
    makeDirectory(deep, 'PersistPath');
    expect(statSync(join(deep, 'kept')).isDirectory()).to.equal(true);
  });

  // the spin of Node's recursive mkdir is caught by the CLI test, whose child process has a timeout
  it('a path under /proc is refused, naming the parameter, the part and the cause', () => {
    expect(() => makeDirectory('/proc/no-such/dir', 'PersistPath')).to.throw(
      ConfigError,
      /^PersistPath: cannot create \/proc\/no-such \(ENOENT\) for the directory \/proc\/no-such\/dir; give a directory/,
    );
  });

  it('a file on the way or in the place is refused', () => {
    const file = join(tempDir('hn-mkdir-'), 'file');
    writeFileSync(file, '');
    expect(() => makeDirectory(join(file, 'sub'), 'Directory')).to.throw(
      ConfigError,
      /Directory: cannot create .*file\/sub \(ENOTDIR\)/,
    );
    expect(() => makeDirectory(file, 'Directory')).to.throw(
      ConfigError,
      /Directory: .*file exists and is not a directory/,
    );
  });
});
