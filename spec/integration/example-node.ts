/**
 * Example node files (examples/*.yaml) run as their comments say: the file is started as written,
 * only its port and files moved to free ones, and the curl lines of its header — `$X …` after a line
 * `#   X="curl …"` — are run with bash, as a reader would paste them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { tempDir } from '../temp.js';
import type { NodeProcess } from '../reliability/node-process.js';
import { startNodeProcess } from '../reliability/node-process.js';

export interface ExampleAnswer {
  Code: number;
  Message: string;
  Data: Record<string, string[]>;
}

export interface RunningExample {
  node: NodeProcess;
  /** The example file as written. */
  text: string;
  /** Runs one `$X …` line of the header against the running node; its answer. */
  run(line: string): ExampleAnswer;
}

/**
 * Starts the example: `rewrite` gets its text and a fresh directory and moves its port to 0 and its
 * files into the directory; `variable` is the header's curl variable, whose URL names `port`.
 */
export async function startExample(
  path: string,
  variable: string,
  port: number,
  rewrite: (text: string, dir: string) => string,
): Promise<RunningExample> {
  const text = readFileSync(path, 'utf8');
  const dir = tempDir('hn-example-');
  const file = join(dir, basename(path));
  writeFileSync(file, rewrite(text, dir));
  const node = await startNodeProcess(file);
  const url = new RegExp(`^# {3}${variable}="(.*)"$`, 'm').exec(text)![1]!.replace(String(port), String(node.port));
  return {
    node,
    text,
    run: (line) =>
      JSON.parse(execFileSync('bash', ['-c', `${variable}="${url}"; ${line}`], { encoding: 'utf8' })) as ExampleAnswer,
  };
}

export interface HeaderLine {
  line: string;
  code: number;
  comment: string;
}

/**
 * The shell of an example's header: `setup`, its lines other than the curl variable and the `$X …`
 * lines (helpers, signed bodies), with `paths` applied; and each `$X …` line with the Code and the
 * comment it promises (`# 401: <Message>`).
 */
export function headerShell(
  text: string,
  variable: string,
  paths: (s: string) => string,
): { setup: string; lines: HeaderLine[] } {
  const header = [...text.matchAll(/^# {3}(.*)$/gm)].map((m) => m[1]!);
  const setup = paths(header.filter((l) => !l.startsWith(`$${variable}`) && !l.startsWith(`${variable}=`)).join('\n'));
  const lines = header.flatMap((l) => {
    const m = new RegExp(`^(\\$${variable}\\S* .*?)\\s+# (\\d{3}): (.*)$`).exec(l);
    return m ? [{ line: m[1]!, code: Number(m[2]), comment: m[3]! }] : [];
  });
  return { setup, lines };
}
