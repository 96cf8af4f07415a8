/** Finds the package root (works from bin/ under tsx and from dist/bin/ after the build). */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'hivenode') return dir;
    dir = dirname(dir);
  }
  throw new Error('cannot find the hivenode package root');
}

export const PACKAGE_ROOT = findRoot();
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
