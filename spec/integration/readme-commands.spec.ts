/**
 * README commands run as written: every `hivenode template render …` line of the README's sh blocks is
 * run from the repository root, and the `# …` lines right under it (its output as the README shows
 * it) must be lines of what it prints. These dry runs need no server, so nothing excuses a file the
 * README names but the repository does not have.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

interface Documented {
  line: string;
  args: string[];
  shownOutput: string[];
}

function documentedRenders(readme: string): Documented[] {
  const found: Documented[] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block[1]!.split('\n');
    lines.forEach((line, i) => {
      if (!line.startsWith('hivenode template render ')) return;
      const command = line.replace(/\s+#.*$/, '');
      expect(command, `quoted arguments are not parsed here: ${line}`).not.to.match(/["'\\]/);
      const shownOutput: string[] = [];
      for (let j = i + 1; j < lines.length && lines[j]!.startsWith('# '); j++) shownOutput.push(lines[j]!.slice(2));
      found.push({ line, args: command.split(/\s+/).slice(1), shownOutput });
    });
  }
  return found;
}

describe('README: the template dry runs run as written', () => {
  const renders = documentedRenders(readFileSync(new URL('../../README.md', import.meta.url), 'utf8'));

  it('the README shows the exec and the queue dry run', () => {
    expect(renders.map((r) => r.args[r.args.indexOf('--dialect') + 1])).to.include.members(['exec', 'queue']);
  });

  for (const r of renders) {
    it(r.line.replace(/\s+#.*$/, ''), () => {
      const run = spawnSync(process.execPath, [...HIVENODE_ARGS, ...r.args], {
        cwd: REPO,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status, run.stderr).to.equal(0);
      const printed = run.stdout.split('\n');
      expect(r.shownOutput, 'the README shows what the command prints under it').not.to.deep.equal([]);
      for (const shown of r.shownOutput) expect(printed, `the README shows '${shown}'`).to.include(shown);
    });
  }
});
