/**
 * examples/sql/batch-upsert.yaml runs as its comments say: the node file is started as written (only
 * its port, database file and SQL_INITFILE path moved for a run outside the repository root), and
 * every curl line of its header is run with curl, in order, with the answers its comments promise;
 * the table holds what they say afterwards.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { QueryTypes, Sequelize } from 'sequelize';
import type { ExampleAnswer as Answer, RunningExample } from '../example-node.js';
import { startExample } from '../example-node.js';

const EXAMPLE = new URL('../../../examples/sql/batch-upsert.yaml', import.meta.url).pathname;
const SEED = new URL('../../../examples/sql/batch-seed.sql', import.meta.url).pathname;

describe('examples/sql/batch-upsert.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    let database = '';
    example = await startExample(EXAMPLE, 'S', 8083, (t, dir) => {
      database = join(dir, 'sql-batch.sqlite');
      return t
        .replace(/Port: 8083/, 'Port: 0')
        .replaceAll('./sql-batch.sqlite', database)
        .replace('examples/sql/batch-seed.sql', SEED);
    });
    const lines = [...example.text.matchAll(/^# {3}(\$S\/.*?)\s+# .*$/gm)].map((m) => m[1]!);
    expect(lines.length).to.equal(5);
    const answers = lines.map(example.run);
    expect(answers.map((a) => a.Code)).to.deep.equal([200, 400, 400, 200, 400]);
    const [three, unequal, refused, upsert, twice] = answers as [Answer, Answer, Answer, Answer, Answer];
    expect(three.Data).to.deep.equal({ affected: ['3'] });
    expect(unequal.Message).to.contain('the value fields differ in length (sensor 2, at 1, value 2)');
    expect(refused.Message).to.match(/^the database refused the values: .*UNIQUE constraint failed/);
    expect(upsert.Data).to.deep.equal({ affected: ['2'] });
    expect(twice.Message).to.contain('rows 1 and 2 of the batch have the same key');
    const db = new Sequelize({ dialect: 'sqlite', storage: database, logging: false });
    try {
      expect(
        await db.query('SELECT sensor, at FROM readings ORDER BY sensor, at', { type: QueryTypes.SELECT }),
      ).to.deep.equal([
        { sensor: 's1', at: '10:00' },
        { sensor: 's1', at: '10:01' },
        { sensor: 's2', at: '10:00' },
      ]);
      expect(
        await db.query('SELECT sku, name, qty FROM stock ORDER BY sku', { type: QueryTypes.SELECT }),
      ).to.deep.equal([
        { sku: 'apple', name: 'Apple', qty: 10 },
        { sku: 'pear', name: 'Pear', qty: 4 },
      ]);
    } finally {
      await db.close();
    }
  });
});
