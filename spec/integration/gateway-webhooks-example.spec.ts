/**
 * examples/gateway/webhooks.yaml runs as its comments say: the node file is started as written (only
 * its port moved to a free one and its files named from the repository root), and every curl line of
 * its header is run with bash after the header's lines that sign the body with openssl, in order,
 * with the Code and Message its comment promises.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import type { ExampleAnswer, RunningExample } from './example-node.js';
import { headerShell, startExample } from './example-node.js';
import { until } from '../support/wait.js';

const EXAMPLES = new URL('../../examples/gateway/', import.meta.url).pathname;

describe('examples/gateway/webhooks.yaml (signed webhooks)', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    example = await startExample(`${EXAMPLES}webhooks.yaml`, 'G', 8086, (text) =>
      text.replace(/Port: 8086/, 'Port: 0').replace(/examples\/gateway\//g, EXAMPLES),
    );
    const { setup, lines } = headerShell(example.text, 'G', (t) => t.replace(/examples\/gateway\//g, EXAMPLES));
    expect(lines.length).to.equal(5);
    // one bash for all: the replay line repeats the very request (same T) the line before it sent
    const url = /^# {3}G="(.*)"$/m.exec(example.text)![1]!.replace('8086', String(example.node.port));
    const script = `G="${url}"\n${setup}\n${lines.map((l) => `${l.line}; echo`).join('\n')}`;
    const answers = execFileSync('bash', ['-c', script], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((t) => JSON.parse(t) as ExampleAnswer);
    expect(answers).to.have.length(lines.length);
    lines.forEach(({ line, code, comment }, i) => {
      const answer = answers[i]!;
      expect(answer.Code, `${line}: ${JSON.stringify(answer)}`).to.equal(code);
      expect(answer.Message, line).to.equal(code === 200 ? 'Success' : comment);
    });
    const node = example.node;
    await until(() => node.output().includes("401: webhook route 'github'"), 5_000);
    expect(node.output()).to.not.contain('example-github-webhook-secret');
  });
});
