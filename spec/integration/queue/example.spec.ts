/**
 * examples/queue-operations.yaml runs as its comments say: the node file is started as written (only
 * its port and store moved to free ones), and every curl line of its header is run with curl, in
 * order, with the answers its comments promise.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { ExampleAnswer as Answer, RunningExample } from '../example-node.js';
import { startExample } from '../example-node.js';
import { sleep } from '../../support/wait.js';

const EXAMPLE = new URL('../../../examples/queue-operations.yaml', import.meta.url).pathname;

describe('examples/queue-operations.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    example = await startExample(EXAMPLE, 'Q', 8081, (text, dir) =>
      text.replace(/Port: 8081/, 'Port: 0').replace(/PersistPath: \S+/, `PersistPath: ${join(dir, 'store')}`),
    );
    const { text, run } = example;
    const lines = [...text.matchAll(/^# {3}(\$Q .*?)(?:\s+#[^']*)?$/gm)].map((m) => m[1]!);
    expect(lines.length).to.equal(7);
    const answers: Answer[] = [];
    for (const line of lines) {
      answers.push(run(line));
      if (line.includes('Idempotency-Key')) answers.push(run(line)); // "twice"
      if (line.includes('requeue_count: 0')) await sleep(500);
    }
    for (const a of answers) expect(a.Code, JSON.stringify(a)).to.equal(200);
    const [first, again, delayed, , deadList, replayed, scheduled, status] = answers as [
      Answer,
      Answer,
      Answer,
      Answer,
      Answer,
      Answer,
      Answer,
      Answer,
    ];
    expect(again.Data.duplicate).to.deep.equal(['true']);
    expect(again.Data.key).to.deep.equal(first.Data.keys);
    expect(delayed.Data.scheduled ?? status.Data.scheduled).to.deep.equal(['1']);
    expect(deadList.Data['no success after 1 attempt(s)']).to.deep.equal(['1']);
    expect(replayed.Data.replayed).to.deep.equal(['1']);
    expect(scheduled.Data.schedule_name).to.deep.equal(['nightly']);
    expect(Object.keys(status.Data)).to.include.members(['waiting', 'scheduled', 'retrying', 'dead', 'done']);
  });
});
