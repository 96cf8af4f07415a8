/**
 * The example node files whose header holds curl lines to try: each is started as written (only what
 * `rewrite` moves — a port to 0, a path into a temp directory — is changed), and the lines run with
 * curl against the port it got. The node is stopped after the describe block that asked for it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { NodeProcess } from '../reliability/node-process.js';
import { startNodeProcess } from '../reliability/node-process.js';
import { tempDir } from '../temp.js';

export interface Answer {
  Code: number;
  Message: string;
  Data: Record<string, string[]>;
}

export interface ExampleRun {
  /** The example as written. */
  text: string;
  /** The temp directory the rewritten file is in. */
  dir: string;
  node: NodeProcess;
  /** Runs one header line with `$<variable>` set as the header sets it, aimed at the node's port. */
  curl(line: string): Answer;
}

/** Registers the stop of the node (mocha `after`); `start` starts it. */
export function exampleNode(example: URL, variable: string, writtenPort: number): { start(rewrite: (text: string, dir: string) => string): Promise<ExampleRun> } {
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill('SIGTERM');
  });
  return {
    async start(rewrite) {
      const text = readFileSync(example, 'utf8');
      const dir = tempDir('hn-example-');
      const file = join(dir, basename(example.pathname));
      writeFileSync(file, rewrite(text, dir));
      const started = await startNodeProcess(file);
      node = started;
      const value = new RegExp(`^# {3}${variable}="(.*)"$`, 'm').exec(text)![1]!.replace(String(writtenPort), String(started.port));
      const curl = (line: string): Answer => JSON.parse(execFileSync('bash', ['-c', `${variable}="${value}"; ${line}`], { encoding: 'utf8' })) as Answer;
      return { text, dir, node: started, curl };
    },
  };
}
