/**
 * A flow's damaged run store (README, Flows; The queue: "A damaged store"): the start refuses in one
 * line naming `hivenode flow salvage <dir>`; `hivenode flow salvage` and `StoreRecovery: salvage`
 * recover the runs of the undamaged pages, which then go on at their step. The salvage is journaled.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { journalDetails } from '../../../node/console/pages/journal.js';
import type { HiveNode } from '../../../node/node.js';
import { ConfigError } from '../../../protocol/errors.js';
import { makeMessage } from '../../../protocol/message.js';
import { JournalEvent } from '../../../supervisors/journal.js';
import { recorded } from '../queue/helpers.js';
import { flowDir, flowNode, recordingEcho, stopFlowNodes } from './helpers.js';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';
import { sqliteOnly } from '../queue-store.js';
import { sleep } from '../../support/wait.js';

const RUNS = 120;
const DEF = {
  steps: [
    { name: 'first', call: 'db', data: { step: 'first', n: '{{index .Input.Data.n 0}}' } },
    { name: 'pause', wait: '5s' },
    { name: 'second', call: 'db', data: { step: 'second', n: '{{index .Input.Data.n 0}}' } },
  ],
};

/** Overwrites two leaf pages of the runs' table (SQLite's dbstat) with noise; the runs they held. */
async function damageRuns(file: string): Promise<number> {
  const leaves = await new Promise<Array<{ page: number; rows: number }>>((resolve, reject) => {
    const db = new sqlite3.Database(`file:${file}?immutable=1`, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI, (e) => {
      if (e) return reject(e);
      db.all(
        "SELECT pageno AS page, ncell AS rows FROM dbstat WHERE name = 'entries' AND pagetype = 'leaf' ORDER BY pageno",
        (err, rows) => db.close(() => (err ? reject(err) : resolve(rows as never))),
      );
    });
  });
  expect(leaves.length).to.be.greaterThan(4);
  const hit = [leaves[1]!, leaves[Math.floor(leaves.length / 2)]!];
  const fd = openSync(file, 'r+');
  for (const { page } of hit) writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, (page - 1) * 4096);
  closeSync(fd);
  return hit.reduce((n, p) => n + p.rows, 0);
}

describe('a damaged flow store', function () {
  this.timeout(60_000);
  let dir: string;
  let node: HiveNode;
  beforeEach(() => (dir = flowDir()));
  afterEach(stopFlowNodes);

  /**
   * RUNS runs started, each past its first step and waiting, then the node stopped and two pages of the
   * runs overwritten. The wait is long enough that no run reaches its second step before the stop on a
   * busy machine (1.5 s was not: starting 120 runs took longer, and a run done before the damage counted).
   */
  async function damagedRuns(): Promise<{ storeDir: string; lost: number }> {
    ({ node } = await flowNode(dir, DEF, {}, [recordingEcho(dir, 'db')]));
    for (let n = 0; n < RUNS; n++)
      expect((await node.hive.execute('flow', makeMessage({ Data: { n: [String(n)] } }), 5000)).Code).to.equal(200);
    const deadline = Date.now() + 10_000;
    while (recorded(join(dir, 'db.jsonl')).length < RUNS && Date.now() < deadline) await sleep(20);
    await node.stop(2000);
    const storeDir = join(dir, 'store', 'flow');
    return { storeDir, lost: await damageRuns(join(storeDir, 'queue.db')) };
  }

  /** The runs whose second step came, waited for (bounded) until `expected` did. */
  async function secondSteps(expected: number): Promise<Set<string>> {
    const seconds = (): Set<string> =>
      new Set(
        recorded(join(dir, 'db.jsonl'))
          .filter((r) => r.message.Data.step?.[0] === 'second')
          .map((r) => r.message.Data.n![0]!),
      );
    const deadline = Date.now() + 15_000;
    while (seconds().size < expected && Date.now() < deadline) await sleep(50);
    await sleep(200);
    return seconds();
  }

  it("refuses the start in one line naming 'hivenode flow salvage <dir>'; the command recovers the other runs, which go on at their step", async function () {
    sqliteOnly(this, 'a file of its own');
    const { storeDir, lost } = await damagedRuns();
    let refused: unknown;
    await flowNode(dir, DEF, {}, [recordingEcho(dir, 'db')]).catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(ConfigError);
    expect((refused as Error).message)
      .to.contain('the flow store')
      .and.to.contain(`hivenode flow salvage ${storeDir}`)
      .and.not.contain('\n');

    const r = spawnSync(process.execPath, [...HIVENODE_ARGS, 'flow', 'salvage', storeDir], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout)
      .to.contain(`${RUNS - lost} rows recovered`)
      .and.to.contain(`${lost} rows lost`);

    ({ node } = await flowNode(dir, DEF, {}, [recordingEcho(dir, 'db')]));
    expect((await secondSteps(RUNS - lost)).size).to.equal(RUNS - lost);
  });

  it('StoreRecovery: salvage salvages at the start, journals it with its counts, and the recovered runs go on', async function () {
    sqliteOnly(this, 'a file of its own');
    const { storeDir, lost } = await damagedRuns();
    let logs: () => string;
    ({ node, logs } = await flowNode(dir, DEF, { StoreRecovery: 'salvage' }, [recordingEcho(dir, 'db')]));
    const journaled = node.journal.entries().filter((e) => e.event === JournalEvent.Salvage);
    expect(journaled).to.have.length(1);
    expect(journaled[0]!.path).to.equal('/node/flow');
    expect(journaled[0]!.action)
      .to.contain(`entries ${RUNS - lost} recovered, ${lost} lost`)
      .and.to.contain('queue.db.damaged-');
    // the console's journal line shows the counts
    expect(String(journalDetails(journaled[0]!))).to.contain(`entries ${RUNS - lost} recovered`);
    expect(logs()).to.match(/WARN.*the flow store .* was salvaged: entries/);
    expect(readdirSync(storeDir).filter((f) => f.startsWith('queue.db.damaged-'))).to.have.length(1);
    expect((await secondSteps(RUNS - lost)).size).to.equal(RUNS - lost);
  });
});
