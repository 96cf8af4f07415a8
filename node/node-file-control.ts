/**
 * A node run from a file, and every way its file is applied again (README, Changing a running node):
 * SIGHUP and `--watch` re-read it from disk; the console's Config page dry-runs an edited text,
 * applies it (written back atomically, the versions before it kept: node-file-versions.ts) or
 * restores a kept version; `hivenode reload --dashboard` asks the console for a reload from disk.
 * All go through one compile — `hivenode check`'s (checkNodeText) — and `HiveNode.reload`, one at a
 * time, and each is a journal `reload` event with who asked.
 */
import { createHash } from 'node:crypto';
import type { NodeFile } from '../config/node-file.js';
import { parseNodeFile, readNodeText } from '../config/node-file.js';
import { compileTracing } from '../config/tracing.js';
import { ConfigError, describeError } from '../protocol/errors.js';
import type { ConfigCheck, ConfigOutcome, ConsoleConfig } from './console/sources.js';
import { lineDiff } from './line-diff.js';
import type { HiveNode } from './node.js';
import type { PlannedService } from './node-plan.js';
import { checkServices, compilePlans, plansOf } from './node-plan.js';
import type { maskSecrets, unmaskSecrets } from './node-file-secrets.js';
import type { KeptVersion } from './node-file-versions.js';
import { keptVersions, prepareWrite, readKeptVersion } from './node-file-versions.js';

export const textHash = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A node file read once: its text, parsed content and the hash of its text (status shows it). */
export interface ReadFile {
  text: string;
  file: NodeFile;
  hash: string;
}

/** Reads and parses a node file; a file that cannot be read or parsed is a ConfigError naming it. */
export function readNodeFile(path: string, env: NodeJS.ProcessEnv = process.env): ReadFile {
  const text = readNodeText(path);
  return { text, file: parseNodeFile(text, path, env), hash: textHash(text) };
}

/**
 * A node file's text compiled completely, as `hivenode check` and every reload compile it: every
 * error one line (naming where it is written) in `errors`; the parsed file and its services when it parses.
 */
export async function checkNodeText(
  text: string,
  path: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ errors: string[]; file?: NodeFile; compiled?: PlannedService[] }> {
  const errors: string[] = [];
  let file: NodeFile;
  try {
    file = parseNodeFile(text, path, env);
  } catch (e) {
    return { errors: [describeError(e)] };
  }
  try {
    compileTracing(env, file.tracing, `${file.name} tracing`);
  } catch (e) {
    errors.push(describeError(e));
  }
  const compiled = compilePlans(plansOf(file), errors);
  await checkServices(compiled, errors);
  return { errors, file, compiled };
}

/** Node-file sections a reload cannot apply (the hive's is checked per service by the node). */
function fixedSectionChange(before: NodeFile, after: NodeFile, env: NodeJS.ProcessEnv): string | undefined {
  if (
    JSON.stringify([before.dashboardPort, before.dashboardAccess]) !==
    JSON.stringify([after.dashboardPort, after.dashboardAccess])
  )
    return 'the dashboard section is not reloadable; restart the node to apply it';
  const tracing = (f: NodeFile): string => JSON.stringify(compileTracing(env, f.tracing, `${f.name} tracing`));
  if (tracing(before) !== tracing(after)) return 'the tracing section is not reloadable; restart the node to apply it';
  return undefined;
}

/** The secret masking, loaded when the console first needs it (it parses YAML, which a JSON node file's start never loads). */
const secrets = (): Promise<{ maskSecrets: typeof maskSecrets; unmaskSecrets: typeof unmaskSecrets }> =>
  import('./node-file-secrets.js');

export class NodeFileControl implements ConsoleConfig {
  private current: ReadFile;
  /** Applies run one after another (their file writes too). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly node: HiveNode,
    readonly file: string,
    started: ReadFile,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.current = started;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Whether the file on disk is the one running (a watched file's change that an apply wrote needs no reload). */
  isRunning(hash: string): boolean {
    return hash === this.current.hash;
  }

  async running(): Promise<{ text: string; hash: string; diskChanged: boolean }> {
    let disk: string | undefined;
    try {
      disk = readNodeText(this.file);
    } catch {
      disk = undefined;
    }
    return {
      text: (await secrets()).maskSecrets(this.current.text, this.name),
      hash: this.current.hash,
      diskChanged: disk === undefined || textHash(disk) !== this.current.hash,
    };
  }

  private get name(): string {
    return this.file.slice(this.file.lastIndexOf('/') + 1);
  }

