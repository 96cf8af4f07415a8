/**
 * The example Access table of the authorization issue and what it must answer, written out by hand
 * cell by cell (not computed by the matcher under test): the unit test, the gateway test and the
 * reliability record all check against this one matrix.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { passwdLine } from '../../actors/auth/authenticate.js';

export const ACCESS = 'cmd/*=admins;queue=ops,admins;sql/select=readers,ops;*=admins';

/** Who is in which group: one user per group of the table, and one in none. */
export const GROUPS_FILE = '# the example groups\nadmins: alice\nops: oscar\nreaders: rita\n';

export const USERS = ['alice', 'oscar', 'rita', 'nina'] as const;
export type MatrixUser = (typeof USERS)[number];
export const PASSWORD = 'matrix-password-1';

/**
 * Every route class and operation of the table (and some it does not name) → the status per user.
 * sql/select is the most specific entry, so admins (alice) are refused there although '*' names them.
 */
export const MATRIX: Record<string, Record<MatrixUser, 200 | 403>> = {
  'cmd/run': { alice: 200, oscar: 403, rita: 403, nina: 403 },
  'cmd/list': { alice: 200, oscar: 403, rita: 403, nina: 403 },
  'queue/add': { alice: 200, oscar: 200, rita: 403, nina: 403 },
  'queue/status': { alice: 200, oscar: 200, rita: 403, nina: 403 },
  'sql/select': { alice: 403, oscar: 200, rita: 200, nina: 403 },
  'sql/insert': { alice: 200, oscar: 403, rita: 403, nina: 403 },
  'echo/hello': { alice: 200, oscar: 403, rita: 403, nina: 403 },
};

/** Every cell of the matrix as [route, user, expected status]. */
export function cells(): Array<[string, MatrixUser, 200 | 403]> {
  return Object.entries(MATRIX).flatMap(([route, row]) =>
    USERS.map((u) => [route, u, row[u]] as [string, MatrixUser, 200 | 403]),
  );
}

/** Writes the users file (all four users, one password) and the groups file into `dir`. */
export async function writeMatrixFiles(dir: string): Promise<{ users: string; groups: string }> {
  const lines = await Promise.all(USERS.map((u) => passwdLine(u, PASSWORD, 4)));
  const users = join(dir, 'users.htpasswd');
  const groups = join(dir, 'groups');
  writeFileSync(users, `${lines.join('\n')}\n`);
  writeFileSync(groups, GROUPS_FILE);
  return { users, groups };
}

export const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
