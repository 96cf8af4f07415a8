/**
 * Group limits on the embedded hive, deliveries proven by echo's RecordFile: with
 * GroupConcurrency 1 a stuck group (its target answers after 5 s) delays no entry of another group;
 * each group keeps FIFO order; GroupRate spaces a group's deliveries and not another group's;
 * `clear` and `delete` while a group is at its limit, and a restart, leave no group stuck; a bad
 * GroupRate stops the start naming the parameter.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { ConfigError } from '../../../protocol/errors.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { until } from '../../support/wait.js';

/** How long the slow target holds its answer: the group it serves is stuck that long per entry. */
const STUCK_MS = 5000;

describe('queue group limits GroupBy, GroupConcurrency, GroupRate', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  const fast = (): ReturnType<typeof recorded> => recorded(join(dir, 'target.jsonl'));
  const slow = (): ReturnType<typeof recorded> => recorded(join(dir, 'slow.jsonl'));
  const items = (r: ReturnType<typeof recorded>): string[] => r.map((d) => d.message.Data.item![0]!);
  const start = async (extra: Record<string, string | number | boolean>, slowDelayMs = STUCK_MS): Promise<HiveNode> =>
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
      { service: 'echo', NAME: 'slow', RecordFile: join(dir, 'slow.jsonl'), Delay: slowDelayMs },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        GroupBy: 'customer',
        ...extra,
      },
    ])).node;
  /** Customer `slow` is served by the slow target; every other customer by the fast one. */
  const add = (n: HiveNode, customer: string, item: string): Promise<unknown> =>
    queueCall(n, customer === 'slow' ? { channel: ['slow'] } : {}, { customer: [customer], item: [item] });
  const size = (n: HiveNode): number => n.services.find((s) => s.kind === 'queue')!.running.status().size as number;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(500);
    node = undefined;
  });

  it('GroupConcurrency 1: a stuck group delays no entry of another group, and its own second entry waits its turn', async () => {
    const n = await start({ GroupConcurrency: 1, DeliveryConcurrency: 2, StartPaused: true });
    await add(n, 'slow', 's1');
    await add(n, 'slow', 's2');
    for (const item of ['f1', 'f2', 'f3']) await add(n, 'quick', item);
    await queueCall(n, { command: ['resume'] });
    await until(() => fast().length === 3, STUCK_MS - 1000);
    expect(items(fast())).to.deep.equal(['f1', 'f2', 'f3']);
    // the stuck entry was out first, and every entry of the other group was recorded before it answered
    const stuckAt = Date.parse(slow()[0]!.time);
    for (const d of fast()) expect(Date.parse(d.time)).to.be.below(stuckAt + STUCK_MS);
    expect(items(slow()), 's2 is held while s1 is out').to.deep.equal(['s1']);
    await until(() => slow().length === 2, STUCK_MS + 3000);
    expect(Date.parse(slow()[1]!.time) - stuckAt).to.be.at.least(STUCK_MS - 100);
  });

  it('DeliveryConcurrency 1 keeps strict FIFO order across groups', async () => {
    const n = await start({ GroupConcurrency: 1, StartPaused: true });
    const customers = ['a', 'b', 'c', 'a', 'a', 'b', 'c', 'c', 'a', 'b', 'a', 'c'];
    const sent = customers.map((c, i) => `${c}${i}`);
    for (const [i, c] of customers.entries()) await add(n, c, sent[i]!);
    await queueCall(n, { command: ['resume'] });
    await until(() => fast().length === sent.length);
    expect(items(fast())).to.deep.equal(sent);
  });

  it('GroupConcurrency 1 at DeliveryConcurrency 4: one entry of a group at a time, in FIFO order, the groups side by side', async () => {
    const answerMs = 400;
    const n = await start({ GroupConcurrency: 1, DeliveryConcurrency: 4, StartPaused: true }, answerMs);
    const sent = ['a1', 'b1', 'a2', 'c1', 'a3', 'b2'];
    for (const item of sent) await queueCall(n, { channel: ['slow'] }, { customer: [item[0]!], item: [item] });
    await queueCall(n, { command: ['resume'] });
    await until(() => slow().length === sent.length, 5000);
    const at = (item: string): number => Date.parse(slow().find((d) => d.message.Data.item![0] === item)!.time);
    for (const c of ['a', 'b', 'c'])
      expect(
        items(slow()).filter((x) => x.startsWith(c)),
        `group ${c}`,
      ).to.deep.equal(sent.filter((x) => x.startsWith(c)));
    // the next of a group only once the one before has answered; the first of each group at once
    for (const [before, next] of [
      ['a1', 'a2'],
      ['a2', 'a3'],
      ['b1', 'b2'],
    ] as const)
      expect(at(next) - at(before), `${before} → ${next}`).to.be.at.least(answerMs - 50);
    expect(Math.max(at('a1'), at('b1'), at('c1')) - at('a1')).to.be.below(answerMs - 50);
  });

  it('GroupRate 2/s: a burst of 2, then about 2 per second in that group; another group is not held up', async () => {
    const n = await start({ GroupRate: '2/s', DeliveryConcurrency: 4, StartPaused: true });
    for (let i = 1; i <= 6; i++) await add(n, 'busy', `r${i}`);
    await add(n, 'other', 'o1');
    await add(n, 'other', 'o2');
    const resumed = Date.now();
    await queueCall(n, { command: ['resume'] });
    await until(() => fast().length === 8, 10_000);
    const at = (item: string): number =>
      Date.parse(fast().find((d) => d.message.Data.item![0] === item)!.time) - resumed;
    expect(
      items(fast()).filter((x) => x.startsWith('r')),
      'FIFO within the group',
    ).to.deep.equal(['r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
    // four tokens after the burst come at 0.5 s intervals: r6 no sooner than ~2 s; o2 waits for no token of busy
    expect(at('r6')).to.be.at.least(1800);
    expect(at('o2')).to.be.below(at('r3'));
  });

  it('clear while a group is at its limit: new entries of that group are delivered at once', async () => {
    const n = await start({ GroupConcurrency: 1 });
    await add(n, 'slow', 's1');
    await add(n, 'slow', 's2');
    await until(() => slow().length === 1);
    expect((await queueCall(n, { command: ['clear'] })).Data.cleared).to.deep.equal(['2']);
    await add(n, 'slow', 's3');
    await until(() => slow().length === 2, STUCK_MS - 2000);
    expect(items(slow())).to.deep.equal(['s1', 's3']);
  });

  it('delete of the entry a group is delivering frees the group at once', async () => {
    const n = await start({ GroupConcurrency: 1 });
    const first = ((await add(n, 'slow', 's1')) as { Data: { keys: string[] } }).Data.keys[0]!;
    await add(n, 'slow', 's2');
    await until(() => slow().length === 1);
    expect((await queueCall(n, { command: ['delete'], key: [first] })).Data.deleted).to.deep.equal(['1']);
    await until(() => slow().length === 2, STUCK_MS - 2000);
    expect(items(slow())).to.deep.equal(['s1', 's2']);
  });

  it('a restart while a group is at its limit: the reloaded entries are delivered, in-flight counts start at 0', async () => {
    let n = await start({ GroupConcurrency: 1 }, 1500);
    await add(n, 'slow', 's1');
    await add(n, 'slow', 's2');
    await until(() => slow().length === 1);
    await node!.stop(100);
    n = await start({ GroupConcurrency: 1 }, 0);
    // the first message loads the store: s1 was out when the node stopped, so it is delivered again (at least once), then s2
    expect((await queueCall(n, { command: ['status'] })).Data.queuesize).to.deep.equal(['2']);
    await until(() => items(slow()).includes('s2') && size(n) === 0, 8000);
    expect(items(slow())).to.deep.equal(['s1', 's1', 's2']);
  });

  it('a GroupRate it cannot read stops the start, naming the parameter and the accepted form', async () => {
    const failed = await start({ GroupRate: 'fast' }).catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(ConfigError);
    expect((failed as Error).message).to.match(
      /GroupRate: 'fast' is not a rate; expected <count>\/<window>, such as 10\/s, 600\/1m, 5\/10s/,
    );
    expect((failed as Error).message).not.to.contain('\n');
  });
});
