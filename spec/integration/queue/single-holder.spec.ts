/**
 * One queue store, one holder (issue #19: two nodes opened one store and both delivered the same
 * entry). Real processes: a second node on the same PersistPath and NAME is refused at start (exit 2,
 * one line naming the store and the holder); after the holder is SIGKILLed its restart takes the
 * stale lock over and loads the entries. In one process: a second queue service on a store is
 * refused too, and a start that fails after the store was opened lets it go.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StoreHeldError } from '../../../protocol/errors.js';
import type { HiveNode } from '../../../node/node.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { runNodeToExit, startNodeProcess, writeNodeFile } from '../../reliability/node-process.js';
import { QUEUE_STORE } from '../queue-store.js';
import { startTestNode } from '../helpers.js';
import { queueCall, tempDir } from './helpers.js';
import { until } from '../../support/wait.js';

describe('queue store: one holder at a time', function () {
  before(function () {
    if (QUEUE_STORE === 'jetstream') this.skip(); // SQLite store only: a lock file; on JetStream one node holds a queue by its lease and fenced writes: spec/adapters/nats/jetstream-queue.spec.ts
  });
  this.timeout(90_000);

  describe('between processes', () => {
    let first: NodeProcess | undefined;
    let restarted: NodeProcess | undefined;
    after(async () => {
      await first?.kill();
      await restarted?.kill();
    });

    it('a second node on the same store exits 2 naming the store and the holder; after a SIGKILL the restart takes the store over', async () => {
      const dir = tempDir('hn-holder-');
      const store = join(dir, 'store');
      const file = writeNodeFile(dir, 'node', [
        '{service: echo, NAME: target}',
        `{service: queue, NAME: q, PersistPath: "${store}", DefaultChannel: target, StartPaused: true}`,
        '{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: q, ControlAllowList: command}',
      ]);
      first = await startNodeProcess(file);
      const added = await fetch(`http://127.0.0.1:${first.port}/queue/action`, {
        method: 'POST',
        body: JSON.stringify({ item: ['only once'] }),
      });
      expect(((await added.json()) as { Code: number }).Code).to.equal(200);

      const second = await runNodeToExit(file);
      expect(second.code, second.stdout + second.stderr).to.equal(2);
      const lines = second.stderr.split('\n').filter((l) => l.startsWith('hivenode: '));
      expect(lines, second.stderr).to.have.length(1);
      expect(lines[0]).to.match(
        new RegExp(
          `^hivenode: the queue store ${join(store, 'q')} is in use by pid ${first.child.pid} on host ${hostname()} .*stop that node first`,
        ),
      );
      expect(second.stderr, 'no stack trace').not.to.match(/^\s+at /m);
      expect(second.stdout, 'the second node never loaded the store').not.to.contain('queue loaded');

      await first.kill('SIGKILL');
      const lock = join(store, 'q', 'queue.lock');
      expect(
        (JSON.parse(readFileSync(lock, 'utf8')) as { pid: number }).pid,
        'SIGKILL leaves the lock behind',
      ).to.equal(first.child.pid);
      first = undefined;
      restarted = await startNodeProcess(file);
      // the queue loads its store with its first message, a moment after the node is ready
      const started = restarted;
      await until(() => started.output().includes('queue loaded 1 entry'), 10_000).catch(() => undefined);
      expect(restarted.output()).to.contain('queue loaded 1 entry');
      expect((JSON.parse(readFileSync(lock, 'utf8')) as { pid: number }).pid).to.equal(restarted.child.pid);
      await restarted.kill('SIGTERM');
      restarted = undefined;
      expect(existsSync(lock), 'a drained node releases the lock').to.equal(false);
    });
  });

  describe('in one process', () => {
    const nodes: HiveNode[] = [];
    afterEach(async () => {
      for (const n of nodes.splice(0)) await n.stop(2000);
    });

    it('a second queue service on the same store is refused; the first keeps its entries and the store is free once it stops', async () => {
      const store = tempDir('hn-holder-');
      const { node } = await startTestNode([{ service: 'queue', NAME: 'q', PersistPath: store, StartPaused: true }]);
      nodes.push(node);
      expect((await queueCall(node, {}, { item: ['a'] }, 'q')).Code).to.equal(200);
      const refused = await startTestNode([
        { service: 'queue', NAME: 'q', PersistPath: store, StartPaused: true },
      ]).then(
        (r) => (nodes.push(r.node), undefined),
        (e: unknown) => e,
      );
      expect(refused).to.be.instanceOf(StoreHeldError);
      expect((refused as Error).message)
        .to.contain(join(store, 'q'))
        .and.to.contain(`pid ${process.pid} on host ${hostname()}`);
      expect((await queueCall(node, { command: ['status'] }, {}, 'q')).Data.queuesize).to.deep.equal(['1']);

      await nodes.shift()!.stop(2000);
      const { node: next, logs } = await startTestNode([
        { service: 'queue', NAME: 'q', PersistPath: store, StartPaused: true },
      ]);
      nodes.push(next);
      expect((await queueCall(next, { command: ['status'] }, {}, 'q')).Data.queuesize).to.deep.equal(['1']);
      await until(() => logs().includes('queue loaded 1 entry'), 10_000).catch(() => undefined);
      expect(logs()).to.contain('queue loaded 1 entry');
    });

    it('a queue whose start fails after its store was opened lets the store go', async () => {
      const store = tempDir('hn-holder-');
      // a channel name the hive refuses: the listen fails after the store is open
      const failed = await startTestNode([
        { service: 'queue', NAME: 'q', INPUTCHANNEL: 'not.a.channel', PersistPath: store },
      ]).then(
        (r) => (nodes.push(r.node), undefined),
        (e: unknown) => e,
      );
      expect(failed).to.be.instanceOf(Error);
      expect(existsSync(join(store, 'q', 'queue.lock')), 'the lock is released').to.equal(false);
      const { node } = await startTestNode([{ service: 'queue', NAME: 'q', PersistPath: store }]);
      nodes.push(node);
    });
  });
});
