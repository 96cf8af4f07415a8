/**
 * examples/sql/raw-transaction.yaml runs as its comments say: the node file is started as written
 * (only its port and database file moved to free ones), and every curl line of its header is run
 * with curl, in order, with the answers its comments promise — including that a failed transfer
 * moved nothing.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { RunningExample } from '../example-node.js';
import { startExample } from '../example-node.js';

const EXAMPLE = new URL('../../../examples/sql/raw-transaction.yaml', import.meta.url).pathname;
const SEED = new URL('../../../examples/sql/raw-transaction-seed.sql', import.meta.url).pathname;

describe('examples/sql/raw-transaction.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    example = await startExample(EXAMPLE, 'T', 8082, (text, dir) =>
      text
        .replace(/Port: 8082/, 'Port: 0')
        .replace(/SQL_DATABASE: \S+/, `SQL_DATABASE: ${join(dir, 'bank.sqlite')}`)
        .replace(/SQL_INITFILE: \S+/, `SQL_INITFILE: ${SEED}`),
    );
    const { text, run } = example;
    const lines = [...text.matchAll(/^# {3}(\$T .*?)\s+# (\d{3}): (.*)$/gm)].map((m) => ({
      line: m[1]!,
      code: Number(m[2]),
    }));
    expect(lines.length).to.equal(4);
    const answers = lines.map(({ line, code }) => {
      const a = run(line);
      expect(a.Code, JSON.stringify(a)).to.equal(code);
      return a;
    });
    expect(answers[0]!.Data.affected).to.deep.equal(['1', '1', '1', '2']);
    expect(answers[0]!.Data.balance).to.deep.equal(['70', '50']);
    expect(answers[1]!.Message).to.match(/^statement 1 of 4: .*CHECK constraint failed/);
    expect(answers[2]!.Message).to.match(/^statement 3 of 4: .*FOREIGN KEY constraint failed/);
    expect(answers[3]!.Message).to.equal(
      "Data 'amount' is missing (it fills a placeholder of SQL_RAWVALUE statement 1 of 4)",
    );
    // nothing of the three refused transfers stayed: one more unit moves from 70/50
    const after = run(lines[0]!.line.replace('"30"', '"1"'));
    expect(after.Data.balance).to.deep.equal(['69', '51']);
  });
});
