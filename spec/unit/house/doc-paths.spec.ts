/**
 * docs/ARCHITECTURE.md is the map a newcomer reads first: every path it names from the repository's
 * top-level folders exists, so a move or a rename that forgets the map fails here.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TOP = [
  'actors',
  'node',
  'bin',
  'supervisors',
  'protocol',
  'config',
  'template',
  'spec',
  'bench',
  'scripts',
  'docs',
  'examples',
];
/** A path in backticks starting at a top-level folder, without placeholders (`actors/<kind>/`) or globs. */
const PATH = new RegExp(`\`((?:${TOP.join('|')})/[A-Za-z0-9_./-]*)\``, 'g');

describe('docs/ARCHITECTURE.md names only paths that exist', () => {
  it('every `folder/…` path it names is in the repository', () => {
    const text = readFileSync(`${ROOT}docs/ARCHITECTURE.md`, 'utf8');
    const named = [...new Set([...text.matchAll(PATH)].map((m) => m[1]!))];
    expect(named.length, 'paths found in the page').to.be.greaterThan(50);
    expect(named.filter((p) => !existsSync(`${ROOT}${p}`))).to.deep.equal([]);
  });
});
