/**
 * A PostgreSQL change stream (SQL_CHANGES; README, Change streams) under faults: a client commits
 * single-row inserts into two tables while the node reading the slot is SIGKILLed again and again
 * (and started again) and PostgreSQL is restarted once under the reading node. The node records
 * every change it hands over (an echo service with RecordFile, acknowledging each after writing it).
 * Every change must be recorded, each table's changes in commit order (their first appearances), and
 * the ones recorded twice — handed over but not yet confirmed when the node died — are counted. The
 * same kills on a build that confirms a position as it arrives, before the hive acknowledged
 * (HIVENODE_TEST_BROKEN_EARLY_CONFIRM, actors/sql/change-run.ts), must lose changes, or the row
 * could not catch a reader that does.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineHarness } from '../adapters/sql/harness.js';
import { engineAvailable, openEngine } from '../adapters/sql/harness.js';
import { tempDir } from '../temp.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess } from './node-process.js';
import { reliabilityTest, requireInstalled } from './record.js';
import { byScale } from './scale.js';
import type { Outcome } from './change-stream-run.js';
import { awaitRecorded, createTables, flowParams, outcome, outcomeFigures, startWriter } from './change-stream-run.js';

const CHANGES = byScale(1_500, 10_000);
const KILLS = 5;
const WRITE_EVERY_MS = byScale(4, 2);
/** The longest wait for the last node to take every change after the writes (it takes under a second when sound). */
const CATCH_UP_BOUND_MS = 30_000;
const TABLES = ['public.ta', 'public.tb'];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Run {
  changes: number;
  everyMs: number;
  kills: number;
  /** Restart PostgreSQL under the reading node after this kill (none when undefined). */
  restartAfterKill?: number;
  /** The recorder's Delay: a slow hive, so that changes wait in the reader when it is killed. */
  delayMs: number;
  env: NodeJS.ProcessEnv;
  /** The longest wait for the last node to take every change after the writes. */
  catchUpBoundMs: number;
}

async function killRun(db: EngineHarness, name: string, run: Run): Promise<{ written: number; result: Outcome; catchUpMs: number; restartStopMs?: number }> {
  const dir = tempDir('hn-cdc-kill-');
  const recordFile = join(dir, 'changes.jsonl');
  const file = join(dir, 'node.yaml');
  const params = flowParams({ ...db.params, SQL_CHANGES: 'true', SQL_TABLE: 'ta, tb', OUTPUTCHANNEL: 'recorded' });
  writeFileSync(file, ['services:', `  - {service: sql, NAME: ${name}, ${params}}`, `  - {service: echo, NAME: recorder, INPUTCHANNEL: recorded, RecordFile: "${recordFile}", Delay: ${run.delayMs}}`, ''].join('\n'));
  const nodes: NodeProcess[] = [];
  const start = async (): Promise<NodeProcess> => {
    const n = await startNodeProcess(file, { ready: /node running/, env: run.env });
    nodes.push(n);
    return n;
  };
  let writer: ReturnType<typeof startWriter> | undefined;
  let restartStopMs: number | undefined;
  try {
    // the first start creates the slot: the changes are written after it
    let node = await start();
    writer = startWriter(db, run.changes, run.everyMs);
    const every = (run.changes * run.everyMs) / (run.kills + 2);
    for (let k = 0; k < run.kills; k++) {
      await sleep(every);
      await node.kill('SIGKILL');
      node = await start();
      if (k === run.restartAfterKill) {
        // under the reading node: a fast shutdown must not wait on it, and it reads on once the server is back
        await sleep(every / 2);
        const began = Date.now();
        await db.server!.stop();
        restartStopMs = Date.now() - began;
        await db.server!.start();
      }
    }
    await writer.done;
    const written = writer.written();
    const catchUpMs = await awaitRecorded(recordFile, written, run.catchUpBoundMs);
    return { written, result: outcome(recordFile, written, TABLES), catchUpMs, restartStopMs };
  } finally {
    await writer?.stop();
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
  }
}

describe('reliability: a PostgreSQL change stream under SIGKILL and a database restart', () => {
  reliabilityTest(
    'every committed change is emitted, each table in commit order, duplicates counted; a build confirming before the hive acknowledged loses some',
    {
      suite: 'dependencies',
      load: `${CHANGES} single-row transactions into two tables, one every ${WRITE_EVERY_MS} ms`,
      faults: `${KILLS} × SIGKILL of the reading node (started again), PostgreSQL restarted once under the reading node; then 3 kills on the build that confirms as changes arrive (400 changes, a hive taking 10 ms each)`,
    },
    300_000,
    async (figures, skip) => {
      requireInstalled(engineAvailable('postgres'), 'PostgreSQL is not installed (scripts/sql-servers.sh installs it)', skip);
      const db = await openEngine('postgres');
      try {
        await createTables(db);
        const sound = await killRun(db, 'cdc', { changes: CHANGES, everyMs: WRITE_EVERY_MS, kills: KILLS, restartAfterKill: 2, delayMs: 0, env: {}, catchUpBoundMs: CATCH_UP_BOUND_MS });
        figures['catching up after the writes (ms)'] = sound.catchUpMs;
        figures['PostgreSQL fast shutdown under the reader (ms)'] = sound.restartStopMs ?? NaN;
        outcomeFigures(figures, sound.written, sound.result);
        figures['kills'] = KILLS;
        figures['database restarts'] = 1;
        expect(sound.written).to.equal(CHANGES);
        expect(sound.result.missing, `changes never emitted: ${sound.result.missing.slice(0, 10).join(', ')}`).to.deep.equal([]);
        expect(sound.result.outOfOrder, 'tables whose changes came out of commit order').to.deep.equal([]);
        expect(sound.restartStopMs, 'a fast shutdown of PostgreSQL held by the reader (ms)').to.be.below(10_000);
        // the deliberately broken build, on a slot of its own from an empty start: the same kills must lose changes
        await db.exec('TRUNCATE ta, tb');
        const broken = await killRun(db, 'cdc-broken', { changes: 400, everyMs: 3, kills: 3, delayMs: 10, env: { HIVENODE_TEST_BROKEN_EARLY_CONFIRM: '1' }, catchUpBoundMs: 10_000 });
        figures['changes missing on the build confirming as they arrive (broken build, 3 kills)'] = broken.result.missing.length;
        expect(broken.result.missing.length, 'the build that confirms before the hive acknowledged lost nothing: the kills do not test what they claim').to.be.greaterThan(0);
      } finally {
        await db.close();
      }
    },
  );
});
