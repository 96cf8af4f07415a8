/**
 * An execute hand-over to the queue is acknowledged only when the queue has its entry durably: a
 * refusal (full queue, bad control) reaches the caller instead of an acknowledgement for an entry
 * that was never stored.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { startTestNode } from '../helpers.js';
import { recorded, tempDir } from './helpers.js';
import { until } from '../../support/wait.js';

describe('queue: execute hand-over', function () {
  this.timeout(20_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  const execute = (n: HiveNode, control: Record<string, string[]>, data: Record<string, string[]>) =>
    n.hive.execute(
      'queue',
      makeMessage({ Class: 'queue', Operation: 'action', Control: mapOf(control), Data: mapOf(data) }),
      10_000,
    );

  it('acknowledges an added entry as before, and the entry is delivered', async () => {
    const dir = tempDir();
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'main', RecordFile: join(dir, 'main.jsonl') },
      { service: 'queue', NAME: 'queue', PersistPath: join(dir, 'store') },
    ]));
    const ack = await execute(node, {}, { item: ['a'] });
    expect(ack).to.deep.include({ Code: 200 });
    await until(() => recorded(join(dir, 'main.jsonl')).length === 1);
  });

  it('answers a full queue 507 and a bad control 400 instead of acknowledging what it did not store', async () => {
    const dir = tempDir();
    ({ node } = await startTestNode([
      { service: 'queue', NAME: 'queue', PersistPath: join(dir, 'store'), StartPaused: true, Capacity: 1 },
    ]));
    const bad = await execute(node, { requeue_timer: ['soon'] }, { i: ['0'] });
    expect(bad.Code).to.equal(400);
    expect(bad.Message).to.contain('requeue_timer');
    expect((await execute(node, {}, { i: ['1'] })).Code).to.equal(200);
    const full = await execute(node, {}, { i: ['2'] });
    expect(full.Code).to.equal(507);
    expect(full.Message).to.contain('the queue is full');
    expect(node.services.find((s) => s.kind === 'queue')!.running.status().size).to.equal(1);
  });
});
