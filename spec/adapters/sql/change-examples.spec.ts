/**
 * examples/changes/*.yaml run as their comments say, against a live server of their engine: the node
 * file is started as written (only the connection's SQL_* values and the files moved for a run
 * outside the repository root), the table is made by the header's CREATE lines, and the header's
 * INSERT, UPDATE and DELETE reach the consumer through the queue — an insert, an update with
 * before_status and a delete, in that order.
 */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recorded } from '../../integration/queue/helpers.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { startNodeProcess } from '../../reliability/node-process.js';
import { tempDir } from '../../temp.js';
import type { EngineHarness, TestEngine } from './harness.js';
import { engineAvailable, openEngine } from './harness.js';
import { requireServer } from './servers.js';
import { until } from '../../support/wait.js';

const EXAMPLES: Array<[TestEngine, string]> = [
  ['postgres', 'postgres-to-queue.yaml'],
  ['mariadb', 'mariadb-to-queue.yaml'],
];

for (const [engine, file] of EXAMPLES) {
  describe(`examples/changes/${file}`, function () {
    this.timeout(90_000);
    let db: EngineHarness | undefined;
    let node: NodeProcess | undefined;
    after(async () => {
      await node?.kill('SIGKILL');
      await db?.close();
    });

    it("starts as written, and the consumer gets the header's insert, update and delete through the queue, in order", async function () {
      requireServer(this, engineAvailable(engine), engine);
      db = await openEngine(engine);
      const dir = tempDir('hn-change-example-');
      const text = readFileSync(new URL(`../../../examples/changes/${file}`, import.meta.url), 'utf8');
      const statements = [...text.matchAll(/^# {3}((?:CREATE|ALTER|INSERT|UPDATE|DELETE) .*;)$/gm)].map((m) => m[1]!);
      expect(statements.filter((s) => /^(INSERT|UPDATE|DELETE)/.test(s))).to.have.length(3);
      // the connection of the test's server; the files in a directory of the test's
      let yaml = text;
      for (const [k, v] of Object.entries(db.params))
        yaml = yaml.replace(new RegExp(`^(\\s+${k}): .*$`, 'm'), `$1: "${v}"`);
      yaml = yaml.replaceAll('./', `${dir}/`);
      const nodeFile = join(dir, 'node.yaml');
      writeFileSync(nodeFile, yaml);
      for (const s of statements.filter((x) => /^(CREATE|ALTER)/.test(x))) await db.exec(s);
      node = await startNodeProcess(nodeFile, { ready: /node running/ });
      await until(() => /change stream of/.test(node!.output()), 10_000);
      for (const s of statements.filter((x) => /^(INSERT|UPDATE|DELETE)/.test(x))) await db.exec(s);
      const records = (): ReturnType<typeof recorded> => recorded(join(dir, 'order-changes.jsonl'));
      await until(() => records().length >= 3, 30_000);
      const got = records().map((r) => r.message);
      expect(got.map((m) => m.Operation)).to.deep.equal(['insert', 'update', 'delete']);
      expect(got.map((m) => m.Class)).to.deep.equal(['order-change', 'order-change', 'order-change']);
      expect(got[1]!.Data.status).to.deep.equal(['paid']);
      expect(got[1]!.Control.before_status).to.deep.equal(['new']);
      expect(got[0]!.Data.total).to.deep.equal(['9.50']);
    });
  });
}
