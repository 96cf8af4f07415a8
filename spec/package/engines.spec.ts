/**
 * The README promises Node 20 (package.json `engines`). npm prints an EBADENGINE warning for every
 * installed package whose own `engines.node` leaves out the running Node, so each package of the
 * lockfile — the tree `npm ci` installs — must declare support for the oldest Node we promise.
 * Checked against the lockfile rather than by grepping `npm ci`'s output: that output only tells
 * about the Node that happens to run the install (CI on Node 22 would not see a Node-22-only
 * dependency), while this holds every version in the tree to the promise itself.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import semver from 'semver';

const root = new URL('../../', import.meta.url);
const readJson = (name: string): unknown => JSON.parse(readFileSync(new URL(name, root), 'utf8'));

interface LockEntry {
  version?: string;
  engines?: unknown;
}

/** The `engines.node` range of a lockfile entry; old packages wrote `engines` as an array, which npm ignores. */
function nodeRange(entry: LockEntry): string | undefined {
  const e = entry.engines;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return undefined;
  const node = (e as Record<string, unknown>).node;
  return typeof node === 'string' ? node : undefined;
}

/** Every package of the lockfile whose engines.node range refuses `version`, as "name@version (range)". */
function refusingPackages(lock: { packages: Record<string, LockEntry> }, version: string): string[] {
  const refused: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '') continue; // hivenode itself
    const range = nodeRange(entry);
    // npm's own engine check (npm-install-checks) takes prereleases into account the same way
    if (range !== undefined && !semver.satisfies(version, range, { includePrerelease: true })) {
      refused.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version ?? '?'} (node ${range})`);
    }
  }
  return refused;
}

describe('package: Node engines of the dependency tree', () => {
  const pkg = readJson('package.json') as { engines: { node: string } };
  const lock = readJson('package-lock.json') as { packages: Record<string, LockEntry> };
  const oldest = semver.minVersion(pkg.engines.node)!.version;

  it(`hivenode declares Node 20 (${pkg.engines.node}), as the README says`, () => {
    expect(semver.major(oldest)).to.equal(20);
  });

  it('every package npm ci installs declares support for the oldest Node hivenode promises', () => {
    expect(refusingPackages(lock, oldest), `these packages would print EBADENGINE on Node ${oldest}`).to.deep.equal([]);
  });

  it('... and for the Node running this test', () => {
    expect(
      refusingPackages(lock, process.versions.node),
      `these packages print EBADENGINE on Node ${process.versions.node}`,
    ).to.deep.equal([]);
  });

  it('the check sees a package that refuses a version (it can fail)', () => {
    const lockWithNode22Only = {
      packages: {
        '': {},
        'node_modules/a/node_modules/x': { version: '3.0.0', engines: { node: '>= 22.x' } },
        'node_modules/y': { version: '1.0.0', engines: ['node >= 0.4.0'] },
      },
    };
    expect(refusingPackages(lockWithNode22Only, '20.19.0')).to.deep.equal(['x@3.0.0 (node >= 22.x)']);
    expect(refusingPackages(lockWithNode22Only, '22.1.0')).to.deep.equal([]);
  });
});
