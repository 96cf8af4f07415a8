/**
 * Batches on the console (README, Console; README, The queue, Batches): the queue page of a queue
 * with BatchSize above 1 says how it batches and what its batches carried, /api/queues/<name> gives
 * the same as JSON, and an entry's attempts say which were delivered in a batch and of how many.
 */
import { expect } from 'chai';
import { queueCall, recorded } from '../queue/helpers.js';
import type { ConsoleNode } from './helpers.js';
import { basicHeader, startConsoleNode } from './helpers.js';
import { until } from '../../support/wait.js';

describe('console batches: the queue page and an entry page show batch delivery', function () {
  this.timeout(30_000);
  let c: ConsoleNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
  });

  it('shows BatchSize, BatchWindow and the batches delivered, and an attempt made in a batch', async () => {
    c = await startConsoleNode({
      queue: [
        ['BatchSize', '3'],
        ['BatchWindow', '250ms'],
        ['StartPaused', 'true'],
      ],
    });
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) keys.push((await queueCall(c.node, {}, { item: [`i${i}`] }, 'jobs')).Data.keys![0]!);
    await queueCall(c.node, { command: ['resume'] }, {}, 'jobs');
    await until(() => recorded(c!.record).length === 2, 5000);
    const auth = { authorization: basicHeader() };
    await until(
      async () =>
        (await (await fetch(`${c!.base}/queues/jobs`, { headers: auth })).text()).includes('2 batch deliveries'),
      5000,
    );
    const page = await (await fetch(`${c.base}/queues/jobs`, { headers: auth })).text();
    expect(page).to.match(
      /<p id="queue-batches">Delivers in batches of up to 3 entries per channel \(and group\): a batch not full waits up to 250 ms for more · 2 batch deliveries since start carried 5 entries \(2\.5 a batch\) · 0 gathering now<\/p>/,
    );
    const api = (await (await fetch(`${c.base}/api/queues/jobs`)).json()) as {
      summary?: { batches?: unknown };
      batches?: unknown;
    };
    expect(JSON.stringify(api)).to.contain(
      '"batches":{"size":3,"windowMs":250,"deliveries":2,"entries":5,"gathering":0}',
    );
    // DoneRetention 1h: the delivered entry keeps its attempts
    const entry = await (await fetch(`${c.base}/queues/jobs/entries/${keys[4]!}`, { headers: auth })).text();
    expect(entry).to.match(/<td class="attempt-batch">in a batch of 2<\/td>/);
  });

  it('a queue without batches shows no batch line', async () => {
    c = await startConsoleNode();
    const page = await (await fetch(`${c.base}/queues/jobs`, { headers: { authorization: basicHeader() } })).text();
    expect(page).not.to.contain('queue-batches');
  });
});
