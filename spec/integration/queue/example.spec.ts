/**
 * examples/queue-operations.yaml runs as its comments say: the node file is started as written (only
 * its port and store moved to free ones), and every curl line of its header is run with curl, in
 * order, with the answers its comments promise.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { startNodeProcess } from '../../reliability/node-process.js';

const EXAMPLE = new URL('../../../examples/queue-operations.yaml', import.meta.url).pathname;

interface Answer {
  Code: number;
  Data: Record<string, string[]>;
}

describe('examples/queue-operations.yaml (issue 21)', function () {
  this.timeout(60_000);
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    const text = readFileSync(EXAMPLE, 'utf8');
    const dir = tempDir('hn-queue-example-');
    const file = join(dir, 'queue-operations.yaml');
    writeFileSync(file, text.replace(/Port: 8081/, 'Port: 0').replace(/PersistPath: \S+/, `PersistPath: ${join(dir, 'store')}`));
    node = await startNodeProcess(file);
    const lines = [...text.matchAll(/^# {3}(\$Q .*?)(?:\s+#[^']*)?$/gm)].map((m) => m[1]!);
    expect(lines.length).to.equal(7);
    const q = /^# {3}Q="(.*)"$/m.exec(text)![1]!.replace('8081', String(node.port));
    const run = (line: string): Answer => JSON.parse(execFileSync('bash', ['-c', `Q="${q}"; ${line}`], { encoding: 'utf8' })) as Answer;
    const answers: Answer[] = [];
    for (const line of lines) {
      answers.push(run(line));
      if (line.includes('Idempotency-Key')) answers.push(run(line)); // "twice"
      if (line.includes('requeue_count: 0')) await new Promise((r) => setTimeout(r, 500));
    }
    for (const a of answers) expect(a.Code, JSON.stringify(a)).to.equal(200);
    const [first, again, delayed, , deadList, replayed, scheduled, status] = answers as [Answer, Answer, Answer, Answer, Answer, Answer, Answer, Answer];
    expect(again.Data.duplicate).to.deep.equal(['true']);
    expect(again.Data.key).to.deep.equal(first.Data.keys);
    expect(delayed.Data.scheduled ?? status.Data.scheduled).to.deep.equal(['1']);
    expect(deadList.Data['no success after 1 attempt(s)']).to.deep.equal(['1']);
    expect(replayed.Data.replayed).to.deep.equal(['1']);
    expect(scheduled.Data.schedule_name).to.deep.equal(['nightly']);
    expect(Object.keys(status.Data)).to.include.members(['waiting', 'scheduled', 'retrying', 'dead', 'done']);
  });
});
