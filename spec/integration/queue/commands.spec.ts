import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue commands', function () {
  this.timeout(20_000);
  let node: HiveNode | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  const start = async (queue: Record<string, string | number | boolean> = {}): Promise<HiveNode> => {
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'main', RecordFile: join(dir, 'main.jsonl') },
      { service: 'echo', NAME: 'other', RecordFile: join(dir, 'other.jsonl') },
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store'), ...queue },
    ]));
    return node;
  };

  it('adds an entry (queuesize) and delivers it to DefaultChannel; the record file proves delivery', async () => {
    const n = await start();
    const r = await queueCall(n, {}, { item: ['a'] });
    expect(r).to.deep.include({ Code: 200, Message: 'Success', List: [] });
    expect(r.Data.queuesize).to.have.length(1);
    expect(r.Data.status).to.deep.equal(['running']);
    await until(() => recorded(join(dir, 'main.jsonl')).length === 1);
    const got = recorded(join(dir, 'main.jsonl'))[0]!;
    expect(got.message.Data).to.deep.equal({ item: ['a'] });
    expect(got.message.Class).to.equal('queue');
    await until(() => (n.services.find((s) => s.kind === 'queue')!.running.status().size as number) === 0);
  });

  it('the channel control overrides the target; queue controls are not passed on, others are', async () => {
    const n = await start();
    await queueCall(n, { channel: ['other'], custom: ['kept'] }, { item: ['b'] });
    await until(() => recorded(join(dir, 'other.jsonl')).length === 1);
    const got = recorded(join(dir, 'other.jsonl'))[0]!;
    expect(got.message.Control).to.deep.equal({ custom: ['kept'] });
  });

  it('status, pause/stop, unpause/resume/start: paused stops delivery, not enqueueing', async () => {
    const n = await start();
    for (const alias of ['pause', 'stop']) {
      const r = await queueCall(n, { command: [alias] });
      expect(r.Data.status).to.deep.equal(['paused']);
    }
    await queueCall(n, {}, { i: ['1'] });
    await queueCall(n, {}, { i: ['2'] });
    const status = await queueCall(n, { command: ['status'] });
    expect(status.Data).to.deep.equal({
      waiting: ['2'],
      scheduled: ['0'],
      retrying: ['0'],
      dead: ['0'],
      done: ['0'],
      queuesize: ['2'],
      status: ['paused'],
    });
    await sleep(200);
    expect(recorded(join(dir, 'main.jsonl'))).to.have.length(0);
    for (const alias of ['unpause', 'resume', 'start']) {
      const r = await queueCall(n, { command: [alias] });
      expect(r.Data.status).to.deep.equal(['running']);
    }
    await until(() => recorded(join(dir, 'main.jsonl')).length === 2);
    expect(recorded(join(dir, 'main.jsonl')).map((x) => x.message.Data.i![0])).to.deep.equal(['1', '2']);
  });

  it('list/show gives objects; groupby counts per value; list restricts to one value; state filters', async () => {
    const n = await start({ StartPaused: true });
    await queueCall(n, { channel: ['a'] }, { kind: ['x'] });
    await queueCall(n, { channel: ['a'] }, { kind: ['y'] });
    await queueCall(n, { channel: ['b'] }, { kind: ['x'] });
    const all = await queueCall(n, { command: ['show'] });
    expect(all.Data.objects).to.have.length(3);
    expect(all.Data.queuesize).to.deep.equal(['3']);
    const grouped = await queueCall(n, { command: ['list'], groupby: ['channel'] });
    expect(grouped.Data).to.deep.equal({
      a: ['2'],
      b: ['1'],
      waiting: ['3'],
      scheduled: ['0'],
      retrying: ['0'],
      dead: ['0'],
      done: ['0'],
      queuesize: ['3'],
      status: ['paused'],
    });
    const byData = await queueCall(n, { command: ['list'], groupby: ['kind'] });
    expect(byData.Data.x).to.deep.equal(['2']);
    const one = await queueCall(n, { command: ['list'], groupby: ['channel'], list: ['b'] });
    expect(one.Data.objects).to.have.length(1);
    const waiting = await queueCall(n, { command: ['list'], state: ['waiting'] });
    expect(waiting.Data.objects).to.have.length(3);
    const retrying = await queueCall(n, { command: ['list'], state: ['retrying'] });
    expect(retrying.Data.objects).to.deep.equal([]);
    expect((await queueCall(n, { command: ['list'], state: ['bogus'] })).Code).to.equal(400);
  });

  it('get/fetch returns the first entry or the one by key, with its attributes and history', async () => {
    const n = await start({ StartPaused: true });
    const added = await queueCall(n, { channel: ['other'] }, { item: ['first'] });
    await queueCall(n, {}, { item: ['second'] });
    const first = await queueCall(n, { command: ['fetch'] });
    expect(first.Data.item).to.deep.equal(['first']);
    expect(first.Data.key).to.deep.equal(added.Data.keys);
    expect(first.Data.channel).to.deep.equal(['other']);
    expect(first.Data.attempts).to.deep.equal(['0']);
    expect(first.List).to.have.length(1);
    const byKey = await queueCall(n, { command: ['get'], key: added.Data.keys! });
    expect(byKey.Data.item).to.deep.equal(['first']);
    expect((await queueCall(n, { command: ['get'], key: ['nope'] })).Code).to.equal(404);
  });

  it('step/next/one processes the first entry, or the one named by key, even when paused', async () => {
    const n = await start({ StartPaused: true });
    const a = await queueCall(n, {}, { i: ['a'] });
    const b = await queueCall(n, {}, { i: ['b'] });
    void a;
    const stepped = await queueCall(n, { command: ['step'], key: b.Data.keys! });
    expect(stepped.Data).to.deep.include({ queuesize: ['1'], status: ['paused'], result_code: ['200'] });
    expect(recorded(join(dir, 'main.jsonl')).map((x) => x.message.Data.i![0])).to.deep.equal(['b']);
    const next = await queueCall(n, { command: ['next'] });
    expect(next.Data.queuesize).to.deep.equal(['0']);
    expect((await queueCall(n, { command: ['one'] })).Code).to.equal(404);
  });

  it('clear/delete/wipe without key clears all; with key deletes one, and a key that is no entry is 404', async () => {
    const n = await start({ StartPaused: true });
    const a = await queueCall(n, {}, { i: ['a'] });
    await queueCall(n, {}, { i: ['b'] });
    const del = await queueCall(n, { command: ['delete'], key: a.Data.keys! });
    expect(del.Data).to.deep.include({ deleted: ['1'], queuesize: ['1'] });
    // a key that is no entry is 404, as fetch answers it
    const missing = await queueCall(n, { command: ['wipe'], key: ['missing'] });
    expect(missing.Code).to.equal(404);
    expect(missing.Message).to.contain("no entry with key 'missing'");
    for (const alias of ['clear', 'delete', 'wipe']) {
      await queueCall(n, {}, { i: ['x'] });
      const r = await queueCall(n, { command: [alias] });
      expect(r.Data.queuesize).to.deep.equal(['0']);
    }
  });

  it('AutoPause pauses after a run empties the queue; DefaultCommand and unknown commands', async () => {
    const n = await start({ AutoPause: true, DefaultCommand: 'status' });
    const s = await queueCall(n, {}, { i: ['1'] });
    expect(s.Data).to.deep.equal({
      waiting: ['0'],
      scheduled: ['0'],
      retrying: ['0'],
      dead: ['0'],
      done: ['0'],
      queuesize: ['0'],
      status: ['running'],
    });
    await queueCall(n, { command: ['queue'] }, { i: ['1'] });
    await until(() => recorded(join(dir, 'main.jsonl')).length === 1);
    await until(() => (n.services.find((x) => x.kind === 'queue')!.running.status().status as string) === 'paused');
    const bad = await queueCall(n, { command: ['explode'] });
    expect(bad.Code).to.equal(400);
    expect(bad.Message).to.contain("command 'explode' is not known");
  });

  it('refuses bad controls and a full queue with clear errors', async () => {
    const n = await start({ StartPaused: true, Capacity: 2 });
    expect((await queueCall(n, { mode: ['later'] })).Code).to.equal(400);
    expect((await queueCall(n, { requeue_timer: ['soon'] })).Message).to.contain(
      'requeue_timer must be a whole number',
    );
    await queueCall(n, {}, { i: ['1'] });
    await queueCall(n, {}, { i: ['2'] });
    const full = await queueCall(n, {}, { i: ['3'] });
    expect(full.Code).to.equal(507);
    expect(full.Message).to.contain('the queue is full');
    expect((await queueCall(n, { template_define: ['x'] })).Message).to.contain('needs a queue Template');
  });
});
