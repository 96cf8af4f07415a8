/**
 * examples/webhooks/ runs as its README says: receiver.yaml and sender.yaml started as written (only
 * their ports moved to free ones, the sender's URL to the receiver's port, and their files named from
 * the repository root or put in a fresh directory), every curl line of both headers run with bash;
 * the events posted to the sender reach the receiver, whose gateway verified their Standard Webhooks
 * signatures.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import type { ExampleAnswer, RunningExample } from './example-node.js';
import { headerShell, startExample } from './example-node.js';
import { recorded } from './queue/helpers.js';
import { until } from '../support/wait.js';

const EXAMPLES = new URL('../../examples/', import.meta.url).pathname;

describe('examples/webhooks (a queue in front of a signing HTTP client, a verifying receiver)', function () {
  this.timeout(60_000);
  const running: RunningExample[] = [];
  let received = '';
  after(async () => {
    await Promise.all(running.map((r) => r.node.kill('SIGTERM')));
  });

  /** Runs every `$X …` line of an example's header in one bash; each answer with its line's promised Code and comment. */
  const runHeader = (
    example: RunningExample,
    variable: string,
    port: number,
  ): Array<{ line: string; code: number; comment: string; answer: ExampleAnswer }> => {
    const { setup, lines } = headerShell(example.text, variable, (t) => t);
    const url = new RegExp(`^# {3}${variable}="(.*)"$`, 'm')
      .exec(example.text)![1]!
      .replace(String(port), String(example.node.port));
    const out = execFileSync(
      'bash',
      ['-c', `${variable}="${url}"\n${setup}\n${lines.map((l) => `${l.line}; echo`).join('\n')}`],
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n');
    return lines.map((l, i) => ({ ...l, answer: JSON.parse(out[i]!) as ExampleAnswer }));
  };
  const paths = (text: string): string => text.replace(/examples\//g, EXAMPLES);

  it('starts both ends as written; the events posted reach the receiver signed and verified; unsigned ones are 401', async () => {
    const receiver = await startExample(`${EXAMPLES}webhooks/receiver.yaml`, 'R', 8093, (text, dir) => {
      received = `${dir}/received.jsonl`;
      return paths(
        text
          .replace(/Port: 8093/, 'Port: 0')
          .replace('RecordFile: ./webhooks-received.jsonl', `RecordFile: ${received}`),
      );
    });
    running.push(receiver);
    const sender = await startExample(`${EXAMPLES}webhooks/sender.yaml`, 'E', 8092, (text, dir) =>
      paths(
        text
          .replace(/Port: 8092/, 'Port: 0')
          .replace('127.0.0.1:8093', `127.0.0.1:${receiver.node.port}`)
          .replace('PersistPath: ./webhooks-outbox', `PersistPath: ${dir}/outbox`),
      ),
    );
    running.push(sender);

    const sent = runHeader(sender, 'E', 8092);
    expect(sent).to.have.length(3);
    for (const { line, code, answer } of sent) expect(answer.Code, `${line}: ${JSON.stringify(answer)}`).to.equal(code);
    await until(() => recorded(received).length === 2, 20_000);
    const events = recorded(received).map((r) => r.message.Data);
    expect(events).to.deep.equal([
      { type: ['invoice.paid'], invoice: ['in_1'], amount: ['42'] },
      { type: ['invoice.voided'], invoice: ['in_2'] },
    ]);
    expect(sender.node.output()).to.match(/signing \(standard\)/);

    const refused = runHeader(receiver, 'R', 8093);
    expect(refused).to.have.length(2);
    for (const { line, code, comment, answer } of refused) {
      expect(answer.Code, line).to.equal(code);
      expect(answer.Message, line).to.equal(comment);
    }
    expect(recorded(received)).to.have.length(2);
  });
});
