/**
 * Strict order per group (README, Strict order per group), on both stores: with GroupBy and
 * GroupOrder strict, while an entry of a group retries the later entries of that group wait (other
 * groups go on), a dead entry holds its group until it is replayed (then it goes first) or purged,
 * also across a restart; GroupOrder skip-dead lets the group go on once the entry is dead. The
 * order of delivery is read from the echo targets' RecordFiles (one for the broken target, one
 * for the good one).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { ConfigError } from '../../../protocol/errors.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue GroupOrder strict and skip-dead', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  const good = (): string[] => recorded(join(dir, 'target.jsonl')).map((d) => d.message.Data.item![0]!);
  const broken = (): string[] => recorded(join(dir, 'broken.jsonl')).map((d) => d.message.Data.item![0]!);
  const start = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> =>
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
      { service: 'echo', NAME: 'broken', RecordFile: join(dir, 'broken.jsonl'), ReplyCode: 500 },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        GroupBy: 'customer',
        DeliveryConcurrency: 4,
        ...extra,
      },
    ])).node;
  const restart = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> => {
    await node?.stop(2000);
    node = undefined;
    return start(extra);
  };
  /** Entry a1 of customer a fails at the broken target (two retries 1 s apart, then dead); the rest go to the good one. */
  const addAll = async (n: HiveNode): Promise<string> => {
    const first = await queueCall(
      n,
      { channel: ['broken'], requeue_timer: ['1'], requeue_count: ['2'] },
      { customer: ['a'], item: ['a1'] },
    );
    for (const [customer, item] of [
      ['a', 'a2'],
      ['b', 'b1'],
      ['a', 'a3'],
      ['b', 'b2'],
    ]) {
      await queueCall(n, {}, { customer: [customer!], item: [item!] });
    }
    return first.Data.keys![0]!;
  };
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('strict: later entries of a group wait while one retries and while it is dead; replayed, it goes first, then the rest in order', async () => {
    let n = await start({ GroupOrder: 'strict', StartPaused: true });
    const a1 = await addAll(n);
    await queueCall(n, { command: ['resume'] });
    await until(() => good().length === 2);
    expect(good(), 'the other group is not held').to.deep.equal(['b1', 'b2']);
    await until(() => broken().length === 3, 5000);
    await sleep(500);
    expect(good(), 'a2 and a3 wait while a1 retries, and once it is dead').to.deep.equal(['b1', 'b2']);
    // the hold survives a restart (a1 is in the dead set now)
    n = await restart({ GroupOrder: 'strict' });
    await sleep(500);
    expect(good()).to.deep.equal(['b1', 'b2']);
    const replayed = await queueCall(n, { command: ['replay'], key: [a1], channel: ['target'] });
    expect(replayed.Code, replayed.Message).to.equal(200);
    await until(() => good().length === 5);
    expect(good()).to.deep.equal(['b1', 'b2', 'a1', 'a2', 'a3']);
  });

  it('strict: purging the dead entry lets its group go on', async () => {
    const n = await start({ GroupOrder: 'strict', StartPaused: true });
    const a1 = await addAll(n);
    await queueCall(n, { command: ['resume'] });
    await until(() => broken().length === 3, 5000);
    await sleep(300);
    expect(good()).to.deep.equal(['b1', 'b2']);
    const purged = await queueCall(n, { command: ['purge'], key: [a1] });
    expect(purged.Code, purged.Message).to.equal(200);
    await until(() => good().length === 4);
    expect(good()).to.deep.equal(['b1', 'b2', 'a2', 'a3']);
  });

  it('skip-dead: the group waits while its entry retries, and goes on once it is dead', async () => {
    const n = await start({ GroupOrder: 'skip-dead', StartPaused: true });
    await addAll(n);
    await queueCall(n, { command: ['resume'] });
    await until(() => good().length === 2);
    await sleep(1200);
    expect(broken().length, 'a1 is retrying').to.be.within(1, 2);
    expect(good(), 'a2 waits for a1').to.deep.equal(['b1', 'b2']);
    await until(() => good().length === 4, 5000);
    expect(good()).to.deep.equal(['b1', 'b2', 'a2', 'a3']);
    expect(broken()).to.deep.equal(['a1', 'a1', 'a1']);
  });

  it('GroupOrder without GroupBy, or with GroupConcurrency above 1, stops the start naming the parameter', async () => {
    for (const [extra, message] of [
      [{ GroupBy: '', GroupOrder: 'strict' }, /GroupOrder strict keeps the order of each group, but GroupBy is empty/],
      [
        { GroupOrder: 'strict', GroupConcurrency: 2 },
        /GroupOrder strict delivers one entry of a group at a time, but GroupConcurrency is 2/,
      ],
      [{ GroupOrder: 'fifo' }, /GroupOrder/],
    ] as const) {
      const failed = await start(extra).catch((e: unknown) => e);
      expect(failed, JSON.stringify(extra)).to.be.instanceOf(ConfigError);
      expect((failed as Error).message).to.match(message);
      expect((failed as Error).message).not.to.contain('\n');
    }
  });
});
