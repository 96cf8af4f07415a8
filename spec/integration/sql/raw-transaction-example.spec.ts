/**
 * examples/sql/raw-transaction.yaml runs as its comments say: the node file is started as written
 * (only its port and database file moved to free ones), and every curl line of its header is run
 * with curl, in order, with the answers its comments promise — including that a failed transfer
 * moved nothing.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../temp.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { startNodeProcess } from '../../reliability/node-process.js';

const EXAMPLE = new URL('../../../examples/sql/raw-transaction.yaml', import.meta.url).pathname;
const SEED = new URL('../../../examples/sql/raw-transaction-seed.sql', import.meta.url).pathname;

interface Answer {
  Code: number;
  Message: string;
  Data: Record<string, string[]>;
}

describe('examples/sql/raw-transaction.yaml (issue 27)', function () {
  this.timeout(60_000);
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    const text = readFileSync(EXAMPLE, 'utf8');
    const dir = tempDir('hn-sqltx-example-');
    const file = join(dir, 'raw-transaction.yaml');
    writeFileSync(file, text.replace(/Port: 8082/, 'Port: 0').replace(/SQL_DATABASE: \S+/, `SQL_DATABASE: ${join(dir, 'bank.sqlite')}`).replace(/SQL_INITFILE: \S+/, `SQL_INITFILE: ${SEED}`));
    node = await startNodeProcess(file);
    const lines = [...text.matchAll(/^# {3}(\$T .*?)\s+# (\d{3}): (.*)$/gm)].map((m) => ({ line: m[1]!, code: Number(m[2]), says: m[3]! }));
    expect(lines.length).to.equal(4);
    const t = /^# {3}T="(.*)"$/m.exec(text)![1]!.replace('8082', String(node.port));
    const run = (line: string): Answer => JSON.parse(execFileSync('bash', ['-c', `T="${t}"; ${line}`], { encoding: 'utf8' })) as Answer;
    const answers = lines.map(({ line, code }) => {
      const a = run(line);
      expect(a.Code, JSON.stringify(a)).to.equal(code);
      return a;
    });
    expect(answers[0]!.Data.affected).to.deep.equal(['1', '1', '1', '2']);
    expect(answers[0]!.Data.balance).to.deep.equal(['70', '50']);
    expect(answers[1]!.Message).to.match(/^statement 1 of 4: .*CHECK constraint failed/);
    expect(answers[2]!.Message).to.match(/^statement 3 of 4: .*FOREIGN KEY constraint failed/);
    expect(answers[3]!.Message).to.equal("Data 'amount' is missing (it fills a placeholder of SQL_RAWVALUE statement 1 of 4)");
    // nothing of the three refused transfers stayed: one more unit moves from 70/50
    const after = run(lines[0]!.line.replace('"30"', '"1"'));
    expect(after.Data.balance).to.deep.equal(['69', '51']);
  });
});
