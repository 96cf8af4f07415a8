/**
 * A run's durability across restarts on the same store (docs/ARCHITECTURE.md, The life of a run): a
 * wait survives a restart and ends on time, a retry's pause too, a run stopped between steps goes on
 * at its step, and a gateway's Execution hands a run over and answers its key.
 */
import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage } from '../../../protocol/message.js';
import { recorded } from '../queue/helpers.js';
import { sqliteOnly } from '../queue-store.js';
import { flowCommand, flowDir, stopFlowNodes, flowNode, recordingEcho, startRun } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('flow durability', function () {
  this.timeout(30_000);
  let node: HiveNode;
  let dir: string;
  beforeEach(() => (dir = flowDir()));
  afterEach(stopFlowNodes);

  it('a wait (duration) survives a restart and ends at its time, not again from the start', async () => {
    const def = {
      steps: [
        { name: 'before', call: 'db', data: { at: 'before' } },
        { name: 'pause', wait: '1500ms' },
        { name: 'after', call: 'db', data: { at: 'after' } },
      ],
    };
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db')]));
    const t0 = Date.now();
    const key = (await node.hive.execute('flow', makeMessage(), 5000)).Data.key!;
    await until(() => recorded(join(dir, 'db.jsonl')).length === 1);
    await sleep(100);
    const fetched = await flowCommand(node, 'fetch', { key });
    expect(fetched.Data.state).to.deep.equal(['waiting']);
    expect(fetched.Data.step).to.deep.equal(['pause']);
    await node.stop(2000);
    await sleep(300);
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db')]));
    await until(() => recorded(join(dir, 'db.jsonl')).length === 2, 5000);
    const elapsed = Date.parse(recorded(join(dir, 'db.jsonl'))[1]!.time) - t0;
    expect(elapsed).to.be.within(1400, 4000);
    expect(recorded(join(dir, 'db.jsonl')).map((r) => r.message.Data.at![0])).to.deep.equal(['before', 'after']);
    await sleep(100);
    expect((await flowCommand(node, 'fetch', { key })).Data.state).to.deep.equal(['succeeded']);
  });

  it('a wait until a time rendered from the Input', async () => {
    ({ node } = await flowNode(
      dir,
      {
        steps: [
          { name: 'hold', wait: { until: '{{index .Input.Data.at 0}}' } },
          { name: 'go', call: 'db' },
        ],
      },
      {},
      [recordingEcho(dir, 'db')],
    ));
    const at = new Date(Date.now() + 700).toISOString();
    const t0 = Date.now();
    const r = await startRun(node, { at: [at] });
    expect(r.Code, r.Message).to.equal(200);
    expect(Date.now() - t0).to.be.at.least(600);
    const bad = await startRun(node, { at: ['someday'] });
    expect(bad.Code).to.equal(400);
    expect(bad.Message).to.contain("step 'hold'");
  });

  it('a run stopped while its step was under way goes on at that step after the restart; the steps before are not sent again', async () => {
    const def = {
      steps: [
        { name: 'one', call: 'db', data: { s: '1' } },
        { name: 'two', call: 'slow', data: { s: '2' } },
        { name: 'three', call: 'db', data: { s: '3', two: '{{index .Steps.two.Data.s 0}}' } },
      ],
    };
    const services = [recordingEcho(dir, 'db'), recordingEcho(dir, 'slow', { Delay: 3000 })];
    ({ node } = await flowNode(dir, def, {}, services));
    const key = (await node.hive.execute('flow', makeMessage(), 5000)).Data.key!;
    await until(() => recorded(join(dir, 'slow.jsonl')).length === 1);
    // the drain's deadline passes before the slow step answers: the run is still at step two
    await node.stop(200);
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db'), recordingEcho(dir, 'slow')]));
    await until(() => recorded(join(dir, 'db.jsonl')).length === 2, 8000);
    expect(recorded(join(dir, 'db.jsonl')).map((r) => r.message.Data)).to.deep.equal([
      { s: ['1'] },
      { s: ['3'], two: ['2'] },
    ]);
    const slow = recorded(join(dir, 'slow.jsonl'));
    expect(slow.length).to.be.at.least(2);
    expect(new Set(slow.map((r) => r.message.Control['idempotency-key']![0]))).to.deep.equal(
      new Set([`${key[0]}:two`]),
    );
  });

  it("a gateway's Platform-Procedure: Execution hands a run over and answers the run's key", async () => {
    ({ node } = await flowNode(dir, { steps: [{ name: 'one', call: 'db' }] }, {}, [
      recordingEcho(dir, 'db'),
      { service: 'gateway', NAME: 'gw', Port: 0, Strict: true, OUTPUTCHANNEL: 'flow' },
    ]));
    const port = (node.services.find((s) => s.kind === 'gateway')!.running.status() as { port: number }).port;
    const res = await request(`http://127.0.0.1:${port}/order/new`, {
      method: 'POST',
      headers: { 'platform-procedure': 'Execution' },
      body: JSON.stringify({ id: ['9'] }),
    });
    const body = (await res.body.json()) as { Code: number; Data: { key: string[] } };
    expect(body.Code).to.equal(200);
    await until(() => recorded(join(dir, 'db.jsonl')).length === 1);
    await sleep(50);
    expect((await flowCommand(node, 'fetch', { key: body.Data.key })).Data.state).to.deep.equal(['succeeded']);
  });

  it('RunRetention removes finished runs once they are older than it, also from the store', async () => {
    const def = { steps: [{ name: 'one', call: 'db' }] };
    ({ node } = await flowNode(dir, def, { RunRetention: '1s' }, [recordingEcho(dir, 'db')]));
    expect((await startRun(node)).Code).to.equal(200);
    const key = (await flowCommand(node, 'list')).Data.objects!;
    expect(key).to.have.length(1);
    await sleep(2600);
    expect((await flowCommand(node, 'fetch', { key })).Code).to.equal(404);
    await node.stop(2000);
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db')]));
    expect((await flowCommand(node, 'status')).Data.succeeded).to.deep.equal(['0']);
  });

  it('a hive:// Definition is read from the storage service at start', async function () {
    sqliteOnly(
      this,
      'the NATS hive keeps hive:// definitions in a bucket of its own, tested in spec/adapters/nats/hive.spec.ts',
    );
    const templates = join(dir, 'templates');
    mkdirSync(templates);
    writeFileSync(join(templates, 'order'), 'steps:\n  - name: one\n    call: db\n    data: {from: storage}\n');
    ({ node } = await flowNode(dir, 'hive://order', {}, [
      { service: 'storage', NAME: 'templates', Directory: templates, INPUTCHANNEL: 'DefaultStorageChannel' },
      recordingEcho(dir, 'db'),
    ]));
    expect((await startRun(node)).Data.from).to.deep.equal(['storage']);
  });
});