  versions(): KeptVersion[] {
    return keptVersions(this.file);
  }

  async version(n: number): Promise<string> {
    return (await secrets()).maskSecrets(readKeptVersion(this.file, n), this.name);
  }

  /** The edited text with its masks put back to the running values (a ConfigError when one has none). */
  private async unmasked(text: string): Promise<string> {
    return (await secrets()).unmaskSecrets(text, this.current.text, this.name);
  }

  async dryRun(text: string): Promise<ConfigCheck> {
    const { maskSecrets } = await secrets();
    let full: string;
    try {
      full = await this.unmasked(text);
    } catch (e) {
      return {
        ok: false,
        errors: [describeError(e)],
        lines: lineDiff(maskSecrets(this.current.text, this.name), text),
      };
    }
    const lines = lineDiff(maskSecrets(this.current.text, this.name), maskSecrets(full, this.name));
    const checked = await this.check(full);
    if (checked.errors.length > 0 || !checked.compiled) return { ok: false, errors: checked.errors, lines };
    const preview = this.node.previewReload(checked.compiled);
    return {
      ok: preview.refused === undefined,
      errors: preview.refused === undefined ? [] : [preview.refused],
      diff: preview.diff,
      summary: preview.summary,
      lines,
    };
  }

  /** The whole compile, and the sections a reload may not change. */
  private async check(text: string): Promise<{ errors: string[]; file?: NodeFile; compiled?: PlannedService[] }> {
    const checked = await checkNodeText(text, this.file, this.env);
    if (checked.file && checked.errors.length === 0) {
      try {
        const fixed = fixedSectionChange(this.current.file, checked.file, this.env);
        if (fixed) checked.errors.push(fixed);
      } catch (e) {
        checked.errors.push(describeError(e));
      }
    }
    return checked;
  }

  apply(text: string, who: string, base?: string): Promise<ConfigOutcome> {
    return this.serial(async () => {
      if (base !== undefined && base !== this.current.hash) {
        const reason = `the running file changed since this text was opened (it was ${base.slice(0, 12)}, it is ${this.current.hash.slice(0, 12)}): open the Config page again and redo the edit there`;
        return { ...this.node.refuseReload(reason, who), conflict: true } as ConfigOutcome;
      }
      let full: string;
      try {
        full = await this.unmasked(text);
      } catch (e) {
        return this.refuse(describeError(e), who);
      }
      return this.applyText(full, who);
    });
  }

  restore(n: number, who: string): Promise<ConfigOutcome> {
    return this.serial(async () => this.applyText(readKeptVersion(this.file, n), who, `restore of ${this.name}.${n}`));
  }

  reloadFromDisk(who: string): Promise<ConfigOutcome> {
    return this.serial(async () => {
      let read: ReadFile;
      try {
        read = readNodeFile(this.file, this.env);
        const fixed = fixedSectionChange(this.current.file, read.file, this.env);
        if (fixed) throw new ConfigError(fixed);
      } catch (e) {
        return this.refuse(describeError(e), who);
      }
      const outcome = await this.node.reload(plansOf(read.file), who, read.hash);
      if (!outcome.applied) return outcome;
      this.current = read;
      return { ...outcome, hash: read.hash };
    });
  }

  private refuse(reason: string, who: string, label?: string): ConfigOutcome {
    return this.node.refuseReload(reason, who, label) as ConfigOutcome;
  }

  /**
   * Compiles `text`, writes it beside the file (fsynced), reloads the node with it, and only once the
   * reload applied puts it in place, keeping the file before it as `.1`; a refused reload leaves the
   * file as it was. A text that is the running one is reloaded (journalled) but not written again.
   */
  private async applyText(text: string, who: string, label?: string): Promise<ConfigOutcome> {
    const checked = await this.check(text);
    if (checked.errors.length > 0 || !checked.file) return this.refuse(checked.errors.join('\n'), who, label);
    const hash = textHash(text);
    let write;
    try {
      write = hash === this.current.hash ? undefined : prepareWrite(this.file, text);
    } catch (e) {
      return this.refuse(describeError(e), who, label);
    }
    const outcome = await this.node.reload(plansOf(checked.file), who, hash, label);
    if (!outcome.applied) {
      write?.discard();
      return outcome;
    }
    try {
      write?.commit();
    } catch (e) {
      // the node runs the new file: say loudly that the disk does not have it
      this.node.log.error(
        `reload applied but ${this.file} could not be written: ${describeError(e)}; the file on disk is the previous one`,
      );
    }
    this.current = { text, file: checked.file, hash };
    return { ...outcome, hash };
  }
}
