/**
 * RetryOn retryable on a NATS hive: a delivery to a channel nobody serves yet (its node restarting) is
 * retried, not made dead at once; the target's own 404 stays final (spec/integration/queue/retry-on.spec.ts).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import { queueCall, recorded } from '../../integration/queue/helpers.js';
import { tempDir } from '../../temp.js';
import { suiteNatsServer } from './server.js';
import { until } from '../../support/wait.js';

describe('queue RetryOn retryable on a NATS hive: a channel nobody serves yet', function () {
  this.timeout(30_000);
  const nats = suiteNatsServer();
  const nodes: HiveNode[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop(2000)));
  });
  const start = async (
    services: Parameters<typeof startTestNode>[0],
  ): Promise<{ node: HiveNode; logs: () => string }> => {
    const server = nats();
    const started = await startTestNode(
      services.map((s) => ({ SERVERHOST: server.url, SERVERAUTH: server.token, ...s })),
    );
    nodes.push(started.node);
    return started;
  };

  it('is retried until the node serving it is back, then delivered', async () => {
    const dir = tempDir('hn-unserved-');
    const { node, logs } = await start([
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: 'later',
        PersistPath: join(dir, 'store'),
        RetryOn: 'retryable',
        DeadRetention: '0',
      },
    ]);
    await queueCall(node, { channel: ['later'], requeue_timer: ['1'], requeue_count: ['10'] }, { item: ['x'] });
    const status = () => node.services[0]!.running.status();
    await until(() => (status().retried as number) >= 1, 10_000);
    expect(status().dropped, 'not made dead at its first attempt').to.equal(0);
    // the target's node comes (back): the next attempt reaches it
    await start([{ service: 'echo', NAME: 'later', RecordFile: join(dir, 'later.jsonl') }]);
    await until(() => recorded(join(dir, 'later.jsonl')).length === 1, 10_000);
    await until(() => (status().delivered as number) === 1, 5_000);
    expect(logs()).to.not.match(/not retryable/);
  });
});
