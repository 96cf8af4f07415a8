/**
 * A PostgreSQL change stream (SQL_CHANGES; README, Change streams) under faults: a client commits
 * single-row inserts into two tables while the node reading the slot is SIGKILLed again and again
 * (and started again) and PostgreSQL is restarted once. The node records every change it hands over
 * (an echo service with RecordFile, acknowledging each after writing it). Every change must be
 * recorded, each table's changes in commit order (their first appearances), and the ones recorded
 * twice — handed over but not yet confirmed when the node died — are counted.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recorded } from '../integration/queue/helpers.js';
import { engineAvailable, openEngine } from '../adapters/sql/harness.js';
import { tempDir } from '../temp.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { sleep } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

const CHANGES = byScale(1_500, 10_000);
const KILLS = 5;
const WRITE_EVERY_MS = byScale(4, 2);

describe('reliability: a PostgreSQL change stream under SIGKILL and a database restart', () => {
  reliabilityTest(
    'every committed change is emitted, each table in commit order, duplicates counted',
    { suite: 'dependencies', load: `${CHANGES} single-row transactions into two tables, one every ${WRITE_EVERY_MS} ms`, faults: `${KILLS} × SIGKILL of the reading node (started again), PostgreSQL restarted once` },
    300_000,
    async (figures, skip) => {
      requireInstalled(engineAvailable('postgres'), 'PostgreSQL is not installed (scripts/sql-servers.sh installs it)', skip);
      const db = await openEngine('postgres');
      const dir = tempDir('hn-cdc-kill-');
      const recordFile = join(dir, 'changes.jsonl');
      const nodes: NodeProcess[] = [];
      let written = 0;
      let writing = true;
      let writer: Promise<void> | undefined;
      try {
        await db.exec('CREATE TABLE ta (id INT PRIMARY KEY)');
        await db.exec('CREATE TABLE tb (id INT PRIMARY KEY)');
        const params = Object.entries({ ...db.params, SQL_CHANGES: 'true', SQL_TABLE: 'ta, tb', OUTPUTCHANNEL: 'recorded' })
          .map(([k, v]) => `${k}: "${v}"`)
          .join(', ');
        const file = join(dir, 'node.yaml');
        writeFileSync(file, ['services:', `  - {service: sql, NAME: cdc, ${params}}`, `  - {service: echo, NAME: recorder, INPUTCHANNEL: recorded, RecordFile: "${recordFile}"}`, ''].join('\n'));
        const start = async (): Promise<NodeProcess> => {
          const n = await startNodeProcess(file, { ready: /node running/ });
          nodes.push(n);
          return n;
        };
        let node = await start();
        // one transaction per change; a write cut by the restart is tried again (a duplicate key means it committed)
        writer = (async () => {
          while (writing && written < CHANGES) {
            const id = written + 1;
            try {
              await db.exec(`INSERT INTO ${id % 2 === 0 ? 'ta' : 'tb'} (id) VALUES (${id})`);
              written = id;
            } catch (e) {
              if (/duplicate key/.test(String(e))) written = id;
              else await sleep(100);
            }
            await sleep(WRITE_EVERY_MS);
          }
        })();
        const every = (CHANGES * WRITE_EVERY_MS) / (KILLS + 2);
        for (let k = 0; k < KILLS; k++) {
          await sleep(every);
          await node.kill('SIGKILL');
          if (k === 2) {
            await db.server!.stop();
            await db.server!.start();
          }
          node = await start();
        }
        await writer;
        const ids = (): Array<{ id: number; table: string }> => recorded(recordFile).map((r) => ({ id: Number(r.message.Data.id?.[0]), table: r.message.Control.table?.[0] ?? '' }));
        // the last node catches up (after a kill it may wait out the old connection's hold on the slot, with back-off)
        const caughtUp = Date.now();
        const deadline = caughtUp + 120_000;
        while (new Set(ids().map((x) => x.id)).size < written && Date.now() < deadline) await sleep(200);
        figures['catching up after the writes (ms)'] = Date.now() - caughtUp;
        const seen = ids();
        const distinct = new Set(seen.map((x) => x.id));
        const missing = Array.from({ length: written }, (_, i) => i + 1).filter((id) => !distinct.has(id));
        // per table: the order of first appearances is the commit order (ids rise with it)
        const outOfOrder = ['public.ta', 'public.tb'].filter((t) => {
          const firsts: number[] = [];
          const had = new Set<number>();
          for (const x of seen) {
            if (x.table !== t || had.has(x.id)) continue;
            had.add(x.id);
            firsts.push(x.id);
          }
          return firsts.some((id, i) => i > 0 && id < firsts[i - 1]!);
        });
        figures['changes committed'] = written;
        figures['changes missing'] = missing.length;
        figures['changes recorded twice'] = seen.length - distinct.size;
        figures['tables out of commit order'] = outOfOrder.length;
        figures['kills'] = KILLS;
        figures['database restarts'] = 1;
        expect(written).to.equal(CHANGES);
        expect(missing, `changes never emitted: ${missing.slice(0, 10).join(', ')}`).to.deep.equal([]);
        expect(outOfOrder, 'tables whose changes came out of commit order').to.deep.equal([]);
      } finally {
        writing = false;
        await writer?.catch(() => undefined);
        await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
        await db.close();
      }
    },
  );
});
