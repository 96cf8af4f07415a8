/**
 * Deduplication: a second enqueue with the same `idempotency-key` within
 * DedupWindow creates nothing and is answered with the first entry's key — before and after a
 * restart on the same store, after the first entry was delivered, when both race into one commit,
 * and through a strict gateway's `Idempotency-Key` header. Deliveries are counted by echo's
 * RecordFile. After the window the key makes a new entry; fan-out entries carry keys of their own.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { request } from 'undici';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue deduplication by idempotency-key', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  const deliveries = (): ReturnType<typeof recorded> => recorded(join(dir, 'target.jsonl'));
  const start = async (
    extra: Record<string, string | number | boolean> = {},
    more: Array<{ service: 'gateway' } & Record<string, string | number | boolean>> = [],
  ): Promise<HiveNode> =>
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        ...extra,
      },
      ...more,
    ])).node;
  const restart = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> => {
    await node?.stop(2000);
    node = undefined;
    return start(extra);
  };
  const key = (k: string): Record<string, string[]> => ({ 'idempotency-key': [k] });
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('a duplicate before and after a restart creates nothing and answers the first key, queuesize and duplicate; one delivery', async () => {
    let n = await start({ StartPaused: true });
    const first = await queueCall(n, key('order-1'), { item: ['first'] });
    expect(first.Code, first.Message).to.equal(200);
    expect(first.Data.duplicate).to.equal(undefined);
    const entry = first.Data.keys![0]!;
    await queueCall(n, {}, { item: ['other'] });
    const again = await queueCall(n, key('order-1'), { item: ['second'] });
    expect(again.Code, again.Message).to.equal(200);
    expect(again.Data).to.deep.equal({ key: [entry], queuesize: ['2'], status: ['paused'], duplicate: ['true'] });

    n = await restart({ StartPaused: true });
    const afterRestart = await queueCall(n, key('order-1'), { item: ['third'] });
    expect(afterRestart.Data).to.deep.equal({
      key: [entry],
      queuesize: ['2'],
      status: ['paused'],
      duplicate: ['true'],
    });
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().length === 2);
    await sleep(200);
    expect(deliveries().map((d) => d.message.Data.item![0])).to.deep.equal(['first', 'other']);
    expect(deliveries()[0]!.message.Control, 'the queue keeps the control to itself').to.deep.equal({});
  });

  it('a key whose entry was already delivered still deduplicates within the window, also after a restart', async () => {
    let n = await start();
    const entry = (await queueCall(n, key('paid-7'), { item: ['once'] })).Data.keys![0]!;
    await until(() => deliveries().length === 1);
    let again = await queueCall(n, key('paid-7'), { item: ['twice'] });
    expect(again.Data.key).to.deep.equal([entry]);
    expect(again.Data.duplicate).to.deep.equal(['true']);
    n = await restart();
    again = await queueCall(n, key('paid-7'), { item: ['thrice'] });
    expect(again.Data).to.deep.equal({ key: [entry], queuesize: ['0'], status: ['running'], duplicate: ['true'] });
    await sleep(300);
    expect(deliveries()).to.have.length(1);
  });

  it('after DedupWindow the same key makes a new entry, also across a restart', async () => {
    let n = await start({ DedupWindow: '1s' });
    const first = (await queueCall(n, key('k'), { item: ['1'] })).Data.keys![0]!;
    expect((await queueCall(n, key('k'), { item: ['dup'] })).Data.duplicate).to.deep.equal(['true']);
    await sleep(1100);
    const second = await queueCall(n, key('k'), { item: ['2'] });
    expect(second.Data.duplicate).to.equal(undefined);
    expect(second.Data.keys![0]).to.not.equal(first);
    expect((await queueCall(n, key('k'), { item: ['dup'] })).Data.key).to.deep.equal(second.Data.keys);
    n = await restart({ DedupWindow: '1s' });
    expect(
      (await queueCall(n, key('k'), { item: ['dup'] })).Data.key,
      'still within the window after the restart',
    ).to.deep.equal(second.Data.keys);
    await sleep(1100);
    n = await restart({ DedupWindow: '1s' });
    expect((await queueCall(n, key('k'), { item: ['3'] })).Data.duplicate, 'the window passed while stopped').to.equal(
      undefined,
    );
    await until(() => deliveries().length === 3);
    expect(deliveries().map((d) => d.message.Data.item![0])).to.deep.equal(['1', '2', '3']);
  });

  it('two enqueues with one key racing into one commit make one entry; both answers name it', async () => {
    const n = await start();
    const answers = await Promise.all([1, 2, 3].map((i) => queueCall(n, key('race'), { item: [String(i)] })));
    expect(answers.map((a) => a.Code)).to.deep.equal([200, 200, 200]);
    const entry = answers[0]!.Data.keys![0]!;
    expect(answers.slice(1).map((a) => a.Data.key)).to.deep.equal([[entry], [entry]]);
    expect(answers.slice(1).map((a) => a.Data.duplicate)).to.deep.equal([['true'], ['true']]);
    await until(() => deliveries().length === 1);
    await sleep(300);
    expect(deliveries()).to.have.length(1);
  });

  it('a duplicate waiting for a first entry whose write fails gets that failure; the key is then free', async () => {
    const n = await start({ MaxStoreBytes: 200_000, StartPaused: true });
    const big = 'x'.repeat(20_000);
    for (let i = 0; i < 40 && (await queueCall(n, {}, { blob: [big] })).Code === 200; i++);
    const [first, dup] = await Promise.all([
      queueCall(n, key('full'), { blob: [big] }),
      queueCall(n, key('full'), { blob: ['small'] }),
    ]);
    expect([first.Code, dup.Code], dup.Message).to.deep.equal([507, 507]);
    await queueCall(n, { command: ['clear'] });
    const again = await queueCall(n, key('full'), { blob: ['small'] });
    expect(again.Code, again.Message).to.equal(200);
    expect(again.Data.duplicate).to.equal(undefined);
  });

  it('a bad key is a 400 naming the control and adds nothing; DedupWindow 0 ignores the control', async () => {
    let n = await start({ StartPaused: true });
    const bad = await queueCall(n, key('x'.repeat(201)), { item: ['a'] });
    expect(bad.Code).to.equal(400);
    expect(bad.Message).to.equal('control idempotency-key is 201 characters long; it may be at most 200');
    expect((await queueCall(n, key(''))).Message).to.match(/^control idempotency-key is empty/);
    expect((await queueCall(n, { command: ['status'] })).Data.queuesize).to.deep.equal(['0']);
    n = await restart({ DedupWindow: '0' });
    await queueCall(n, key('same'), { item: ['1'] });
    const second = await queueCall(n, key('same'), { item: ['2'] });
    expect(second.Data.duplicate).to.equal(undefined);
    expect((await queueCall(n, key(''), { item: ['3'] })).Code, 'not even read').to.equal(200);
    await until(() => deliveries().length === 3);
    expect(deliveries().map((d) => d.message.Control)).to.deep.equal([{}, {}, {}]);
  });

  it('fan-out entries are deduplicated by their own keys; the request key does not apply to them', async () => {
    const keyed =
      '[[ define "keyed" ]][[ range .Data.item ]][[ $r := newRequest ]][[ $c := newControl ]][[ addValue $c "idempotency-key" (printf "item-%s" .) ]][[ setRequestControl $r $c ]][[ addValue (getRequestData $r) "item" . ]][[ addEntry $r ]][[ end ]][[ end ]]';
    const plain =
      '[[ define "plain" ]][[ $r := newRequest ]][[ addValue (getRequestData $r) "item" "plain" ]][[ addEntry $r ]][[ end ]]';
    const n = await start({ Template: keyed + plain, StartPaused: true });
    const r = await queueCall(n, { template_define: ['keyed'] }, { item: ['a', 'b', 'a'] });
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data.queuesize).to.deep.equal(['2']);
    expect(r.Data.duplicates).to.deep.equal(['1']);
    expect(r.Data.keys).to.have.length(3);
    expect(r.Data.keys![2]).to.equal(r.Data.keys![0]);
    const next = await queueCall(n, { template_define: ['keyed'] }, { item: ['b', 'c'] });
    expect(next.Data.queuesize).to.deep.equal(['1']);
    expect(next.Data.keys![0]).to.equal(r.Data.keys![1]);
    for (let i = 0; i < 2; i++)
      expect((await queueCall(n, { template_define: ['plain'], ...key('request') })).Data.queuesize).to.deep.equal([
        '1',
      ]);
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().length === 5);
    await sleep(200);
    expect(deliveries().map((d) => d.message.Data.item![0])).to.deep.equal(['a', 'b', 'c', 'plain', 'plain']);
  });

  it('through a strict gateway: the Idempotency-Key header is the control when ControlAllowList has it', async () => {
    const gateway = (allow: string): { service: 'gateway' } & Record<string, string | number | boolean> => ({
      service: 'gateway',
      NAME: 'gw',
      Port: 0,
      Strict: true,
      OUTPUTCHANNEL: 'queue',
      ControlAllowList: allow,
    });
    let n = await start({ StartPaused: true }, [gateway('command,idempotency-key')]);
    const post = async (
      item: string,
    ): Promise<{ status: number; body: { Code: number; Data: Record<string, string[]> } }> => {
      const port = n.services.find((s) => s.kind === 'gateway')!.running.status().port as number;
      const res = await request(`http://127.0.0.1:${port}/queue/action`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': 'order-9' },
        body: JSON.stringify({ item: [item] }),
      });
      return {
        status: res.statusCode,
        body: (await res.body.json()) as { Code: number; Data: Record<string, string[]> },
      };
    };
    const first = await post('first');
    expect(first.status).to.equal(200);
    const second = await post('second');
    expect(second.status).to.equal(200);
    expect(second.body.Data).to.deep.equal({
      key: first.body.Data.keys,
      queuesize: ['1'],
      status: ['paused'],
      duplicate: ['true'],
    });
    await n.stop(2000);
    node = undefined;
    n = await start({ StartPaused: true, PersistPath: join(dir, 'store2') }, [gateway('command')]);
    await post('first');
    expect(
      (await post('second')).body.Data.queuesize,
      'without the allow-list entry the header is not a control',
    ).to.deep.equal(['2']);
  });
});
