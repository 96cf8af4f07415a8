/**
 * Runs waiting beyond PageHorizon are held in the store only (README, Flows: memory; parked-runs.ts):
 * counted, listed, fetched, cancelled and deduplicated as if in memory, read back as their time comes
 * near — in the process that wrote them and after a restart — and never sent early or twice.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { recorded } from '../queue/helpers.js';
import { sqliteOnly } from '../queue-store.js';
import { flowCommand, flowDir, flowNode, recordingEcho, stopFlowNodes } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

const DEF = {
  steps: [
    { name: 'hold', wait: { for: '{{index .Input.Data.for 0}}' } },
    { name: 'go', call: 'db', data: { id: '{{index .Input.Data.id 0}}' } },
  ],
};

/** Runs held in the store only, as the service's status tells them. */
const parkedOf = (node: HiveNode): number =>
  (node.services.find((s) => s.kind === 'flow')!.running.status() as { parked: number }).parked;

async function startWaiting(
  node: HiveNode,
  id: string,
  wait: string,
  control: Record<string, string[]> = {},
): Promise<string> {
  const r = await node.hive.execute(
    'flow',
    makeMessage({ Control: mapOf(control), Data: mapOf({ id: [id], for: [wait] }) }),
    5000,
  );
  expect(r.Code, r.Message).to.equal(200);
  return r.Data.key![0]!;
}

describe('flow runs paged out of memory (PageHorizon)', function () {
  this.timeout(30_000);
  let node: HiveNode;
  let dir: string;
  beforeEach(() => (dir = flowDir()));
  afterEach(stopFlowNodes);

  it('a run waiting beyond the horizon leaves memory once written: counted, listed, fetched, cancelled, and sent at its time', async function () {
    sqliteOnly(this, 'JetStream holds every run in memory');
    ({ node } = await flowNode(dir, DEF, { PageHorizon: '1s' }, [recordingEcho(dir, 'db')]));
    const t0 = Date.now();
    const far = [
      await startWaiting(node, 'a', '3s'),
      await startWaiting(node, 'b', '3s'),
      await startWaiting(node, 'c', '3s'),
    ];
    const near = await startWaiting(node, 'near', '300ms');
    await until(() => parkedOf(node) === 3);
    const status = await flowCommand(node, 'status');
    expect(status.Data.waiting).to.deep.equal(['4']);
    expect(status.Data.queuesize).to.deep.equal(['4']);
    const listed = await flowCommand(node, 'list', { state: ['waiting'] });
    expect(listed.Data.objects).to.deep.equal([...far, near]);
    expect((await flowCommand(node, 'list', { field: ['id'], value: ['b'] })).Data.objects).to.deep.equal([far[1]]);
    expect((await flowCommand(node, 'list', { state: ['succeeded'] })).Data.objects).to.deep.equal([]);
    const fetched = await flowCommand(node, 'fetch', { key: [far[0]!] });
    expect(fetched.Data.state).to.deep.equal(['waiting']);
    expect(fetched.Data.step).to.deep.equal(['hold']);
    const cancelled = await flowCommand(node, 'cancel', { key: [far[2]!] });
    expect(cancelled.Code, cancelled.Message).to.equal(200);
    await until(() => recorded(join(dir, 'db.jsonl')).length === 1, 3000);
    expect(recorded(join(dir, 'db.jsonl'))[0]!.message.Data.id).to.deep.equal(['near']);
    await until(() => recorded(join(dir, 'db.jsonl')).length === 3, 8000);
    const sent = recorded(join(dir, 'db.jsonl'));
    expect(sent.map((r) => r.message.Data.id![0])).to.have.members(['near', 'a', 'b']);
    for (const r of sent.slice(1)) expect(Date.parse(r.time) - t0).to.be.at.least(2900);
    await sleep(200);
    expect(parkedOf(node)).to.equal(0);
    const after = await flowCommand(node, 'status');
    expect([after.Data.succeeded, after.Data.cancelled, after.Data.waiting]).to.deep.equal([['3'], ['1'], ['0']]);
    expect((await flowCommand(node, 'fetch', { key: [far[2]!] })).Data.state).to.deep.equal(['cancelled']);
    expect(recorded(join(dir, 'db.jsonl'))).to.have.length(3);
  });

  it('after a restart the waiting runs beyond the horizon stay in the store, and go on at their time', async function () {
    sqliteOnly(this, 'JetStream holds every run in memory');
    ({ node } = await flowNode(dir, DEF, { PageHorizon: '1s' }, [recordingEcho(dir, 'db')]));
    const t0 = Date.now();
    const keys = [await startWaiting(node, 'a', '3500ms'), await startWaiting(node, 'b', '3500ms')];
    await node.stop(2000);
    ({ node } = await flowNode(dir, DEF, { PageHorizon: '1s' }, [recordingEcho(dir, 'db')]));
    expect((await flowCommand(node, 'status')).Data.waiting).to.deep.equal(['2']);
    expect(parkedOf(node)).to.equal(2);
    // a new run's key and seq are its own: it is listed after the parked ones
    const third = await startWaiting(node, 'c', '100ms');
    expect((await flowCommand(node, 'list')).Data.objects).to.deep.equal([...keys, third]);
    await until(() => recorded(join(dir, 'db.jsonl')).length === 3, 8000);
    const sent = recorded(join(dir, 'db.jsonl'));
    expect(sent[0]!.message.Data.id).to.deep.equal(['c']);
    expect(sent.slice(1).map((r) => r.message.Data.id![0])).to.have.members(['a', 'b']);
    for (const r of sent.slice(1)) expect(Date.parse(r.time) - t0).to.be.at.least(3400);
    await sleep(200);
    expect((await flowCommand(node, 'status')).Data.succeeded).to.deep.equal(['3']);
  });

  it("a start whose idempotency key started a parked run answers that run's key and starts nothing", async function () {
    sqliteOnly(this, 'JetStream holds every run in memory');
    ({ node } = await flowNode(dir, DEF, { PageHorizon: '1s' }, [recordingEcho(dir, 'db')]));
    const first = await startWaiting(node, 'a', '2s', { 'idempotency-key': ['order-1'] });
    await until(() => parkedOf(node) === 1);
    const again = await node.hive.execute(
      'flow',
      makeMessage({ Control: mapOf({ 'idempotency-key': ['order-1'] }), Data: mapOf({ id: ['a'], for: ['2s'] }) }),
      5000,
    );
    expect(again.Data.key).to.deep.equal([first]);
    expect(again.Data.duplicate).to.deep.equal(['true']);
    await until(() => recorded(join(dir, 'db.jsonl')).length === 1, 5000);
    await sleep(300);
    expect(recorded(join(dir, 'db.jsonl'))).to.have.length(1);
    expect((await flowCommand(node, 'status')).Data.succeeded).to.deep.equal(['1']);
  });

  it('PageHorizon 0 holds every waiting run in memory', async () => {
    ({ node } = await flowNode(dir, DEF, { PageHorizon: '0' }, [recordingEcho(dir, 'db')]));
    await startWaiting(node, 'a', '1h');
    await sleep(200);
    expect(parkedOf(node)).to.equal(0);
    expect((await flowCommand(node, 'status')).Data.waiting).to.deep.equal(['1']);
  });
});
