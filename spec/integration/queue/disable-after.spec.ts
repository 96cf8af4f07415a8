/**
 * DisableAfter and AlertChannel on a node (both stores): a channel failing without a break for
 * DisableAfter is disabled — its entries wait, kept, attempts untouched — and one message goes to
 * AlertChannel; it stays so (no half-open) until `resume` with `channel`, which releases what it
 * held; a success in between starts the count again.
 */
import { expect } from 'chai';
import type { HiveNode } from '../../../node/node.js';
import type { Message } from '../../../protocol/message.js';
import { mapOf } from '../../../protocol/message.js';
import { startTestNode } from '../helpers.js';
import { queueCall, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue DisableAfter and AlertChannel', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(1000);
    node = undefined;
  });

  const start = async (): Promise<{ n: HiveNode; code: { now: number }; got: string[]; alerts: Message[] }> => {
    ({ node } = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        PersistPath: `${dir}/store`,
        DefaultChannel: 'target',
        DisableAfter: '800ms',
        AlertChannel: 'alerts',
        DefaultRequeueTime: '0',
        DefaultRequeueCount: '1000',
      },
    ]));
    const code = { now: 503 };
    const got: string[] = [];
    const alerts: Message[] = [];
    await node.hive.listen('target', (d) => {
      got.push(d.message.Data.item?.[0] ?? '');
      const c = code.now;
      setTimeout(() => d.respond({ Code: c, Message: c < 300 ? 'Success' : 'down', Data: mapOf({}), List: [] }), 50);
    });
    await node.hive.listen('alerts', (d) => {
      alerts.push(d.message);
      d.ack();
      d.respond({ Code: 200, Message: 'Success', Data: mapOf({}), List: [] });
    });
    return { n: node, code, got, alerts };
  };
  const breakerOf = async (n: HiveNode): Promise<Record<string, string>> => {
    const r = await queueCall(n, { command: ['breaker'], channel: ['target'] });
    return Object.fromEntries(Object.entries(r.Data).map(([k, v]) => [k, v[0] ?? '']));
  };

  it('disables a channel failing for DisableAfter, alerts once, holds its entries until resumed', async () => {
    const { n, code, got, alerts } = await start();
    const key = (await queueCall(n, {}, { item: ['a'] })).Data.keys![0]!;
    await until(async () => (await breakerOf(n)).breaker === 'disabled', 10_000);
    await until(() => alerts.length === 1, 5000);
    const alert = alerts[0]!;
    expect(alert.Operation).to.equal('alert');
    expect(alert.Data.queue).to.deep.equal(['queue']);
    expect(alert.Data.channel).to.deep.equal(['target']);
    expect(alert.Data.reason![0]).to.match(/^disabled after \d+ s of failures \(DisableAfter\), the last 503 down$/);
    // held: nothing more reaches the target, attempts stay where they were, well past BreakerOpenFor's default too
    await queueCall(n, {}, { item: ['b'] });
    const sent = got.length;
    const attempts = Number((await queueCall(n, { command: ['fetch'], key: [key] })).Data.attempts![0]);
    await sleep(600);
    expect(got.length).to.equal(sent);
    expect(Number((await queueCall(n, { command: ['fetch'], key: [key] })).Data.attempts![0])).to.equal(attempts);
    expect((await breakerOf(n)).held).to.equal('2');
    expect(alerts).to.have.length(1);
    // resumed: both go out
    code.now = 200;
    const resumed = await queueCall(n, { command: ['resume'], channel: ['target'] });
    expect(resumed.Data.breaker).to.deep.equal(['closed']);
    await until(async () => (await queueCall(n, { command: ['status'] })).Data.queuesize![0] === '0', 5000);
    expect(got.slice(sent).sort()).to.deep.equal(['a', 'b']);
    // the whole queue was never paused
    expect(resumed.Data.status).to.deep.equal(['running']);
  });

  it('a success in between starts the count again', async () => {
    const { n, code, alerts } = await start();
    await queueCall(n, {}, { item: ['a'] });
    await sleep(500);
    code.now = 200;
    await until(async () => (await queueCall(n, { command: ['status'] })).Data.queuesize![0] === '0', 5000);
    code.now = 503;
    await queueCall(n, {}, { item: ['b'] });
    await sleep(500); // 1 s of failures in all, but not 800 ms without a break
    expect((await breakerOf(n)).breaker).to.equal('closed');
    expect(alerts).to.have.length(0);
  });
});
