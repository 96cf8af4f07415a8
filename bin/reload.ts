/**
 * Changing a running node (README, Changing a running node): `hivenode check <file>` compiles a node
 * file completely without running it, and a node run from a file re-reads it on SIGHUP and, with
 * `--watch`, whenever it changes. Both go through the same compile (node/node-plan.ts), so a file
 * that `check` accepts is one a reload applies.
 */
import { createHash } from 'node:crypto';
import { unwatchFile, watchFile } from 'node:fs';
import type { NodeFile } from '../config/node-file.js';
import { parseNodeFile, readNodeText } from '../config/node-file.js';
import { compileTracing } from '../config/tracing.js';
import { ConfigError, describeError } from '../protocol/errors.js';
import type { HiveNode } from '../node/node.js';
import { plansOf } from './plans.js';

/** A node file read once: its parsed content and the hash of its text (status shows it). */
export interface ReadFile {
  file: NodeFile;
  hash: string;
}

export const textHash = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Reads and parses a node file; a file that cannot be read or parsed is a ConfigError naming it. */
export function readNodeFile(path: string, env: NodeJS.ProcessEnv = process.env): ReadFile {
  const text = readNodeText(path);
  return { file: parseNodeFile(text, path, env), hash: textHash(text) };
}

/** `hivenode check <file>`: every error one line on standard error and exit 2, or a summary and exit 0. */
export async function runCheck(path: string): Promise<void> {
  const { compilePlans, checkServices } = await import('../node/node-plan.js');
  const errors: string[] = [];
  let summary = '';
  try {
    const { file } = readNodeFile(path);
    try {
      compileTracing(process.env, file.tracing, `${file.name} tracing`);
    } catch (e) {
      errors.push(describeError(e));
    }
    const compiled = compilePlans(plansOf(file), errors);
    await checkServices(compiled, errors);
    summary = `${path}: ${compiled.length} service(s) (${compiled.map((s) => `${s.service.info.kind} ${s.name}`).join(', ')}): no errors`;
  } catch (e) {
    errors.push(describeError(e));
  }
  if (errors.length > 0) {
    for (const line of errors) console.error(`hivenode: ${line}`);
    process.exit(ConfigError.EXIT_CODE);
  }
  console.log(summary);
}

/** Node-file sections a reload cannot apply (the hive's is checked per service by the node). */
function fixedSectionChange(before: NodeFile, after: NodeFile, env: NodeJS.ProcessEnv): string | undefined {
  if (JSON.stringify([before.dashboardPort, before.dashboardAccess]) !== JSON.stringify([after.dashboardPort, after.dashboardAccess])) return 'the dashboard section is not reloadable; restart the node to apply it';
  const tracing = (f: NodeFile): string => JSON.stringify(compileTracing(env, f.tracing, `${f.name} tracing`));
  if (tracing(before) !== tracing(after)) return 'the tracing section is not reloadable; restart the node to apply it';
  return undefined;
}

/**
 * Reloads `node` from `path` when asked: on SIGHUP, and with `watch` whenever the file changes (stat
 * polling, which survives editors that write a new file and rename it). Returns a stop function.
 */
export function reloadOnSignal(node: HiveNode, path: string, started: NodeFile, watch: boolean): () => void {
  let current = started;
  const reload = (who: string): void => {
    let read: ReadFile;
    try {
      read = readNodeFile(path);
      const fixed = fixedSectionChange(current, read.file, process.env);
      if (fixed) throw new ConfigError(fixed);
    } catch (e) {
      node.refuseReload(describeError(e), who);
      return;
    }
    void node.reload(plansOf(read.file), who, read.hash).then(
      (outcome) => {
        if (outcome.applied) current = read.file;
      },
      (e: unknown) => node.refuseReload(describeError(e), who),
    );
  };
  const onHangup = (): void => reload('SIGHUP');
  process.on('SIGHUP', onHangup);
  let settle: NodeJS.Timeout | undefined;
  if (watch) {
    watchFile(path, { interval: 250, persistent: false }, (now, before) => {
      if (now.mtimeMs === before.mtimeMs && now.size === before.size) return;
      // an editor's save may be two writes: one reload once it has settled
      clearTimeout(settle);
      settle = setTimeout(() => reload('watch'), 150);
    });
  }
  return () => {
    process.off('SIGHUP', onHangup);
    clearTimeout(settle);
    if (watch) unwatchFile(path);
  };
}
