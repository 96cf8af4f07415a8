/**
 * examples/sql/queue-batch.yaml runs as its comments say: the node file is started as written (only
 * its port, database file, store and SQL_INITFILE path moved for a run outside the repository root),
 * every `$Q` line of its header is run with curl, in order, with the Codes its comments promise; the
 * four orders went as one batch, the bad one failed alone and is dead, the other three are in the table.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { QueryTypes, Sequelize } from 'sequelize';
import type { RunningExample } from '../example-node.js';
import { headerShell, startExample } from '../example-node.js';

const EXAMPLE = new URL('../../../examples/sql/queue-batch.yaml', import.meta.url).pathname;
const SEED = new URL('../../../examples/sql/queue-batch-seed.sql', import.meta.url).pathname;

describe('examples/sql/queue-batch.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written; the bad order of a batch of four fails alone and is dead, the three others are in the table', async () => {
    let database = '';
    example = await startExample(EXAMPLE, 'Q', 8084, (t, dir) => {
      database = join(dir, 'queue-batch.sqlite');
      return t
        .replace(/Port: 8084/, 'Port: 0')
        .replaceAll('./queue-batch.sqlite', database)
        .replace('./queue-batch-store', join(dir, 'store'))
        .replace('examples/sql/queue-batch-seed.sql', SEED);
    });
    const lines = [...example.text.matchAll(/^# {3}((?:sleep \d+; )?\$Q .*?)\s+# (\d{3}): .*$/gm)].map((m) => ({
      line: m[1]!,
      code: Number(m[2]),
    }));
    expect(lines).to.have.length(6);
    expect(headerShell(example.text, 'Q', (s) => s).lines.length).to.be.at.least(4);
    const answers = lines.map(({ line }) => example!.run(line));
    expect(answers.map((a) => a.Code)).to.deep.equal(lines.map((l) => l.code));
    const [status, dead] = answers.slice(4);
    expect(status!.Data.queuesize).to.deep.equal(['1']);
    expect(dead!.Data.objects ?? dead!.Data.keys).to.have.length(1);
    const db = new Sequelize({ dialect: 'sqlite', storage: database, logging: false });
    try {
      expect(await db.query('SELECT id, qty FROM orders ORDER BY id', { type: QueryTypes.SELECT })).to.deep.equal([
        { id: 'o1', qty: 3 },
        { id: 'o2', qty: 1 },
        { id: 'o3', qty: 7 },
      ]);
    } finally {
      await db.close();
    }
  });
});
