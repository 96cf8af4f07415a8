/**
 * A reload of a queue on JetStream (README, Changing a running node: queues and flows keep their
 * store), against a real nats-server: a change of the queue's own parameters swaps it in place —
 * the old instance closes its store and gives up the holder's lease, the new one opens the same
 * JetStream log — and every waiting entry is still there and is delivered once.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { ServicePlan } from '../../../node/node-plan.js';
import { HiveNode } from '../../../node/node.js';
import { queueCall, recorded } from '../../integration/queue/helpers.js';
import { tempDir } from '../../temp.js';
import type { NatsServer } from './server.js';
import { natsServer, natsServerAvailable } from './server.js';
import { sleep, until } from '../../support/wait.js';

const ENTRIES = 300;

describe('reload of a queue on JetStream (Store jetstream) against a nats-server', function () {
  this.timeout(90_000);
  let server: NatsServer | undefined;
  let node: HiveNode | undefined;
  before(async function () {
    if (!natsServerAvailable()) {
      if (process.env.CI) throw new Error('nats-server is not installed (scripts/test.sh installs it)');
      this.skip();
    }
    server = await natsServer({ auth: { kind: 'none' } });
  });
  after(async () => {
    await node?.stop(2_000);
    await server?.stop();
  });

  it(`a reload changing DefaultRequeueTime keeps the store: ${ENTRIES} waiting entries, none lost, none delivered twice`, async () => {
    const dir = tempDir('hn-reload-js-');
    const record = join(dir, 'record.jsonl');
    const plans = (requeue: number): ServicePlan[] => [
      {
        kind: 'echo',
        layers: [
          {
            source: 'n.yaml services[0]',
            values: [
              ['NAME', 'target'],
              ['RecordFile', record],
            ],
          },
        ],
        where: 'n.yaml services[0]',
      },
      {
        kind: 'queue',
        layers: [
          {
            source: 'n.yaml services[1]',
            values: [
              ['NAME', 'jq'],
              ['Store', 'jetstream'],
              ['DefaultChannel', 'target'],
              ['StartPaused', 'true'],
              ['DefaultRequeueTime', String(requeue)],
            ],
          },
        ],
        where: 'n.yaml services[1]',
      },
    ];
    const withHive = (p: ServicePlan[]): ServicePlan[] =>
      p.map((s) => ({ ...s, layers: [{ source: 'n.yaml hive', values: [['SERVERHOST', server!.url]] }, ...s.layers] }));
    node = await HiveNode.start({
      services: withHive(plans(30)),
      logStream: new PassThrough(),
      source: { file: 'n.yaml', hash: 'a'.repeat(64) },
    });
    const status = async (): Promise<Record<string, string[]>> =>
      (await queueCall(node!, { command: ['status'] }, {}, 'jq')).Data;
    await until(async () => (await queueCall(node!, { command: ['status'] }, {}, 'jq')).Code === 200, 20_000);
    for (let i = 0; i < ENTRIES; i++) expect((await queueCall(node, {}, { n: [String(i)] }, 'jq')).Code).to.equal(200);
    const before = await status();
    expect(before.status).to.deep.equal(['paused']);

    const outcome = await node.reload(withHive(plans(5)), 'SIGHUP', 'b'.repeat(64));
    expect(outcome).to.include({ applied: true, summary: 'changed jq (DefaultRequeueTime)' });
    expect(node.services.find((s) => s.name === 'jq')!.config.DefaultRequeueTime).to.equal(5);
    // the new instance holds the same log: the entries are there, paused again as at a restart (StartPaused)
    await until(async () => {
      const r = await queueCall(node!, { command: ['status'] }, {}, 'jq');
      return r.Code === 200 && r.Data.status?.[0] === 'paused';
    }, 20_000);
    expect(recorded(record)).to.have.length(0);
    expect((await queueCall(node, { command: ['resume'] }, {}, 'jq')).Code).to.equal(200);
    await until(() => recorded(record).length >= ENTRIES, 60_000);
    await sleep(500);
    const numbers = recorded(record).map((r) => r.message.Data.n?.[0]);
    expect(numbers.length, 'deliveries').to.equal(ENTRIES);
    expect(new Set(numbers).size, 'distinct entries').to.equal(ENTRIES);
  });
});
