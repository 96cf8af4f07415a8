/**
 * Retry schedules on a node (both stores): requeue_schedule's waits between the attempts of a
 * failing target, dead past the last step; a target's Retry-After (Data retry_after, as the HTTP
 * client hands a 429's on) holding the next attempt back when later than the schedule's step; and
 * the control refused with 400 beside requeue_count.
 */
import { expect } from 'chai';
import type { HiveNode } from '../../../node/node.js';
import { mapOf } from '../../../protocol/message.js';
import { startTestNode } from '../helpers.js';
import { queueCall, tempDir } from './helpers.js';
import { until } from '../../support/wait.js';

describe('queue requeue_schedule and Retry-After', function () {
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

  /** A target answering 503, with Data retry_after when `retryAfter` is set; the times of its attempts. */
  const start = async (
    retryAfter?: string,
    extra: Record<string, string> = {},
  ): Promise<{ n: HiveNode; at: number[] }> => {
    ({ node } = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        PersistPath: `${dir}/store`,
        DefaultChannel: 'target',
        DeadRetention: '1h',
        ...extra,
      },
    ]));
    const at: number[] = [];
    await node.hive.listen('target', (d) => {
      at.push(Date.now());
      d.respond({ Code: 503, Message: 'busy', Data: mapOf(retryAfter ? { retry_after: [retryAfter] } : {}), List: [] });
    });
    return { n: node, at };
  };
  const dead = async (n: HiveNode): Promise<number> =>
    Number((await queueCall(n, { command: ['status'] })).Data.dead![0]);

  it('waits each step of the schedule between attempts, and is dead after the last', async () => {
    const { n, at } = await start();
    const added = await queueCall(n, { requeue_schedule: ['300ms,600ms'] }, { item: ['a'] });
    expect(added.Code).to.equal(200);
    await until(async () => (await dead(n)) === 1, 10_000);
    expect(at).to.have.length(3);
    expect(at[1]! - at[0]!).to.be.at.least(280);
    expect(at[2]! - at[1]!).to.be.at.least(580);
    const fetched = await queueCall(n, { command: ['fetch'], key: [added.Data.keys![0]!] });
    expect(fetched.Data.deadletter_reason).to.deep.equal(['no success after 3 attempt(s)']);
  });

  it('DefaultRequeueSchedule applies to entries without their own retry controls', async () => {
    const { n, at } = await start(undefined, { DefaultRequeueSchedule: '300ms' });
    await queueCall(n, {}, { item: ['a'] });
    await until(async () => (await dead(n)) === 1, 10_000);
    expect(at).to.have.length(2);
    expect(at[1]! - at[0]!).to.be.at.least(280);
  });

  it("a target's Retry-After later than the step holds the next attempt back", async () => {
    const { n, at } = await start('1');
    await queueCall(n, { requeue_schedule: ['100ms'] }, { item: ['a'] });
    await until(() => at.length === 2, 10_000);
    expect(at[1]! - at[0]!).to.be.at.least(980);
  });

  it('refuses requeue_schedule beside requeue_count, and a bad step, with 400 adding nothing', async () => {
    const { n } = await start();
    const both = await queueCall(n, { requeue_schedule: ['5s'], requeue_count: ['2'] }, { item: ['a'] });
    expect(both.Code).to.equal(400);
    expect(both.Message).to.match(/requeue_schedule sets the waits and the number of retries/);
    const bad = await queueCall(n, { requeue_schedule: ['5s,later'] }, { item: ['a'] });
    expect(bad.Code).to.equal(400);
    expect(bad.Message).to.equal(
      "control requeue_schedule: wait 2 'later' is not a duration such as 250ms, 20s, 5m, 1h, 30d or 1m30s (a plain number is seconds)",
    );
    expect((await queueCall(n, { command: ['status'] })).Data.queuesize).to.deep.equal(['0']);
  });

  it('refuses a DefaultRequeueSchedule it cannot read at start, naming it', async () => {
    const err = await start(undefined, { DefaultRequeueSchedule: '5s,5x' }).catch((e: unknown) => e);
    expect((err as Error).message).to.match(/DefaultRequeueSchedule: wait 2 '5x' is not a duration/);
  });
});
