/**
 * Debounce and replace (README, The queue: debounce and replace), on both stores: a burst of 1,000
 * enqueues with one idempotency-key and `debounce` is delivered once, with the last Data; the due
 * time and the replaced Data survive a restart; `dedup_mode` replace without a debounce, drop with
 * one, and keep-last-if-active (one running and one waiting per key); bad controls are a 400 naming
 * the control and add nothing. Deliveries are counted by echo's RecordFile.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { startNodeProcess } from '../../reliability/node-process.js';
import { startTestNode } from '../helpers.js';
import { killableQueueNode, queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue debounce and dedup_mode', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  let recordFile = 'target.jsonl';
  const deliveries = (): ReturnType<typeof recorded> => recorded(join(dir, recordFile));
  const items = (): string[] => deliveries().map((d) => d.message.Data.item![0]!);
  const start = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> =>
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
      { service: 'echo', NAME: 'slow', RecordFile: join(dir, 'slow.jsonl'), Delay: 1000 },
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
  const size = async (n: HiveNode): Promise<string> =>
    (await queueCall(n, { command: ['status'] })).Data.queuesize![0]!;
  beforeEach(() => {
    dir = tempDir();
    recordFile = 'target.jsonl';
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('a burst of 1,000 enqueues with one key and debounce is delivered once, with the last Data, a debounce after the last', async () => {
    const n = await start({ DeliveryConcurrency: 8 });
    const control = { 'idempotency-key': ['burst'], debounce: ['700ms'] };
    const first = await queueCall(n, control, { item: ['0'] });
    expect(first.Code, first.Message).to.equal(200);
    const entry = first.Data.keys![0]!;
    // the rest in waves of 100 at once: replacements race each other and the first entry's own write
    let last = 0;
    for (let wave = 0; wave < 10; wave++) {
      // the last replacement is handled after its wave was sent: due no sooner than a debounce after that
      last = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) => wave * 100 + i)
          .filter((i) => i > 0)
          .map((i) => queueCall(n, control, { item: [String(i)] })),
      );
      for (const a of answers) {
        expect(a.Code, a.Message).to.equal(200);
        expect(a.Data.key).to.deep.equal([entry]);
        expect(a.Data.replaced).to.deep.equal(['true']);
      }
    }
    expect(await size(n)).to.equal('1');
    const status = (): Record<string, unknown> => n.services.find((s) => s.kind === 'queue')!.running.status();
    expect(status().replaceable, 'the status figure of entries a later add replaces').to.equal(1);
    await until(() => deliveries().length === 1, 5000);
    expect(status().replaceable).to.equal(0);
    expect(Date.parse(deliveries()[0]!.time) - last, 'due a debounce after the last enqueue').to.be.at.least(690);
    expect(items()).to.deep.equal(['999']);
    expect(deliveries()[0]!.message.Control, 'the queue keeps its controls').to.deep.equal({});
    await sleep(800);
    expect(deliveries()).to.have.length(1);
    // once delivered, the key makes a new entry
    const again = await queueCall(n, control, { item: ['after'] });
    expect(again.Data.keys![0]).to.not.equal(entry);
    await until(() => deliveries().length === 2, 5000);
    expect(items()).to.deep.equal(['999', 'after']);
  });

  it('the debounced due time and the replaced Data survive a restart; a replace after it still replaces', async () => {
    let n = await start();
    const control = { 'idempotency-key': ['k'], debounce: ['3s'] };
    const entry = (await queueCall(n, control, { item: ['a'] })).Data.keys![0]!;
    await queueCall(n, control, { item: ['b'] });
    n = await restart();
    expect(await size(n)).to.equal('1');
    const fetched = await queueCall(n, { command: ['fetch'], key: [entry] });
    expect(fetched.Code, fetched.Message).to.equal(200);
    expect(fetched.Data.state).to.deep.equal(['scheduled']);
    // taken before the replace is sent: its due time is a debounce after the queue handles it, later still
    const at = Date.now();
    const replaced = await queueCall(n, control, { item: ['c'] });
    expect(replaced.Data.replaced).to.deep.equal(['true']);
    expect(replaced.Data.key).to.deep.equal([entry]);
    await sleep(2000);
    expect(deliveries(), 'not before a debounce after the last replace').to.have.length(0);
    await until(() => deliveries().length === 1, 5000);
    expect(Date.parse(deliveries()[0]!.time) - at).to.be.at.least(2990);
    expect(items()).to.deep.equal(['c']);
  });

  it('dedup_mode replace without debounce replaces a waiting entry; drop with debounce keeps the first', async () => {
    const n = await start({ StartPaused: true });
    const replace = { 'idempotency-key': ['r'], dedup_mode: ['replace'] };
    const first = await queueCall(n, replace, { item: ['r1'] });
    const second = await queueCall(n, replace, { item: ['r2'] });
    expect(second.Data).to.deep.equal({
      key: first.Data.keys,
      queuesize: ['1'],
      status: ['paused'],
      replaced: ['true'],
    });
    const drop = { 'idempotency-key': ['d'], debounce: ['200ms'], dedup_mode: ['drop'] };
    await queueCall(n, drop, { item: ['d1'] });
    const dup = await queueCall(n, drop, { item: ['d2'] });
    expect(dup.Data.duplicate).to.deep.equal(['true']);
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().length === 2);
    await sleep(300);
    expect(items()).to.deep.equal(['r2', 'd1']);
  });

  it('keep-last-if-active: one entry of a key running and one waiting; the waiting one is replaced and goes after the running one', async () => {
    const n = await start({ DeliveryConcurrency: 4, DefaultChannel: 'slow' });
    recordFile = 'slow.jsonl';
    const keep = { 'idempotency-key': ['job'], dedup_mode: ['keep-last-if-active'] };
    const running = (await queueCall(n, keep, { item: ['k1'] })).Data.keys![0]!;
    await until(() => deliveries().length === 1);
    const waiting = await queueCall(n, keep, { item: ['k2'] });
    expect(waiting.Data.keys![0], 'a running entry is not replaced: a new one waits').to.not.equal(running);
    const third = await queueCall(n, keep, { item: ['k3'] });
    expect(third.Data.key).to.deep.equal(waiting.Data.keys);
    expect(third.Data.replaced).to.deep.equal(['true']);
    await sleep(400);
    expect(items(), 'the waiting one is held while the first runs').to.deep.equal(['k1']);
    await until(() => deliveries().length === 2, 5000);
    expect(items()).to.deep.equal(['k1', 'k3']);
    expect(Date.parse(deliveries()[1]!.time) - Date.parse(deliveries()[0]!.time)).to.be.at.least(900);
    // plain replace on the same slow target: a second entry runs beside the first
    const replace = { 'idempotency-key': ['other'], dedup_mode: ['replace'] };
    await queueCall(n, replace, { item: ['o1'] });
    await until(() => deliveries().length === 3);
    await queueCall(n, replace, { item: ['o2'] });
    await until(() => deliveries().length === 4);
    expect(Date.parse(deliveries()[3]!.time) - Date.parse(deliveries()[2]!.time)).to.be.below(900);
  });

  it('fan-out entries with one key and dedup_mode replace collapse to one entry with the last Data; a later add replaces it', async () => {
    const keyed =
      '[[ define "keyed" ]][[ range .Data.item ]][[ $r := newRequest ]][[ $c := newControl ]][[ addValue $c "idempotency-key" "cart" ]][[ addValue $c "dedup_mode" "replace" ]][[ setRequestControl $r $c ]][[ addValue (getRequestData $r) "item" . ]][[ addEntry $r ]][[ end ]][[ end ]]';
    const n = await start({ Template: keyed, StartPaused: true });
    const r = await queueCall(n, { template_define: ['keyed'] }, { item: ['a', 'b', 'c'] });
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data.queuesize, 'one entry made').to.deep.equal(['1']);
    expect(new Set(r.Data.keys)).to.have.property('size', 1);
    const again = await queueCall(n, { template_define: ['keyed'] }, { item: ['d'] });
    expect(again.Data.keys).to.deep.equal([r.Data.keys![0]]);
    expect(again.Data.replaced).to.deep.equal(['1']);
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().length === 1);
    await sleep(200);
    expect(items()).to.deep.equal(['d']);
  });

  describe('across a SIGKILL', () => {
    let killed: NodeProcess | undefined;
    after(async () => {
      await killed?.kill();
    });

    it('a replaced debounced entry and the priorities of waiting entries survive a SIGKILL: nothing acknowledged is lost', async () => {
      const file = await killableQueueNode(dir, 'command,idempotency-key,debounce,priority');
      killed = await startNodeProcess(file);
      const post = async (
        headers: Record<string, string>,
        item: string,
      ): Promise<{ Code: number; Data: Record<string, string[]> }> => {
        const res = await fetch(`http://127.0.0.1:${killed!.port}/queue/action`, {
          method: 'POST',
          headers,
          body: JSON.stringify(item === '' ? {} : { item: [item] }),
        });
        return (await res.json()) as { Code: number; Data: Record<string, string[]> };
      };
      expect((await post({ command: 'pause' }, '')).Code).to.equal(200);
      for (const [item, priority] of [
        ['low', '1'],
        ['high', '8'],
        ['mid', '4'],
      ] as const) {
        expect((await post({ priority }, item)).Code).to.equal(200);
      }
      const debounced = { 'Idempotency-Key': 'burst', debounce: '3s' };
      const entry = (await post(debounced, 'first')).Data.keys![0];
      // taken before the last replace is sent: it is due a debounce after the node handled it
      const sent = Date.now();
      const last = await post(debounced, 'last');
      expect(last.Data.key).to.deep.equal([entry]);
      await killed.kill('SIGKILL');
      killed = undefined;

      const n = await start();
      await queueCall(n, { command: ['resume'] });
      // on JetStream the restart waits out the killed node's lease, by which time the debounced entry may be due too
      await until(() => deliveries().length === 4, 15_000);
      expect(items(), 'by priority after the restart, the debounced one at its time').to.deep.equal([
        'high',
        'mid',
        'low',
        'last',
      ]);
      expect(Date.parse(deliveries()[3]!.time) - sent).to.be.at.least(2990);
      await sleep(300);
      expect(deliveries()).to.have.length(4);
    });
  });

  it('bad debounce and dedup_mode controls are a 400 naming the control and add nothing', async () => {
    const n = await start({ StartPaused: true });
    const cases: Array<[Record<string, string[]>, RegExp]> = [
      [{ 'idempotency-key': ['x'], debounce: ['soon'] }, /^control debounce 'soon' is not a duration/],
      [{ 'idempotency-key': ['x'], debounce: ['400d'] }, /^control debounce '400d' is too long/],
      [
        { 'idempotency-key': ['x'], dedup_mode: ['newest'] },
        /^control dedup_mode 'newest' is not known; use one of drop, replace, keep-last-if-active/,
      ],
      [{ debounce: ['1s'] }, /^control debounce needs control idempotency-key/],
      [{ dedup_mode: ['replace'] }, /^control dedup_mode needs control idempotency-key/],
      [{ 'idempotency-key': ['x'], debounce: ['1s'], delay: ['1s'] }, /^control debounce sets the due time itself/],
      [{ 'idempotency-key': [''], debounce: ['1s'] }, /^control idempotency-key is empty/],
    ];
    for (const [control, message] of cases) {
      const r = await queueCall(n, control, { item: ['bad'] });
      expect(r.Code, JSON.stringify(control)).to.equal(400);
      expect(r.Message).to.match(message);
    }
    expect(await size(n)).to.equal('0');
  });
});
