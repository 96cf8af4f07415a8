/**
 * One active SQL poller on a NATS hive (actors/sql/poller-lease.ts): three node processes run a
 * tracking poller of the same NAME over one SQLite table while rows are inserted; the active one is
 * SIGKILLed again and again (and started again). Every inserted row must reach the recorder; a row
 * emitted twice can only come from the batch a killed poller had emitted but not yet recorded in the
 * shared mark (the moment between the listener's acknowledgement and the bucket write), counted.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { recorded } from '../integration/queue/helpers.js';
import { natsServer, natsServerAvailable } from '../adapters/nats/server.js';
import { tempDir } from '../temp.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess } from './node-process.js';
import { reliabilityTest, requireInstalled } from './record.js';
import { byScale } from './scale.js';

const KILLS = byScale(3, 5);
const LEASE_MS = 2_000;
const INSERT_EVERY_MS = 20;
const NODE_READY = /node running/;
const ACTIVE = /active poller now/g;

function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (e) => (e ? reject(e) : resolve())));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('reliability: one active SQL poller on a NATS hive', () => {
  reliabilityTest(
    'SIGKILL the active poller again and again: another takes over, no row skipped',
    { suite: 'dependencies', load: `3 node processes polling one SQLite table (SQL_TRACKCOLUMN, every 200 ms, SQL_POLLLEASE 2 s) while a row is inserted every ${INSERT_EVERY_MS} ms`, faults: `${KILLS} × SIGKILL of the active poller's node, each started again` },
    180_000,
    async (figures, skip) => {
      requireInstalled(natsServerAvailable(), 'nats-server is not installed (scripts/test.sh installs it)', skip);
      const server = await natsServer();
      const dir = tempDir('hn-takeover-');
      const dbFile = join(dir, 'events.db');
      const recordFile = join(dir, 'rows.jsonl');
      writeFileSync(join(dir, 'token'), `${server.token}\n`);
      const db = new sqlite3.Database(dbFile);
      db.configure('busyTimeout', 5_000);
      await run(db, 'PRAGMA journal_mode=WAL');
      await run(db, 'CREATE TABLE events (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const nodeFile = (name: string, service: string): string => {
        const file = join(dir, `${name}.yaml`);
        writeFileSync(file, [`hive: {SERVERHOST: "${server.url}", SERVERAUTH: "file://${join(dir, 'token')}"}`, 'services:', `  - ${service}`, ''].join('\n'));
        return file;
      };
      const pollerFile = nodeFile(
        'poller',
        `{service: sql, NAME: events, SQL_POLLMODE: true, SQL_ENGINE: sqlite, SQL_DATABASE: "${dbFile}", SQL_TABLE: events, SQL_COLUMNS: "id,body", SQL_TRACKCOLUMN: id, SQL_POLLINTERVAL: 200ms, SQL_POLLLEASE: ${LEASE_MS}ms, OUTPUTCHANNEL: rows}`,
      );
      const nodes: NodeProcess[] = [];
      let inserting = true;
      let inserted = 0;
      try {
        nodes.push(await startNodeProcess(nodeFile('recorder', `{service: echo, NAME: recorder, INPUTCHANNEL: rows, RecordFile: "${recordFile}"}`), { ready: NODE_READY }));
        const pollers: NodeProcess[] = [];
        for (let i = 0; i < 3; i++) pollers.push(await startNodeProcess(pollerFile, { ready: NODE_READY }));
        nodes.push(...pollers);
        const inserter = (async () => {
          while (inserting) {
            inserted++;
            await run(db, 'INSERT INTO events (id, body) VALUES (?, ?)', [inserted, `row ${inserted}`]);
            await sleep(INSERT_EVERY_MS);
          }
        })();
        const activations = (p: NodeProcess): number => p.output().match(ACTIVE)?.length ?? 0;
        /** The poller that became active last and is still alive, once one is. */
        const active = async (deadlineMs: number): Promise<NodeProcess> => {
          const until = Date.now() + deadlineMs;
          for (;;) {
            const live = pollers.filter((p) => p.child.exitCode === null && p.child.signalCode === null && activations(p) > 0);
            const standing = live.filter((p) => /standing by|active poller now/.test(p.output()));
            const holder = standing.find((p) => p.output().lastIndexOf('active poller now') > p.output().lastIndexOf('no longer the active poller'));
            if (holder) return holder;
            if (Date.now() > until) throw new Error(`no active poller within ${deadlineMs} ms`);
            await sleep(50);
          }
        };
        const takeovers: number[] = [];
        let holder = await active(10_000);
        for (let k = 0; k < KILLS; k++) {
          await sleep(1_000 + Math.random() * 1_000);
          const before = new Map(pollers.map((p) => [p, activations(p)] as const));
          const killedAt = Date.now();
          await holder.kill('SIGKILL');
          const index = pollers.indexOf(holder);
          // the next holder: a live poller with one activation more than before the kill
          const until = Date.now() + 4 * LEASE_MS;
          let next: NodeProcess | undefined;
          while (!next && Date.now() < until) {
            next = pollers.find((p) => p !== holder && p.child.exitCode === null && activations(p) > (before.get(p) ?? 0));
            if (!next) await sleep(20);
          }
          if (!next) throw new Error(`no poller took over within ${4 * LEASE_MS} ms of the kill`);
          takeovers.push(Date.now() - killedAt);
          pollers[index] = await startNodeProcess(pollerFile, { ready: NODE_READY });
          nodes.push(pollers[index]!);
          holder = next;
        }
        inserting = false;
        await inserter;
        const until = Date.now() + 20_000;
        const ids = (): number[] => recorded(recordFile).flatMap((r) => (r.message.Data.id ?? []).map(Number));
        while (new Set(ids()).size < inserted && Date.now() < until) await sleep(100);
        const seen = ids();
        const distinct = new Set(seen);
        const missing = Array.from({ length: inserted }, (_, i) => i + 1).filter((id) => !distinct.has(id));
        figures['rows inserted'] = inserted;
        figures['rows missing'] = missing.length;
        figures['rows emitted twice'] = seen.length - distinct.size;
        figures['kills'] = KILLS;
        figures['takeover after a kill (ms, max)'] = Math.max(...takeovers);
        figures['takeover after a kill (ms, median)'] = takeovers.sort((a, b) => a - b)[Math.floor(takeovers.length / 2)]!;
        figures['lease (ms)'] = LEASE_MS;
        expect(missing, `rows never emitted: ${missing.slice(0, 10).join(', ')}`).to.deep.equal([]);
        expect(Math.max(...takeovers)).to.be.below(2 * LEASE_MS + 1_000);
        // at most the one batch in flight at each kill (a poll every 200 ms reads about 10 rows)
        expect(seen.length - distinct.size).to.be.at.most(KILLS * 20);
      } finally {
        inserting = false;
        await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
        await new Promise<void>((r) => db.close(() => r()));
        await server.stop();
      }
    },
  );
});
