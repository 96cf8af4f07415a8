/**
 * The poller against real engines: periodic SELECTs emitted to OUTPUTCHANNEL as Class/Operation of
 * the configuration; SQL_TRACKCOLUMN emitting only new rows and remembering the last value across a
 * restart in SQL_STATEFILE; and (PostgreSQL) the database stopped and restarted while polling — the
 * poller backs off, logs the outage once, and resumes.
 */
import { expect } from 'chai';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness } from './harness.js';
import { TEST_ENGINES, engineAvailable, openEngine } from './harness.js';
import { requireServer } from './servers.js';
import { tempDir } from '../../temp.js';
import { recorded } from '../../integration/queue/helpers.js';
import { sleep, until } from '../../support/wait.js';

for (const engine of TEST_ENGINES) {
  describe(`sql poller on ${engine} (adapter)`, function () {
    this.timeout(60_000);
    let db: EngineHarness;
    let node: HiveNode | undefined;
    let dir: string;
    const received: { at: number; message: Message }[] = [];

    const startPolling = async (extra: Record<string, string | number | boolean>): Promise<() => string> => {
      received.length = 0;
      const started = await startTestNode([
        {
          service: 'sql',
          NAME: 'poller',
          ...db.params,
          SQL_POLLMODE: true,
          SQL_TABLE: 'events',
          SQL_COLUMNS: 'id, kind',
          OUTPUTCHANNEL: 'polled',
          ...extra,
        },
      ]);
      node = started.node;
      await node.hive.listen('polled', (d) => received.push({ at: Date.now(), message: d.message }));
      return started.logs;
    };

    before(async function () {
      requireServer(this, engineAvailable(engine), engine);
      db = await openEngine(engine);
      dir = tempDir('hn-sqlpoll-');
      await db.exec(`CREATE TABLE events (${db.serial}, kind VARCHAR(20) NOT NULL)`);
      await db.exec("INSERT INTO events (kind) VALUES ('a'), ('b')");
    });
    afterEach(async () => {
      await node?.stop(2000);
      node = undefined;
    });
    after(async () => {
      await db?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('emits the configured SELECT every SQL_POLLINTERVAL with SQL_POLLCLASS/SQL_POLLOPERATION, runs never overlapping', async () => {
      await startPolling({
        SQL_POLLINTERVAL: '150ms',
        SQL_POLLCLASS: 'db',
        SQL_POLLOPERATION: 'rows',
        SQL_ORDERBY: 'id',
      });
      await until(() => received.length >= 4, 10_000);
      const first = received[0]!.message;
      expect(first.Class).to.equal('db');
      expect(first.Operation).to.equal('rows');
      expect({ ...first.Data }).to.deep.equal({ id: ['1', '2'], kind: ['a', 'b'], rowcount: ['2'] });
      // one run at a time, one interval apart (timer slack aside)
      for (let i = 1; i < received.length; i++) expect(received[i]!.at - received[i - 1]!.at).to.be.greaterThan(100);
    });

    it('SQL_TRACKCOLUMN emits only new rows and SQL_STATEFILE remembers the last one across a restart', async () => {
      const stateFile = join(dir, 'state.json');
      const params = { SQL_POLLINTERVAL: '100ms', SQL_TRACKCOLUMN: 'id', SQL_STATEFILE: stateFile };
      await startPolling(params);
      await until(() => received.length >= 1, 10_000);
      expect(received[0]!.message.Data.id).to.deep.equal(['1', '2']);
      await db.exec("INSERT INTO events (kind) VALUES ('c')");
      await until(() => received.length >= 2, 10_000);
      expect({ ...received[1]!.message.Data }).to.deep.equal({ id: ['3'], kind: ['c'], rowcount: ['1'] });
      // each batch under a key of the NAME, the column and its last value: the same whoever sends it again
      expect(received.map((m) => m.message.Control['idempotency-key'])).to.deep.equal([
        ['sql-poll:poller:id:2'],
        ['sql-poll:poller:id:3'],
      ]);
      // nothing new: nothing emitted
      await sleep(400);
      expect(received.length).to.equal(2);
      await node!.stop(2000);
      expect(JSON.parse(readFileSync(stateFile, 'utf8'))).to.deep.include({ column: 'id', type: 'number', value: 3 });
      await db.exec("INSERT INTO events (kind) VALUES ('d')");
      await startPolling(params);
      await until(() => received.length >= 1, 10_000);
      await sleep(300);
      expect(received.map((m) => m.message.Data.id)).to.deep.equal([['4']]);
    });

    it('a batch claimed but not recorded (a crash after its emit) is emitted again alone, under the same idempotency-key, and a queue keeps it once', async () => {
      await db.exec(`CREATE TABLE claims (${db.serial}, kind VARCHAR(20) NOT NULL)`);
      await db.exec("INSERT INTO claims (kind) VALUES ('a'), ('b'), ('c')");
      const stateFile = join(dir, 'claims.json');
      const recordFile = join(dir, 'claimed.jsonl');
      const services: Array<{ service: 'sql' | 'queue' | 'echo' } & Record<string, string | number | boolean>> = [
        { service: 'echo', NAME: 'claimed', RecordFile: recordFile },
        {
          service: 'sql',
          NAME: 'claims',
          ...db.params,
          SQL_POLLMODE: true,
          SQL_TABLE: 'claims',
          SQL_COLUMNS: 'id, kind',
          SQL_TRACKCOLUMN: 'id',
          SQL_STATEFILE: stateFile,
          SQL_POLLINTERVAL: '100ms',
          OUTPUTCHANNEL: 'claimq',
        },
        { service: 'queue', NAME: 'claimq', PersistPath: join(dir, 'claimq'), DefaultChannel: 'claimed' },
      ];
      const delivered = (): Message[] => recorded(recordFile).map((r) => r.message);
      const run = async (): Promise<void> => {
        node = (await startTestNode(services)).node;
      };
      await run();
      await until(() => delivered().length >= 1, 10_000);
      expect(delivered()[0]!.Data.id).to.deep.equal(['1', '2', '3']);
      await until(() => (node!.services.find((x) => x.kind === 'queue')!.running.status().size as number) === 0, 5_000);
      await node!.stop(2000);
      node = undefined;
      // as if the poller had died after the queue took the batch and before it recorded it: claimed, not saved
      expect(JSON.parse(readFileSync(stateFile, 'utf8')))
        .to.deep.include({ type: 'number', value: 3 })
        .and.not.have.property('pending');
      writeFileSync(
        stateFile,
        JSON.stringify({
          column: 'id',
          type: 'number',
          value: 1,
          pending: { type: 'number', value: 3 },
          savedAt: new Date().toISOString(),
        }),
      );
      await db.exec("INSERT INTO claims (kind) VALUES ('d')");
      await run();
      await until(() => delivered().length >= 2, 10_000);
      await sleep(500);
      // rows 2 and 3 went out again as their own batch under the batch's key: the queue dropped them
      expect(delivered().map((m) => m.Data.id)).to.deep.equal([['1', '2', '3'], ['4']]);
      const status = node!.services.find((s) => s.kind === 'sql')!.running.status() as {
        poller?: { emitted: number; rowsEmitted: number };
      };
      expect(status.poller).to.deep.include({ emitted: 2, rowsEmitted: 3 });
      expect(JSON.parse(readFileSync(stateFile, 'utf8')))
        .to.deep.include({ type: 'number', value: 4 })
        .and.not.have.property('pending');
    });

    it('poll-mode placeholders and a tracked column that is not selected stop the start', async () => {
      let error: unknown;
      await startTestNode([
        { service: 'sql', ...db.params, SQL_POLLMODE: true, SQL_TABLE: 'events', SQL_WHERE: 'kind = {{ k }}' },
      ]).catch((e: unknown) => (error = e));
      expect(String(error)).to.match(/poll mode: \{\{ k \}\} in SQL_WHERE cannot be filled/);
      error = undefined;
      await startTestNode([
        {
          service: 'sql',
          ...db.params,
          SQL_POLLMODE: true,
          SQL_TABLE: 'events',
          SQL_COLUMNS: 'kind',
          SQL_TRACKCOLUMN: 'id',
        },
      ]).catch((e: unknown) => (error = e));
      expect(String(error)).to.match(/SQL_TRACKCOLUMN: 'id' must be one of the selected columns/);
    });

    if (engine === 'postgres') {
      it('the database stopped and restarted while polling: back-off, one log line per outage, then it resumes', async function () {
        this.timeout(90_000);
        const logs = await startPolling({ SQL_POLLINTERVAL: '100ms', SQL_ORDERBY: 'id' });
        await until(() => received.length >= 2, 10_000);
        await db.server!.stop();
        const stoppedAt = received.length;
        await sleep(2500);
        expect(received.length - stoppedAt).to.be.at.most(1);
        await db.server!.start();
        const restartedAt = received.length;
        await until(() => received.length >= restartedAt + 2, 30_000);
        expect(received[received.length - 1]!.message.Data.kind).to.deep.equal(['a', 'b', 'c', 'd']);
        const text = logs();
        expect(text.match(/poll failed:/g) ?? [], text).to.have.length(1);
        expect(text.match(/poll recovered after \d+ failed attempts?/g) ?? [], text).to.have.length(1);
        expect(text).not.to.contain(db.password);
      });
    }
  });
}
