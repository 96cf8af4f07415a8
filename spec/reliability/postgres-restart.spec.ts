/**
 * PostgreSQL stopped and started again under SQL load: while the database is down the SQL service
 * answers errors with a reason (502/503/504, never a hang or a crash), and once it is back the same
 * service — no node restart, no actor restart — answers 200 again. A private PostgreSQL
 * (spec/adapters/sql/servers.ts) on a free port; the load is a closed loop of SELECTs.
 */
import { expect } from 'chai';
import { makeMessage } from '../../protocol/message.js';
import { JournalEvent } from '../../supervisors/journal.js';
import type { HiveNode } from '../../node/node.js';
import type { EngineHarness } from '../adapters/sql/harness.js';
import { engineAvailable, openEngine } from '../adapters/sql/harness.js';
import { startTestNode } from '../integration/helpers.js';
import type { Sample } from './load.js';
import { closedLoop, describeCodes, lastSent } from './load.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { sleep } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

const CYCLES = byScale(1, 3);
const UP_MS = byScale(2_000, 10_000);
const DOWN_MS = byScale(2_000, 10_000);
const WORKERS = 8;
/** After the restart, the service must answer 200 again within this. */
const RECOVERY_LIMIT_MS = 15_000;

describe('reliability: PostgreSQL stopped and restarted under SQL load', function () {
  let pg: EngineHarness | undefined;
  let node: HiveNode | undefined;
  after(async () => {
    await node?.stop(2000);
    await pg?.close();
  });

  reliabilityTest(
    `${CYCLES} stop/start cycle(s) of PostgreSQL: errors while it is down, 200 again after, no restart`,
    {
      suite: 'dependencies',
      load: `${WORKERS} workers sending SELECTs back to back through the hive to one sql service`,
      faults: `PostgreSQL fast shutdown for ${DOWN_MS / 1000} s, then started again on the same port, ${CYCLES} time(s)`,
    },
    byScale(90_000, 240_000),
    async (figures, skip) => {
      requireInstalled(
        engineAvailable('postgres'),
        'PostgreSQL is not installed (scripts/sql-servers.sh installs it)',
        skip,
      );
      pg = await openEngine('postgres');
      await pg.exec(`CREATE TABLE items (${pg.serial}, name TEXT NOT NULL)`);
      await pg.exec("INSERT INTO items (name) VALUES ('one')");
      ({ node } = await startTestNode([
        {
          service: 'sql',
          NAME: 'items',
          ...pg.params,
          SQL_STATEMENT: 'select',
          SQL_TABLE: 'items',
          SQL_ACQUIRETIMEOUT: '3s',
          SQL_TIMEOUT: '5s',
        },
      ]));
      const hive = node.hive;
      const server = pg.server!;

      // phases are marked on the load's clock, so each sample can be put in the phase it belongs to
      const marks: Array<{ atMs: number; phase: 'up' | 'down' | 'restarted' }> = [];
      let stop = false;
      const loadBegan = Date.now();
      const load = closedLoop(
        { workers: WORKERS, stop: () => stop },
        async () => (await hive.call('items', makeMessage({}), 30_000)).Code,
      );
      const recoveries: number[] = [];
      for (let c = 0; c < CYCLES; c++) {
        marks.push({ atMs: Date.now() - loadBegan, phase: 'up' });
        await sleep(UP_MS);
        marks.push({ atMs: Date.now() - loadBegan, phase: 'down' });
        await server.stop();
        await sleep(DOWN_MS);
        await server.start();
        const restarted = Date.now();
        marks.push({ atMs: restarted - loadBegan, phase: 'restarted' });
        // recovery: the first 200 answered by the service after the database is back
        while (
          (await hive.call('items', makeMessage({}), 30_000)).Code !== 200 &&
          Date.now() - restarted < RECOVERY_LIMIT_MS
        )
          await sleep(50);
        recoveries.push(Date.now() - restarted);
      }
      await sleep(UP_MS);
      stop = true;
      const samples = await load;

      const phaseOf = (s: Sample): string => [...marks].reverse().find((m) => m.atMs <= s.atMs)?.phase ?? 'up';
      const inPhase = (phase: string): Sample[] => samples.filter((s) => phaseOf(s) === phase);
      // the last second of load: everything must succeed again
      const tail = lastSent(samples, 1000);
      const crashes = node.journal
        .entries()
        .filter((e) => e.event === JournalEvent.Crash || e.event === JournalEvent.Restart);
      Object.assign(figures, {
        'answers while up': describeCodes(inPhase('up')),
        'answers while down': describeCodes(inPhase('down')),
        'answers after the restart': describeCodes(inPhase('restarted')),
        'recovery after each restart (ms)': recoveries.join(', '),
        'actor crashes / restarts': crashes.length,
      });
      expect(describeCodes(inPhase('up')), 'before the first stop').to.match(/^200×\d+$/);
      expect(
        inPhase('down').filter((s) => s.code !== 200).length,
        'errors while the database is down',
      ).to.be.greaterThan(0);
      for (const s of inPhase('down')) expect([200, 502, 503, 504], 'codes while down').to.include(s.code);
      for (const ms of recoveries) expect(ms, 'recovery after a restart (ms)').to.be.below(RECOVERY_LIMIT_MS);
      expect(describeCodes(tail), 'the last second of load').to.match(/^200×\d+$/);
      expect(crashes, 'no actor crashed or restarted').to.deep.equal([]);
    },
  );
});
