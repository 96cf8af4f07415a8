/**
 * Starting and answering, and the operations by the `command` control (README, Flows): execute
 * answers the key, a call past AnswerWithin 202 with the key, idempotency-key dedups, status, list,
 * fetch, replay from the failed step with an Input edit, cancel running on_cancel, purge, MaxRuns.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { recorded } from '../queue/helpers.js';
import { flowCommand, flowDir, stopFlowNodes, flowNode, recordingEcho, scriptedTarget, startRun } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('flow starting, answering and operations', function () {
  this.timeout(30_000);
  let node: HiveNode;
  let dir: string;
  beforeEach(() => (dir = flowDir()));
  afterEach(stopFlowNodes);

  it('execute answers the run key at once; a call still running after AnswerWithin gets 202 with the key, and the run goes on', async () => {
    ({ node } = await flowNode(dir, { steps: [{ name: 'slow', call: 'slow' }] }, { AnswerWithin: '200ms' }, [
      { service: 'echo', NAME: 'slow', Delay: 600 },
    ]));
    const t0 = Date.now();
    const ex = await node.hive.execute('flow', makeMessage({ Data: mapOf({ a: ['1'] }) }), 5000);
    expect(ex.Code, ex.Message).to.equal(200);
    expect(Date.now() - t0).to.be.below(500);
    expect(ex.Data.key![0]).to.match(/^[0-9a-f-]{36}$/);
    const called = await startRun(node);
    expect(called.Code).to.equal(202);
    const key = called.Data.key!;
    await sleep(700);
    const fetched = await flowCommand(node, 'fetch', { key });
    expect(fetched.Data.state).to.deep.equal(['succeeded']);
  });

  it('an idempotency-key starts one run: a second start answers the first run key with duplicate, also after a restart', async () => {
    ({ node } = await flowNode(dir, { steps: [{ name: 'one', call: 'db' }] }, {}, [recordingEcho(dir, 'db')]));
    const first = await node.hive.execute(
      'flow',
      makeMessage({ Control: mapOf({ 'idempotency-key': ['order-1'] }) }),
      5000,
    );
    const again = await startRun(node, {}, { 'idempotency-key': ['order-1'] });
    expect(again.Data.key).to.deep.equal(first.Data.key);
    expect(again.Data.duplicate).to.deep.equal(['true']);
    await until(() => recorded(join(dir, 'db.jsonl')).length === 1);
    await node.stop(2000);
    ({ node } = await flowNode(dir, { steps: [{ name: 'one', call: 'db' }] }, {}, [recordingEcho(dir, 'db')]));
    const third = await startRun(node, {}, { 'idempotency-key': ['order-1'] });
    expect(third.Data.key).to.deep.equal(first.Data.key);
    expect(recorded(join(dir, 'db.jsonl'))).to.have.length(1);
  });

  it('replay goes on from the failed step with Data replacing Input fields; the steps before keep their Results', async () => {
    const def = {
      steps: [
        { name: 'insert', call: 'db', data: { id: '{{index .Input.Data.id 0}}' } },
        {
          name: 'ship',
          call: 'api',
          data: { id: '{{index .Steps.insert.Data.id 0}}', address: '{{index .Input.Data.address 0}}' },
        },
      ],
    };
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db')]));
    const got = await scriptedTarget(node, 'api', [422, 200]);
    const r = await startRun(node, { id: ['o-1'], address: ['nowhere'] });
    expect(r.Code).to.equal(422);
    const key = (await flowCommand(node, 'list', { state: ['failed'] })).Data.objects!;
    expect((await flowCommand(node, 'fetch', { key })).Data.failed_step).to.deep.equal(['ship']);
    const replayed = await flowCommand(node, 'replay', { key }, { address: ['Main St 1'] });
    expect(replayed.Code, replayed.Message).to.equal(200);
    expect(replayed.Data.replayed).to.deep.equal(['1']);
    expect(replayed.Data.step).to.deep.equal(['ship']);
    await until(() => got.length === 2);
    expect(got[1]!.message.Data).to.deep.equal({ id: ['o-1'], address: ['Main St 1'] });
    // a replayed step is a new visit: its idempotency key is new, so a target's dedup does not drop it
    expect(got[1]!.message.Control['idempotency-key']).to.deep.equal([`${key[0]}:ship:v2`]);
    expect(recorded(join(dir, 'db.jsonl'))).to.have.length(1);
    await sleep(100);
    expect((await flowCommand(node, 'fetch', { key })).Data.state).to.deep.equal(['succeeded']);
    // only a failed or cancelled run is replayed; a step must exist
    expect((await flowCommand(node, 'replay', { key })).Code).to.equal(409);
    expect((await flowCommand(node, 'replay', { key: ['nope'] })).Code).to.equal(404);
  });

  it('replay from a named step', async () => {
    ({ node } = await flowNode(
      dir,
      {
        steps: [
          { name: 'a', call: 'db' },
          { name: 'b', call: 'api' },
        ],
      },
      {},
      [recordingEcho(dir, 'db')],
    ));
    await scriptedTarget(node, 'api', [500, 200]);
    expect((await startRun(node)).Code).to.equal(500);
    const key = (await flowCommand(node, 'list', { state: ['failed'] })).Data.objects!;
    expect((await flowCommand(node, 'replay', { key, step: ['zz'] })).Code).to.equal(400);
    expect((await flowCommand(node, 'replay', { key, step: ['a'] })).Code).to.equal(200);
    await until(() => recorded(join(dir, 'db.jsonl')).length === 2);
  });

  it('cancel runs on_cancel and ends the run cancelled; purge removes finished runs', async () => {
    const def = {
      on_cancel: 'undo',
      steps: [
        { name: 'hold', wait: '1h' },
        { name: 'never', call: 'db', end: true },
        { name: 'undo', call: 'db', data: { undo: '{{index .Input.Data.id 0}}' } },
      ],
    };
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db')]));
    const key = (await node.hive.execute('flow', makeMessage({ Data: mapOf({ id: ['x1'] }) }), 5000)).Data.key!;
    await sleep(100);
    expect((await flowCommand(node, 'status')).Data.waiting).to.deep.equal(['1']);
    const c = await flowCommand(node, 'cancel', { key });
    expect(c.Code, c.Message).to.equal(200);
    await until(() => recorded(join(dir, 'db.jsonl')).length === 1);
    expect(recorded(join(dir, 'db.jsonl'))[0]!.message.Data).to.deep.equal({ undo: ['x1'] });
    await sleep(100);
    const fetched = await flowCommand(node, 'fetch', { key });
    expect(fetched.Data.state).to.deep.equal(['cancelled']);
    expect((await flowCommand(node, 'cancel', { key })).Code).to.equal(409);
    expect((await flowCommand(node, 'list', { state: ['cancelled'] })).Data.objects).to.deep.equal(key);
    const purged = await flowCommand(node, 'purge', { state: ['cancelled'] });
    expect(purged.Data.purged).to.deep.equal(['1']);
    expect((await flowCommand(node, 'fetch', { key })).Code).to.equal(404);
  });

  it('list filters by state, step, code, age and an Input Data field, paged by list_offset and list_limit', async () => {
    ({ node } = await flowNode(dir, { steps: [{ name: 'a', call: 'api' }] }));
    await scriptedTarget(node, 'api', [200, 502, 200, 200]);
    for (const c of ['red', 'blue', 'red', 'green']) await startRun(node, { colour: [c] });
    const all = (await flowCommand(node, 'list')).Data.objects!;
    expect(all).to.have.length(4);
    expect((await flowCommand(node, 'list', { field: ['colour'], value: ['red'] })).Data.objects).to.deep.equal([
      all[0],
      all[2],
    ]);
    expect((await flowCommand(node, 'list', { code: ['502'] })).Data.objects).to.deep.equal([all[1]]);
    expect((await flowCommand(node, 'list', { list_offset: ['1'], list_limit: ['2'] })).Data.objects).to.deep.equal([
      all[1],
      all[2],
    ]);
    expect((await flowCommand(node, 'list', { older_than: ['1h'] })).Data.objects).to.deep.equal([]);
    expect((await flowCommand(node, 'list', { state: ['nonsense'] })).Code).to.equal(400);
    expect((await flowCommand(node, 'frobnicate')).Code).to.equal(400);
  });

  it('MaxRuns runs send at once; the others wait in line and all end', async () => {
    ({ node } = await flowNode(dir, { steps: [{ name: 'slow', call: 'slow' }] }, { MaxRuns: 2 }, [
      { service: 'echo', NAME: 'slow', Delay: 300 },
    ]));
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push((await node.hive.execute('flow', makeMessage(), 5000)).Data.key![0]);
    await sleep(100);
    const s = await flowCommand(node, 'status');
    expect(s.Data.running).to.deep.equal(['2']);
    expect(s.Data.waiting).to.deep.equal(['3']);
    expect(s.Data.queuesize).to.deep.equal(['5']);
    await sleep(1200);
    expect((await flowCommand(node, 'status')).Data.succeeded).to.deep.equal(['5']);
  });
});
