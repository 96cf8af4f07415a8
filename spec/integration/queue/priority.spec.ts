/**
 * Priorities and fairness (README, Priorities and fairness), on both stores: the `priority` control
 * orders delivery (higher first, arrival order within one priority), also after a restart and
 * through group limits; DefaultPriority applies without the control; with GroupBy and Fairness
 * weighted a flood in one group does not hold up another (its wait measured), and GroupWeights
 * shares the deliveries of two busy groups 3:1. Bad controls are a 400 naming the control, bad
 * parameters a one-line start failure. Deliveries are read from echo's RecordFile.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { ConfigError } from '../../../protocol/errors.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue priority and Fairness weighted', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  let dir: string;
  const deliveries = (): ReturnType<typeof recorded> => recorded(join(dir, 'target.jsonl'));
  const items = (): string[] => deliveries().map((d) => d.message.Data.item![0]!);
  const start = async (extra: Record<string, string | number | boolean> = {}, delayMs = 0): Promise<HiveNode> =>
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl'), Delay: delayMs },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        ...extra,
      },
    ])).node;
  const restart = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> => {
    await node?.stop(2000);
    node = undefined;
    return start(extra);
  };
  /** Adds `count` entries at most 200 at once (the answers are awaited: every one is durable). */
  const flood = async (
    n: HiveNode,
    count: number,
    data: (i: number) => Record<string, string[]>,
    control: Record<string, string[]> = {},
  ): Promise<void> => {
    for (let i = 0; i < count; i += 200) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(200, count - i) }, (_, j) => queueCall(n, control, data(i + j))),
      );
      for (const a of answers) expect(a.Code, a.Message).to.equal(200);
    }
  };
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  const added: Array<[string, string | undefined]> = [
    ['a0', undefined],
    ['b5', '5'],
    ['c9', '9'],
    ['d5', '5'],
    ['e0', '0'],
    ['f9', '9'],
    ['g3', undefined],
  ];

  it('higher priority first, arrival order within one priority; after a restart too; DefaultPriority without the control', async () => {
    let n = await start({ StartPaused: true, DefaultPriority: 3 });
    for (const [item, priority] of added) {
      const r = await queueCall(n, priority === undefined ? {} : { priority: [priority] }, { item: [item] });
      expect(r.Code, r.Message).to.equal(200);
    }
    n = await restart({ StartPaused: true, DefaultPriority: 3 });
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().length === added.length);
    // a0 and g3 took DefaultPriority 3 when added
    expect(items()).to.deep.equal(['c9', 'f9', 'b5', 'd5', 'a0', 'g3', 'e0']);
    expect(deliveries()[0]!.message.Control, 'the queue keeps the control').to.deep.equal({});
  });

  it('priority order holds through group limits', async () => {
    const n = await start({ StartPaused: true, GroupBy: 'customer', GroupConcurrency: 1 });
    for (const [item, priority] of added)
      await queueCall(n, priority === undefined ? {} : { priority: [priority] }, { item: [item], customer: ['one'] });
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().length === added.length);
    expect(items()).to.deep.equal(['c9', 'f9', 'b5', 'd5', 'a0', 'e0', 'g3']);
  });

  it("Fairness weighted: a flood of 2,000 entries in one group holds up another group's 10 for well under a second", async () => {
    const n = await start({ StartPaused: true, GroupBy: 'tenant', Fairness: 'weighted', DeliveryConcurrency: 4 }, 20);
    await flood(n, 2000, (i) => ({ tenant: ['big'], item: [`big-${i}`] }));
    await flood(n, 10, (i) => ({ tenant: ['small'], item: [`small-${i}`] }));
    const resumed = Date.now();
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().filter((d) => d.message.Data.tenant![0] === 'small').length === 10, 10_000);
    const waits = deliveries()
      .filter((d) => d.message.Data.tenant![0] === 'small')
      .map((d) => Date.parse(d.time) - resumed)
      .sort((a, b) => a - b);
    const p99 = waits[Math.ceil(waits.length * 0.99) - 1]!;
    // in FIFO order they would wait for all 2,000 (20 ms each, 4 at once: about 10 s)
    expect(p99, `waits of the small group: ${waits.join(', ')} ms`).to.be.below(1000);
    const bigBefore = deliveries().findIndex((d) => d.message.Data.item![0] === 'small-9');
    expect(bigBefore, 'the small group took every other turn').to.be.below(30);
  });

  it('GroupWeights tenant-a=3;*=1 gives two busy groups 3 deliveries to 1, each in its own order', async () => {
    const n = await start({
      StartPaused: true,
      GroupBy: 'tenant',
      Fairness: 'weighted',
      GroupWeights: 'tenant-a=3;*=1',
    });
    await flood(n, 100, (i) => ({ tenant: ['tenant-b'], item: [`b-${i}`] }));
    await flood(n, 100, (i) => ({ tenant: ['tenant-a'], item: [`a-${i}`] }));
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().length >= 80, 10_000);
    const first = deliveries().slice(0, 80);
    const a = first.filter((d) => d.message.Data.tenant![0] === 'tenant-a').map((d) => d.message.Data.item![0]!);
    const b = first.filter((d) => d.message.Data.tenant![0] === 'tenant-b').map((d) => d.message.Data.item![0]!);
    expect(a.length, `${a.length} of tenant-a, ${b.length} of tenant-b`).to.be.within(58, 62);
    expect(a).to.deep.equal(Array.from({ length: a.length }, (_, i) => `a-${i}`));
    expect(b).to.deep.equal(Array.from({ length: b.length }, (_, i) => `b-${i}`));
  });

  it('a bad priority is a 400 naming the control and adds nothing', async () => {
    const n = await start({ StartPaused: true });
    for (const bad of ['10', 'high', '-1', '']) {
      const r = await queueCall(n, { priority: [bad] }, { item: ['x'] });
      expect(r.Code, bad).to.equal(400);
      expect(r.Message).to.equal(
        `control priority must be a whole number from 0 to 9 (higher is delivered first), got '${bad}'`,
      );
    }
    expect((await queueCall(n, { command: ['status'] })).Data.queuesize).to.deep.equal(['0']);
    await sleep(10);
  });

  it('bad Fairness, GroupWeights and DefaultPriority stop the start naming the parameter', async () => {
    const refused = async (extra: Record<string, string | number | boolean>, message: RegExp): Promise<void> => {
      let error: unknown;
      try {
        await start(extra);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(extra)).to.be.instanceOf(ConfigError);
      expect((error as Error).message).to.match(message);
      expect((error as Error).message).to.not.include('\n');
    };
    await refused({ Fairness: 'weighted' }, /Fairness weighted shares deliveries among groups, but GroupBy is empty/);
    await refused(
      { GroupBy: 'tenant', Fairness: 'weighted', GroupWeights: 'a=0' },
      /GroupWeights: 'a=0' is not <group>=<weight>/,
    );
    await refused({ GroupBy: 'tenant', Fairness: 'weighted', GroupWeights: 'a' }, /GroupWeights: 'a' is not/);
    await refused(
      { GroupBy: 'tenant', GroupWeights: 'a=2' },
      /GroupWeights weighs the groups only with Fairness weighted/,
    );
    await refused({ Fairness: 'round-robin' }, /Fairness/);
    await refused({ DefaultPriority: 10 }, /DefaultPriority/);
  });
});
