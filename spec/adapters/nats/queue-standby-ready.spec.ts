/**
 * A node whose queue on JetStream stands by is ready only once a node serves the queue: while the
 * lease is held by a holder that does not serve (still loading the stream; here a lease written by
 * the test, whose holder never comes), the health check answers 503 'starting' naming the queue and
 * the gateway refuses with Retry-After; once this node takes the queue over, both answer as usual.
 */
import { expect } from 'chai';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import { tempDir } from '../../temp.js';
import { suiteNatsServer } from './server.js';
import { sleep } from '../../support/wait.js';

describe('queue on JetStream: a standby is ready once a node serves the queue', function () {
  this.timeout(40_000);
  const nats = suiteNatsServer();
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('answers 503 starting (health) and 503 with Retry-After (requests) while the holder does not serve, then 200', async () => {
    const server = nats();
    // a holder that took the lease and never serves: as a node still loading the stream, or one just dead
    const nc = await connect({ servers: server.url, token: server.token });
    try {
      const kv = await new Kvm(nc).create('hivenode_queues', { history: 1 });
      await kv.put('holder.jq', 'ghost:1:abcd\n[]');
    } finally {
      await nc.close();
    }
    const dir = tempDir('hn-standby-ready-');
    ({ node } = await startTestNode([
      {
        service: 'gateway',
        NAME: 'gw',
        Port: 0,
        Strict: true,
        OUTPUTCHANNEL: 'jq',
        SERVERHOST: server.url,
        SERVERAUTH: server.token,
      },
      {
        service: 'queue',
        NAME: 'jq',
        Store: 'jetstream',
        DefaultChannel: 'work',
        SERVERHOST: server.url,
        SERVERAUTH: server.token,
      },
      {
        service: 'echo',
        NAME: 'work',
        RecordFile: join(dir, 'work.jsonl'),
        SERVERHOST: server.url,
        SERVERAUTH: server.token,
      },
    ]));
    const port = node.services[0]!.running.status().port as number;
    const health = await fetch(`http://127.0.0.1:${port}/healthcheck`);
    expect(health.status).to.equal(503);
    expect(await health.json()).to.deep.equal({ status: 'starting', hive: 'connected', starting: ['jq'] });
    const early = await fetch(`http://127.0.0.1:${port}/jq/action`, {
      method: 'POST',
      body: JSON.stringify({ item: ['a'] }),
    });
    expect(early.status).to.equal(503);
    expect(early.headers.get('retry-after')).to.equal('1');
    await early.body?.cancel();
    // the ghost never renews: this node takes over after a lease period, serves, and is ready
    const until = Date.now() + 20_000;
    let ready = 0;
    while ((ready = (await fetch(`http://127.0.0.1:${port}/healthcheck`)).status) !== 200 && Date.now() < until)
      await sleep(100);
    expect(ready).to.equal(200);
    const served = await fetch(`http://127.0.0.1:${port}/jq/action`, {
      method: 'POST',
      body: JSON.stringify({ item: ['b'] }),
    });
    expect(served.status).to.equal(200);
  });
});
