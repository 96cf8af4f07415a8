/**
 * Changing a running node (README, Changing a running node): `hivenode check <file>` compiles a node
 * file completely without running it, and a node run from a file re-reads it on SIGHUP and, with
 * `--watch`, whenever it changes. Both go through the same compile (node/node-plan.ts), so a file
 * that `check` accepts is one a reload applies.
 */
import { unwatchFile, watchFile } from 'node:fs';
import { readNodeText } from '../config/node-file.js';
import { ConfigError, describeError } from '../protocol/errors.js';
import type { HiveNode } from '../node/node.js';
import type { ReadFile } from '../node/node-file-control.js';
import { NodeFileControl, checkNodeText, textHash } from '../node/node-file-control.js';

export { readNodeFile } from '../node/node-file-control.js';

/** `hivenode check <file>`: every error one line on standard error and exit 2, or a summary and exit 0. */
export async function runCheck(path: string): Promise<void> {
  let errors: string[];
  let summary = '';
  try {
    const checked = await checkNodeText(readNodeText(path), path);
    errors = checked.errors;
    const compiled = checked.compiled ?? [];
    summary = `${path}: ${compiled.length} service(s) (${compiled.map((s) => `${s.service.info.kind} ${s.name}`).join(', ')}): no errors`;
  } catch (e) {
    errors = [describeError(e)];
  }
  if (errors.length > 0) {
    for (const line of errors) console.error(`hivenode: ${line}`);
    process.exit(ConfigError.EXIT_CODE);
  }
  console.log(summary);
}

/**
 * Reloads `node` from `path` when asked: on SIGHUP, and with `watch` whenever the file changes (stat
 * polling, which survives editors that write a new file and rename it). Returns a stop function.
 */
export function reloadOnSignal(node: HiveNode, path: string, started: ReadFile, watch: boolean): () => void {
  const control = new NodeFileControl(node, path, started);
  // the console's Config page applies through the same control (node/node-file-control.ts)
  node.fileControl = control;
  const reload = (who: string): void => {
    void control.reloadFromDisk(who).catch((e: unknown) => node.refuseReload(describeError(e), who));
  };
  const onHangup = (): void => reload('SIGHUP');
  process.on('SIGHUP', onHangup);
  let settle: NodeJS.Timeout | undefined;
  if (watch) {
    watchFile(path, { interval: 250, persistent: false }, (now, before) => {
      if (now.mtimeMs === before.mtimeMs && now.size === before.size) return;
      // an editor's save may be two writes: one reload once it has settled
      clearTimeout(settle);
      settle = setTimeout(() => {
        // a file the console's Config page wrote is already running
        let text: string;
        try {
          text = readNodeText(path);
        } catch {
          return reload('watch');
        }
        if (!control.isRunning(textHash(text))) reload('watch');
      }, 150);
    });
  }
  return () => {
    process.off('SIGHUP', onHangup);
    clearTimeout(settle);
    if (watch) unwatchFile(path);
  };
}

/** The variable `hivenode reload --dashboard` reads the operator's password from (never a command-line argument, which `ps` shows). */
export const PASSWORD_VARIABLE = 'HIVENODE_PASSWORD';

/**
 * `hivenode reload --dashboard <url> --user <name>`: asks a running node's console to re-read its node
 * file from disk (POST /api/config/reload, with the checks of every console action: the operator's
 * Basic credentials, the password from HIVENODE_PASSWORD, and the CSRF token of GET /api/csrf).
 * Prints the diff and exits 0, or the refusal and exits 2; 1 when the console cannot be reached.
 */
export async function runReloadDashboard(
  url: string,
  user: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const name = user ?? env.HIVENODE_USER;
  const password = env[PASSWORD_VARIABLE];
  if (!name || password === undefined) {
    console.error(
      `hivenode: reload --dashboard needs an operator of the console's dashboard.Users: --user <name> (or HIVENODE_USER) and the password in ${PASSWORD_VARIABLE}`,
    );
    process.exit(ConfigError.EXIT_CODE);
  }
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    console.error(`hivenode: --dashboard '${url}' is not a URL: write it as http://127.0.0.1:8099`);
    process.exit(ConfigError.EXIT_CODE);
  }
  let status: number;
  let answer: { applied?: boolean; summary?: string; reason?: string; Message?: string };
  try {
    const csrf = await fetch(new URL('/api/csrf', base));
    if (!csrf.ok) throw new Error(`GET /api/csrf answered HTTP ${csrf.status}`);
    const cookie = (csrf.headers.get('set-cookie') ?? '').split(';')[0]!;
    const { token } = (await csrf.json()) as { token: string };
    const res = await fetch(new URL('/api/config/reload', base), {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`,
        cookie,
        'x-csrf-token': token,
        'content-type': 'application/json',
      },
      body: '{}',
    });
    status = res.status;
    answer = (await res.json()) as typeof answer;
  } catch (e) {
    console.error(
      `hivenode: cannot ask ${url} for a reload: ${describeError(e)} (is the node running with a dashboard port?)`,
    );
    process.exit(1);
  }
  if (status === 200 && answer.applied) {
    console.log(`reload applied: ${answer.summary ?? ''}`);
    return;
  }
  if (answer.reason !== undefined)
    for (const line of answer.reason.split('\n')) console.error(`hivenode: reload refused: ${line}`);
  else console.error(`hivenode: reload refused by ${url} (HTTP ${status}): ${answer.Message ?? 'no reason given'}`);
  process.exit(status >= 500 ? 1 : ConfigError.EXIT_CODE);
}
