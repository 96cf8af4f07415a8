/**
 * Temporary directories of the tests: made under the OS temp directory with a recognisable prefix
 * and removed when the test process exits, so test runs do not pile up directories in /tmp.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const created: string[] = [];

function removeAll(): void {
  for (const dir of created.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // still in use by a process that outlived the tests: the OS cleans its temp directory
    }
  }
}

export function tempDir(prefix = 'hn-test-'): string {
  if (created.length === 0) process.once('exit', removeAll);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}
