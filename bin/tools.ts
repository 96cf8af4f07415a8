/** Small commands beside running nodes: the interceptor kit and the users- and groups-file writer. */
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { INTERCEPTOR_PARAMS } from '../config/interceptor.js';
import { commandLineLayer, compileConfig, environmentLayer } from '../config/resolve.js';
import { loadInterceptor, serveInterceptor } from '../actors/interceptor/server.js';
import { passwdLine } from '../actors/auth/authenticate.js';
import { addUserToGroups, checkGroupName } from '../actors/auth/groups.js';
import { ConfigError } from '../protocol/errors.js';
import { exitOnConfigError } from './run-node.js';

/** `hivenode interceptor <module> -Port=N -IP=addr`: serves a mapping function until SIGTERM/SIGINT. */
export async function runInterceptor(args: string[]): Promise<void> {
  const [modulePath, ...rest] = args;
  try {
    if (!modulePath || modulePath.startsWith('-'))
      throw new ConfigError('usage: hivenode interceptor <module.js> [-Port=N] [-IP=addr]');
    const c = compileConfig('interceptor', INTERCEPTOR_PARAMS, [
      environmentLayer(process.env, INTERCEPTOR_PARAMS),
      commandLineLayer(rest),
    ]).values;
    const fn = await loadInterceptor(modulePath);
    const running = await serveInterceptor(fn, c.Port, c.IP);
    console.log(`interceptor ${modulePath} serving on http://${c.IP}:${running.port}/`);
    const stop = (): void => {
      void running.close().then(() => process.exit(0));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  } catch (e) {
    exitOnConfigError(e);
  }
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

/**
 * Replaces a file's content all at once (a temporary file beside it, then rename), so a gateway
 * re-reading it never sees half a file. An existing file keeps its mode; a new one gets `mode`.
 */
function writeAtomically(file: string, text: string, mode: number): void {
  const keptMode = existsSync(file) ? statSync(file).mode & 0o777 : mode;
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: keptMode });
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** `--group a --group b,c` as one list of checked names. */
export function groupList(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(',')).map((g) => checkGroupName(g.trim()));
}

/**
 * `hivenode passwd <user> --file F [--group G …] [--groups-file GF]`: reads the password from
 * standard input and writes the user's line; with --group, also adds the user to those groups in GF.
 * Everything is checked (and the groups file parsed) before anything is written.
 */
export async function runPasswd(
  user: string,
  file: string,
  groups: readonly string[] = [],
  groupsFile?: string,
): Promise<void> {
  try {
    const names = groupList(groups);
    if (names.length > 0 && groupsFile === undefined)
      throw new ConfigError('--group needs --groups-file <path> (the file the gateway parameter Groups names)');
    if (names.length === 0 && groupsFile !== undefined)
      throw new ConfigError('--groups-file needs at least one --group <name>');
    const groupsText =
      groupsFile === undefined
        ? undefined
        : addUserToGroups(existsSync(groupsFile) ? readFileSync(groupsFile, 'utf8') : '', user, names, groupsFile);
    const password = (await readStdin()).replace(/\r?\n$/, '');
    if (password.length < 8)
      throw new ConfigError('the password must have at least 8 characters (read from standard input)');
    const line = await passwdLine(user, password);
    const kept = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split(/\r?\n/)
          .filter((l) => l.trim() !== '' && !l.startsWith(`${user}:`))
      : [];
    writeAtomically(file, `${[...kept, line].join('\n')}\n`, 0o600);
    console.log(`user '${user}' written to ${file}`);
    if (groupsFile !== undefined && groupsText !== undefined) {
      writeAtomically(groupsFile, groupsText, 0o644);
      console.log(`user '${user}' is in ${names.map((g) => `'${g}'`).join(', ')} in ${groupsFile}`);
    }
  } catch (e) {
    exitOnConfigError(e);
  }
}
