/**
 * The certificates of the TLS tests: made once per test process by scripts/certs.sh (the same script
 * as `make certs`, so the tests check what users get) in a temporary directory removed at exit.
 * See scripts/certs.sh for the files: ca, server, client-alice/bob/carol, the expired ones and the
 * ones of a CA nobody trusts.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from './temp.js';

const SCRIPT = resolve(new URL('../scripts/certs.sh', import.meta.url).pathname);
let made: string | undefined;

/** The directory holding the certificates (made on the first call). */
export function certsDir(): string {
  if (made) return made;
  const dir = tempDir('hn-certs-');
  execFileSync('bash', [SCRIPT, '--force', dir], { stdio: 'ignore' });
  made = dir;
  return dir;
}

/** The path of one file of the certificates directory, for example certPath('client-alice.pem'). */
export function certPath(file: string): string {
  return join(certsDir(), file);
}

/** The contents of one file of the certificates directory. */
export function certText(file: string): string {
  return readFileSync(certPath(file), 'utf8');
}
