import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { NatsServer } from './server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from './server.js';
import { sleep } from '../../support/wait.js';
import { requireInstalled } from '../../support/installed.js';

const msg = (data: Record<string, string[]> = {}) => makeMessage({ Class: 'test', Operation: 'op', Data: mapOf(data) });

describe('NATS hive (real nats-server)', function () {
  this.timeout(60_000);
  let server: NatsServer;
  const nodes: HiveNode[] = [];
  before(function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
  });
  beforeEach(async () => {
    server = await natsServer({ maxPayload: 64 * 1024 });
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop(2000)));
    await server?.stop();
  });
  const start = async (services: Parameters<typeof startTestNode>[0]): Promise<HiveNode> => {
    const { node } = await startTestNode(
      services.map((s) => ({ SERVERHOST: server.url, SERVERAUTH: server.token, ...s })),
    );
    nodes.push(node);
    return node;
  };

  it('calls, executes and emits across nodes; listeners on one channel share the load', async () => {
    await start([{ service: 'echo', NAME: 'e1', INPUTCHANNEL: 'shared' }]);
    await start([{ service: 'echo', NAME: 'e2', INPUTCHANNEL: 'shared' }]);
    const caller = await start([{ service: 'echo', NAME: 'caller' }]);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => caller.hive.call('shared', msg({ i: [String(i)] }), 5000)),
    );
    results.forEach((r, i) => expect(r.Data.i).to.deep.equal([String(i)]));
    const handled = nodes.slice(0, 2).map((n) => n.services[0]!.running.status().handled as number);
    expect(handled[0]! + handled[1]!).to.equal(200);
    expect(handled[0]).to.be.within(40, 160);
    expect(await caller.hive.execute('shared', msg(), 5000)).to.deep.include({ Code: 200, List: null });
    expect(await caller.hive.emit('shared', msg())).to.equal(true);
  });

  it('answers 404 at once when nobody listens, 413 for a payload over the server maximum', async () => {
    const caller = await start([{ service: 'echo', NAME: 'caller' }]);
    const started = Date.now();
    const r = await caller.hive.call('nobody-home', msg(), 5000);
    expect(r.Code).to.equal(404);
    // at once: far below the call's 5 s timeout (a timeout would also be 504, not 404)
    expect(Date.now() - started).to.be.below(4000);
    const big = await caller.hive.call('caller', msg({ blob: ['x'.repeat(100_000)] }), 5000);
    expect(big.Code).to.equal(413);
  });

  it('a listener that does not answer in time is 504 at the timeout; a late answer is dropped, the next call still works', async () => {
    await start([{ service: 'echo', NAME: 'slow', Delay: '700ms' }]);
    const caller = await start([{ service: 'echo', NAME: 'caller' }]);
    const started = Date.now();
    const r = await caller.hive.call('slow', msg(), 250);
    expect(r.Code).to.equal(504);
    // not before the 250 ms timeout; the 504 itself shows it did not wait for the 700 ms answer
    expect(Date.now() - started).to.be.within(200, 2500);
    await sleep(600); // the late answer arrives meanwhile and finds nobody
    expect((await caller.hive.call('slow', msg({ a: ['1'] }), 5000)).Data.a).to.deep.equal(['1']);
  });

  it('calls waiting when the connection drops fail with 503 at once, not at their timeout', async () => {
    await start([{ service: 'echo', NAME: 'slow', Delay: '2s' }]);
    const caller = await start([{ service: 'echo', NAME: 'caller' }]);
    const started = Date.now();
    const waiting = caller.hive.call('slow', msg(), 30_000);
    await sleep(200);
    await server.stop();
    const r = await waiting;
    expect(r.Code).to.equal(503);
    expect(Date.now() - started, 'at once, not at the 30 s timeout').to.be.below(15_000);
  });

  it('refuses to start with a wrong token, with a clear message', async () => {
    const err = await startTestNode([{ service: 'echo', SERVERHOST: server.url, SERVERAUTH: 'wrong-token' }]).catch(
      (e: unknown) => e,
    );
    expect((err as Error).name).to.equal('ConfigError');
    expect((err as Error).message).to.match(/refused the connection.*SERVERAUTH/);
  });

  it('fails calls with 503 while disconnected and recovers by itself when the server is back', async () => {
    await start([{ service: 'echo', NAME: 'target' }]);
    const caller = await start([{ service: 'gateway', Port: 0, Strict: true, OUTPUTCHANNEL: 'target' }]);
    const port = caller.services[0]!.running.status().port as number;
    expect((await fetch(`http://127.0.0.1:${port}/a/b`, { method: 'POST', body: '{}' })).status).to.equal(200);
    await server.stop();
    await sleep(300);
    const during = await fetch(`http://127.0.0.1:${port}/a/b`, { method: 'POST', body: '{}' });
    expect(during.status).to.equal(503);
    expect((await fetch(`http://127.0.0.1:${port}/healthcheck`)).status).to.equal(503);
    await server.start();
    const end = Date.now() + 20_000;
    let status = 0;
    while (Date.now() < end) {
      status = (await fetch(`http://127.0.0.1:${port}/a/b`, { method: 'POST', body: '{}' })).status;
      if (status === 200) break;
      await sleep(200);
    }
    expect(status).to.equal(200);
    expect((await fetch(`http://127.0.0.1:${port}/healthcheck`)).status).to.equal(200);
  });

  it('keeps hive:// templates in a JetStream KV bucket named after the template channel', async () => {
    const node = await start([{ service: 'echo', NAME: 'e' }]);
    const bucket = await node.hive.templateBucket('DefaultStorageChannel')!;
    await bucket.put('greeting', 'Hello [[ .Name ]]');
    expect(await bucket.get('greeting')).to.equal('Hello [[ .Name ]]');
    expect(await bucket.list()).to.deep.equal(['greeting']);
    const { resolveTemplateSource } = await import('../../../actors/hive/template-source.js');
    expect(
      await resolveTemplateSource('hive://greeting', { hive: node.hive, templateChannel: 'DefaultStorageChannel' }),
    ).to.equal('Hello [[ .Name ]]');
    const missing = await resolveTemplateSource('hive://nope', {
      hive: node.hive,
      templateChannel: 'DefaultStorageChannel',
    }).catch((e: unknown) => e);
    expect((missing as { code: number }).code).to.equal(404);
    void PassThrough;
  });
});
