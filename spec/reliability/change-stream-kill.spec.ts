/**
 * A PostgreSQL change stream (SQL_CHANGES; README, Change streams) under faults: a client commits
 * single-row inserts into two tables while the node reading the slot is SIGKILLed again and again
 * (and started again) and PostgreSQL is restarted once. The node records
 * every change it hands over (an echo service with RecordFile, acknowledging each after writing it).
 * Every change must be recorded, each table's changes in commit order (their first appearances), and
 * the ones recorded twice — handed over but not yet confirmed when the node died — are counted.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineHarness } from '../adapters/sql/harness.js';
import { engineAvailable, openEngine } from '../adapters/sql/harness.js';
import { tempDir } from '../temp.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import type { Outcome } from './change-stream-run.js';
import { awaitRecorded, createTables, flowParams, outcome, outcomeFigures, startWriter } from './change-stream-run.js';
import { sleep } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

const CHANGES = byScale(1_500, 10_000);
const KILLS = 5;
const WRITE_EVERY_MS = byScale(4, 2);
/** The longest wait for the last node to take every change after the writes (it takes under a second when sound). */
const CATCH_UP_BOUND_MS = 30_000;
const TABLES = ['public.ta', 'public.tb'];

interface Run {
  changes: number;
  everyMs: number;
  kills: number;
  /** Restart PostgreSQL under the reading node after this kill (none when undefined). */
  restartAfterKill?: number;
  /** Rows per transaction (1: single-row transactions into the two tables in turn). */
  rowsPerTx: number;
  env: NodeJS.ProcessEnv;
  /** The longest wait for the last node to take every change after the writes. */
  catchUpBoundMs: number;
}

async function killRun(
  db: EngineHarness,
  name: string,
  run: Run,
): Promise<{ written: number; result: Outcome; catchUpMs: number; restartStopMs?: number }> {
  const dir = tempDir('hn-cdc-kill-');
  const recordFile = join(dir, 'changes.jsonl');
  const file = join(dir, 'node.yaml');
  const params = flowParams({ ...db.params, SQL_CHANGES: 'true', SQL_TABLE: 'ta, tb', OUTPUTCHANNEL: 'recorded' });
  writeFileSync(
    file,
    [
      'services:',
      `  - {service: sql, NAME: ${name}, ${params}}`,
      `  - {service: echo, NAME: recorder, INPUTCHANNEL: recorded, RecordFile: "${recordFile}"}`,
      '',
    ].join('\n'),
  );
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
    writer = startWriter(db, run.changes, run.everyMs, run.rowsPerTx);
    const every = ((run.changes / run.rowsPerTx) * run.everyMs) / (run.kills + 2);
    for (let k = 0; k < run.kills; k++) {
      await sleep(every);
      await node.kill('SIGKILL');
      if (k === run.restartAfterKill) {
        // while no node reads (a restart under the reading node is spec/adapters/sql/changes.spec.ts's)
        const began = Date.now();
        await db.server!.stop();
        restartStopMs = Date.now() - began;
        await db.server!.start();
      }
      node = await start();
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
    'every committed change is emitted, each table in commit order, duplicates counted',
    {
      suite: 'dependencies',
      load: `${CHANGES} single-row transactions into two tables, one every ${WRITE_EVERY_MS} ms`,
      faults: `${KILLS} × SIGKILL of the reading node (started again), PostgreSQL restarted once`,
    },
    300_000,
    async (figures, skip) => {
      requireInstalled(
        engineAvailable('postgres'),
        'PostgreSQL is not installed (scripts/sql-servers.sh installs it)',
        skip,
      );
      const db = await openEngine('postgres');
      try {
        await createTables(db);
        const sound = await killRun(db, 'cdc', {
          changes: CHANGES,
          everyMs: WRITE_EVERY_MS,
          kills: KILLS,
          restartAfterKill: 2,
          rowsPerTx: 1,
          env: {},
          catchUpBoundMs: CATCH_UP_BOUND_MS,
        });
        figures['catching up after the writes (ms)'] = sound.catchUpMs;
        figures['PostgreSQL fast shutdown (ms)'] = sound.restartStopMs ?? NaN;
        outcomeFigures(figures, sound.written, sound.result);
        if (sound.result.missing.length > 0) {
          // committed and in the table (the stream skipped them), or not there (the writer's count was wrong)
          const ids = sound.result.missing.slice(0, 1_000).join(', ');
          figures['missing changes present in the tables'] = (
            await db.rows<{ n: string }>(
              `SELECT COUNT(*) AS n FROM (SELECT id FROM ta WHERE id IN (${ids}) UNION ALL SELECT id FROM tb WHERE id IN (${ids})) x`,
            )
          )[0]!.n;
        }
        figures['kills'] = KILLS;
        figures['database restarts'] = 1;
        expect(sound.written).to.equal(CHANGES);
        expect(
          sound.result.missing,
          `changes never emitted: ${sound.result.missing.slice(0, 10).join(', ')}`,
        ).to.deep.equal([]);
        expect(sound.result.outOfOrder, 'tables whose changes came out of commit order').to.deep.equal([]);
      } finally {
        await db.close();
      }
    },
  );
});
