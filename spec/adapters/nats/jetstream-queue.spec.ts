/**
 * The queue on JetStream (Store jetstream) against real nats-servers: the store's log on
 * one server (fenced writes, compaction, kept entries), the refusals of a start, and queues of one
 * NAME on several node processes of a three-server cluster with three replicas, where the node
 * holding the queue is SIGKILLed with its server mid-delivery. (The whole queue suite runs on this
 * store too: scripts/test.sh runs spec/integration/queue with HIVENODE_QUEUE_STORE=jetstream.)
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { request } from 'undici';
import { NatsSharedLog } from '../../../actors/hive/nats-log.js';
import { JetStreamStore } from '../../../actors/queue/jetstream-store.js';
import type { StoredRow } from '../../../actors/queue/store.js';
import { createLogger } from '../../../actors/observe/logger.js';
import { recorded } from '../../integration/queue/helpers.js';
import { startTestNode } from '../../integration/helpers.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { GATEWAY_READY, startNodeProcess } from '../../reliability/node-process.js';
import { tempDir } from '../../temp.js';
import type { NatsCluster } from './cluster.js';
import { natsCluster } from './cluster.js';
import type { NatsServer } from './server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from './server.js';
import { sleep, until } from '../../support/wait.js';
import { requireInstalled } from '../../support/installed.js';

const quiet = createLogger({ level: 'error', stream: new PassThrough() });

const put = (
  key: string,
  seq: number,
): { type: 'put'; key: string; seq: number; state: string; dueAt: number; doc: string } => ({
  type: 'put',
  key,
  seq,
  state: 'waiting',
  dueAt: 0,
  doc: JSON.stringify({ key, seq, message: { Data: { n: [String(seq)] } } }),
});

async function loaded(store: JetStreamStore): Promise<StoredRow[]> {
  const rows: StoredRow[] = [];
  await store.load((r) => rows.push(...r));
  return rows;
}

describe('queue Store jetstream on a nats-server', function () {
  this.timeout(60_000);
  let server: NatsServer;
  let nc: NatsConnection;
  before(async function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
    server = await natsServer({ auth: { kind: 'none' } });
    nc = await connect({ servers: server.url });
  });
  after(async () => {
    await nc?.close();
    await server?.stop();
  });
  const open = (name: string): Promise<NatsSharedLog> =>
    NatsSharedLog.open(nc, name, { replicas: 1, maxBytes: 0 }, quiet);

  it('a second writer fences the first: its next write is refused with 503 and it is told so', async () => {
    const log = await open('fence');
    let fenced = 0;
    const first = new JetStreamStore(log, quiet, 'test', { onFenced: () => fenced++ });
    await loaded(first);
    await first.write([put('a', 1)]);
    const second = new JetStreamStore(log, quiet, 'test');
    expect((await loaded(second)).map((r) => r.key)).to.deep.equal(['a']);
    await second.write([put('b', 2)]);
    const refused = await first.write([put('c', 3)]).then(
      () => ({ code: 200, message: 'written' }),
      (e: unknown) => e as { code: number; message: string },
    );
    expect(refused).to.include({ code: 503 });
    expect(refused.message).to.match(/written by another node/);
    expect(fenced).to.equal(1);
    // nothing of the refused write is in the log
    expect((await loaded(new JetStreamStore(log, quiet, 'test'))).map((r) => r.key)).to.deep.equal(['a', 'b']);
  });

  it('compacts the log into a snapshot once it grew past the limit; a start replays snapshot and records after it', async () => {
    const log = await open('compact');
    const lines: string[] = [];
    const out = new PassThrough();
    out.on('data', (c: Buffer) => lines.push(c.toString()));
    const logger = createLogger({ level: 'info', stream: out });
    const store = new JetStreamStore(log, logger, 'test', { compactBytes: 20_000 });
    await loaded(store);
    for (let i = 1; i <= 300; i++) {
      await store.write([
        put(`k${i}`, i),
        ...(i % 3 === 0 ? [{ type: 'remove' as const, key: `k${i - 1}` }] : []),
        { type: 'meta', name: 'paused', value: String(i % 2 === 0) },
      ]);
    }
    await until(() => lines.some((l) => /queue log compacted/.test(l)), {
      ms: 10_000,
      every: 50,
      what: 'a compaction',
    });
    await store.close();
    expect(await log.count('log')).to.be.below(150);
    const again = new JetStreamStore(log, quiet, 'test');
    const rows = await loaded(again);
    expect(rows).to.have.length(200);
    expect(rows.map((r) => r.key)).to.deep.equal(
      Array.from({ length: 300 }, (_, i) => i + 1)
        .filter((i) => !(i % 3 === 2))
        .map((i) => `k${i}`),
    );
    const meta = await again.load(() => undefined);
    expect(meta.get('paused')).to.equal('true');
  });

  it('keeps dead and done entries under topics of their own: read by filter, found by key, counted, purged', async () => {
    const log = await open('kept');
    const store = new JetStreamStore(log, quiet, 'test');
    await loaded(store);
    const keep = (key: string, state: 'dead' | 'done', reason: string, endedAt: number) => ({
      type: 'keep' as const,
      key,
      seq: 1,
      state,
      reason,
      channel: 'target',
      endedAt,
      doc: JSON.stringify({ key, seq: 1, message: { Control: {}, Data: { customer: [key.toUpperCase()] } } }),
    });
    await store.write([put('x', 1), put('y', 2)]);
    await store.write([
      keep('x', 'dead', 'Code 500', 1_000),
      keep('y', 'dead', 'Code 404', 2_000),
      keep('z', 'done', '', 3_000),
    ]);
    expect(await loaded(new JetStreamStore(log, quiet, 'test'))).to.have.length(0);
    expect(await store.kept.count()).to.deep.equal({ dead: 2, done: 1 });
    expect((await store.kept.get('y'))?.reason).to.equal('Code 404');
    expect(await store.kept.get('no.such key')).to.equal(undefined);
    const keys: string[] = [];
    await store.kept.read({ state: 'dead', before: 1_500 }, false, (rows) => void keys.push(...rows.map((r) => r.key)));
    expect(keys).to.deep.equal(['x']);
    expect([...(await store.kept.group({ state: 'dead' }, 'deadletter_reason'))]).to.deep.equal([
      ['Code 500', 1],
      ['Code 404', 1],
    ]);
    expect(await store.kept.purge({ state: 'dead', groupBy: 'customer', value: 'Y' })).to.equal(1);
    await store.write([{ type: 'unkeep', keys: ['x'] }]);
    expect(await store.kept.count()).to.deep.equal({ dead: 0, done: 1 });
  });

  it('refuses to start on the embedded hive, and 3 replicas on a single server, each with one line naming the fix', async () => {
    const embedded = await startTestNode([{ service: 'queue', NAME: 'q', Store: 'jetstream' }]).catch(
      (e: unknown) => e as Error,
    );
    expect(String(embedded)).to.match(
      /Store jetstream .*give SERVERHOST a nats:\/\/ address \(on the embedded hive use Store sqlite\)/,
    );
    const single = await startTestNode([
      { service: 'queue', NAME: 'q3', Store: 'jetstream', Replicas: 3, SERVERHOST: server.url },
    ]).catch((e: unknown) => e as Error);
    expect(String(single)).to.match(/3 replicas need a JetStream cluster of at least 3 servers/);
    const even = await startTestNode([
      { service: 'queue', NAME: 'q2', Store: 'jetstream', Replicas: 2, SERVERHOST: server.url },
    ]).catch((e: unknown) => e as Error);
    expect(String(even)).to.match(/Replicas is 2; give 1, 3 or 5/);
  });
});

describe('queues of one NAME on a three-server JetStream cluster (Store jetstream, Replicas 3)', function () {
  this.timeout(180_000);
  let cluster: NatsCluster;
  let dir: string;
  const nodes: NodeProcess[] = [];
  before(async function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
    cluster = await natsCluster(3);
    dir = tempDir('hn-jsq-');
    writeFileSync(join(dir, 'token'), `${cluster.token}\n`);
  });
  after(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill('SIGKILL')));
    await cluster?.stop();
  });

  /** A node on server i: a strict gateway into the queue, the queue, and a recording target that takes 2.5 s per entry (longer than the lease's renewal period, so the entries in flight when the holder dies were reported). */
  const nodeOn = async (i: number): Promise<NodeProcess> => {
    const file = join(dir, `node${i}.yaml`);
    writeFileSync(
      file,
      [
        `hive: {SERVERHOST: "${cluster.servers[i]!.url}", SERVERAUTH: "file://${join(dir, 'token')}"}`,
        'services:',
        `  - {service: gateway, NAME: gw${i}, Port: 0, Strict: true, OUTPUTCHANNEL: jobs}`,
        '  - {service: queue, NAME: jobs, Store: jetstream, Replicas: 3, AckWait: 20s, DeliveryConcurrency: 8, DefaultChannel: work, DefaultRequeueTime: 1}',
        `  - {service: echo, NAME: work, Delay: 2500, RecordFile: "${join(dir, `work${i}.jsonl`)}"}`,
        '',
      ].join('\n'),
    );
    const n = await startNodeProcess(file, { ready: GATEWAY_READY });
    nodes.push(n);
    return n;
  };
  const enqueue = async (n: NodeProcess, item: number): Promise<number> => {
    const res = await request(`http://127.0.0.1:${n.port}/jobs/action`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ item: [String(item)] }),
    });
    await res.body.dump();
    return res.statusCode;
  };
  const delivered = (): number[] =>
    [0, 1, 2].flatMap((i) => recorded(join(dir, `work${i}.jsonl`)).map((r) => Number(r.message.Data.item?.[0])));

  it('one node holds the queue, enqueues through any node reach it; its machine lost mid-delivery, another takes over and delivers every acknowledged entry, the ones in flight only after AckWait', async () => {
    const a = await nodeOn(0);
    const b = await nodeOn(1);
    const holder = [a, b].find((n) => /active queue holder now/.test(n.output()));
    expect(holder, 'one node holds the queue at start').to.not.equal(undefined);
    const standby = holder === a ? b : a;
    expect(standby.output()).to.match(/standing by/);
    const acknowledged: number[] = [];
    for (let i = 1; i <= 80; i++) if ((await enqueue(i % 2 ? a : b, i)) === 200) acknowledged.push(i);
    expect(acknowledged).to.have.length(80);
    // a few renewals of the lease while delivering, so the holder has reported entries in flight
    await until(() => delivered().length >= 16, { ms: 30_000, every: 50, what: 'deliveries under way' });
    // the second round of deliveries is reported by the lease's next renewal (every 2 s) before it ends (2.5 s)
    await sleep(2_100);
    // the machine of the holder: its node and its nats-server, SIGKILLed together
    const server = holder === a ? cluster.servers[0]! : cluster.servers[1]!;
    await Promise.all([holder!.kill('SIGKILL'), server.kill()]);
    const lostAt = Date.now();
    await until(() => /active queue holder now/.test(standby.output()), { ms: 30_000, every: 50, what: 'a takeover' });
    const tookOverMs = Date.now() - lostAt;
    await until(() => new Set(delivered()).size >= 80, {
      ms: 90_000,
      every: 50,
      what: 'every acknowledged entry delivered',
    });
    const got = delivered();
    expect(
      acknowledged.filter((i) => !got.includes(i)),
      'acknowledged entries missing',
    ).to.deep.equal([]);
    expect(standby.output()).to.match(/the previous holder was delivering wait until .* \(AckWait\)/);
    expect(tookOverMs).to.be.below(20_000);
    // at least once: only entries in flight at the loss may come twice
    expect(got.length - new Set(got).size).to.be.at.most(16);
    await server.start();
  });
});
