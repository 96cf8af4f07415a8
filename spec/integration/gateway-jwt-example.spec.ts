/**
 * examples/gateway/jwt.yaml runs as its comments say: the node file is started as written (only its
 * port moved to a free one and its files named from the repository root), and every curl line of its
 * header is run with bash after the header's helper lines (tokens made and signed with openssl), with
 * the Code and Message its comment promises.
 */
import { expect } from 'chai';
import type { RunningExample } from './example-node.js';
import { headerShell, startExample } from './example-node.js';
import { until } from '../support/wait.js';

const EXAMPLES = new URL('../../examples/gateway/', import.meta.url).pathname;

describe('examples/gateway/jwt.yaml (Bearer tokens)', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    example = await startExample(`${EXAMPLES}jwt.yaml`, 'G', 8085, (text) =>
      text.replace(/Port: 8085/, 'Port: 0').replace(/examples\/gateway\//g, EXAMPLES),
    );
    const { run } = example;
    const { setup, lines } = headerShell(example.text, 'G', (t) => t.replace(/examples\/gateway\//g, EXAMPLES));
    expect(lines.length).to.equal(6);
    for (const { line, code, comment } of lines) {
      const answer = run(`${setup}\n${line}`);
      expect(answer.Code, `${line}: ${JSON.stringify(answer)}`).to.equal(code);
      if (code === 200) expect(answer.Message, line).to.equal('Success');
      else if (code === 403) expect(comment, line).to.equal(answer.Message);
      else expect(answer.Message, line).to.equal(comment);
    }
    const node = example.node;
    await until(() => node.output().includes('401: Bearer token'), 5_000);
    expect(node.output()).to.include('refused: the token has expired');
    // no token (nor its signature) in the log
    expect(node.output()).to.not.match(/eyJ[A-Za-z0-9_-]{10,}/);
  });
});
