/**
 * importModule's call sites name their module twice — the literal `import()` the build bundles and the
 * compiled package runs, and the specifier the test runner's CommonJS loader requires
 * (protocol/import-module.ts). The tests run the second, users the first: a typo in either would go
 * unnoticed by the other. This holds the two to the same module at every call site.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCE_DIRS = ['actors', 'bin', 'config', 'node', 'protocol', 'supervisors', 'template'];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('importModule call sites', () => {
  it('name the same module as specifier and as import()', () => {
    let calls = 0;
    for (const file of SOURCE_DIRS.flatMap(sources)) {
      if (file === join('protocol', 'import-module.ts')) continue;
      const text = readFileSync(join(ROOT, file), 'utf8');
      const all = text.match(/\bimportModule\(/g)?.length ?? 0;
      const literal = [
        // as the formatter writes it: on one line, or one argument a line with a trailing comma
        ...text.matchAll(/\bimportModule\(\s*import\.meta\.url,\s*'([^']+)',\s*\(\) => import\('([^']+)'\),?\s*\)/g),
      ];
      expect(
        literal.length,
        `${file}: every importModule call is importModule(import.meta.url, '<module>', () => import('<module>'))`,
      ).to.equal(all);
      for (const [call, specifier, imported] of literal) expect(imported, `${file}: ${call}`).to.equal(specifier);
      calls += all;
    }
    expect(calls, 'the call sites found').to.be.greaterThan(10);
  });
});
