/**
 * examples/gateway/access.yaml runs as its comments say: the node file is started as written (only
 * its port moved to a free one and its files named from the repository root), and every curl line of
 * its header is run with curl, in order, with the Code and Message its comment promises.
 */
import { expect } from 'chai';
import type { RunningExample } from './example-node.js';
import { startExample } from './example-node.js';
import { until } from '../support/wait.js';

const EXAMPLES = new URL('../../examples/gateway/', import.meta.url).pathname;

describe('examples/gateway/access.yaml (authorization per route)', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    example = await startExample(`${EXAMPLES}access.yaml`, 'G', 8084, (text) =>
      text.replace(/Port: 8084/, 'Port: 0').replace(/examples\/gateway\//g, EXAMPLES),
    );
    const { text, run } = example;
    const lines = [...text.matchAll(/^# {3}(\$G\S* .*?)\s+# (\d{3}): (.*)$/gm)].map((m) => ({
      line: m[1]!,
      code: Number(m[2]),
      comment: m[3]!,
    }));
    expect(lines.length).to.equal(8);
    for (const { line, code, comment } of lines) {
      const answer = run(line);
      expect(answer.Code, `${line}: ${JSON.stringify(answer)}`).to.equal(code);
      // a 403 or 401 comment quotes the Message; a 200 reached the echo
      if (code === 200) expect(answer.Message, line).to.equal('Success');
      else if (code === 403) expect(comment, line).to.equal(answer.Message);
      else expect(answer.Message, line).to.equal(comment);
    }
    // the curl lines ran synchronously: the node's output is read once this test yields
    const node = example.node;
    await until(() => node.output().includes("route 'echo/hello'"), 5_000);
    const warnings = example.node
      .output()
      .split('\n')
      .filter((l) => l.includes('403: user'));
    expect(warnings.map((l) => /user '(\w+)' may not use route '([^']+)'/.exec(l)?.slice(1).join(' '))).to.deep.equal([
      'oscar cmd/run',
      'alice sql/select',
      'nina echo/hello',
    ]);
    expect(example.node.output()).to.not.contain('-example');
  });
});
