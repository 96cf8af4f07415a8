/**
 * Retry-After reaches the queue (README, The queue, Retry schedules): the HTTP client hands a 429's or
 * 503's Retry-After (seconds or an HTTP date) on as Data `retry_after`, whole seconds, with or
 * without an after interceptor; a queue in front with a requeue_schedule shorter than it waits for
 * it (both stores: the queue suite's second pass runs this on JetStream too).
 */
import { expect } from 'chai';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HiveNode } from '../../node/node.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { startTestNode } from './helpers.js';
import { queueCall, tempDir } from './queue/helpers.js';
import { until } from '../support/wait.js';

const BEFORE = `module://${new URL('../../examples/interceptors/data-body-before.mjs', import.meta.url).pathname}`;

describe('HTTP client Retry-After → Data retry_after → the queue waits for it', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let server: Server | undefined;
  let at: number[];
  /** What the upstream answers to request number i (from 0). */
  let answer: (i: number) => { status: number; headers?: Record<string, string> };
  beforeEach(async () => {
    at = [];
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const a = answer(at.length);
        at.push(Date.now());
        res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers }).end('x');
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });
  const url = (): string => `http://127.0.0.1:${(server!.address() as AddressInfo).port}/hook`;

  it('a 429 with Retry-After seconds, a 503 with a date: retry_after in whole seconds (POST: not retried by the client)', async () => {
    ({ node } = await startTestNode([{ service: 'httpclient', NAME: 'web', URL: url(), InterceptBefore: BEFORE }]));
    answer = (i) =>
      i === 0
        ? { status: 429, headers: { 'retry-after': '7' } }
        : { status: 503, headers: { 'retry-after': new Date(Date.now() + 90_000).toUTCString() } };
    const first = await node.hive.call('web', makeMessage({ Data: mapOf({ a: ['1'] }) }), 10_000);
    expect(first.Code).to.equal(429);
    expect(first.Data.retry_after).to.deep.equal(['7']);
    const second = await node.hive.call('web', makeMessage({ Data: mapOf({ a: ['1'] }) }), 10_000);
    expect(second.Code).to.equal(502);
    expect(Number(second.Data.retry_after![0])).to.be.within(88, 91);
    expect(at).to.have.length(2);
  });

  it('a queue with requeue_schedule 100ms waits for the Retry-After of 1 s before the next attempt', async () => {
    ({ node } = await startTestNode([
      { service: 'httpclient', NAME: 'web', URL: url(), InterceptBefore: BEFORE },
      { service: 'queue', NAME: 'queue', PersistPath: `${tempDir()}/store`, DefaultChannel: 'web' },
    ]));
    answer = (i) => (i === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 });
    await queueCall(node, { requeue_schedule: ['100ms'] }, { item: ['a'] });
    await until(() => at.length === 2, 10_000);
    expect(at[1]! - at[0]!).to.be.at.least(950);
  });
});
