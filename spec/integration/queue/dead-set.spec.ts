/**
 * The dead set, kept history and retention: a dead entry is dead-lettered and kept (state `dead`),
 * listed and grouped by `deadletter_reason`, fetched with every attempt, replayed with an edited
 * field and delivered (echo's RecordFile); purge by age; done entries kept for DoneRetention; the
 * retention sweep; per-state counts in status; a dead entry without a target kept, not dropped; the
 * memory store's bound. Deliveries are read from echo RecordFiles.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import type { Result } from '../../../protocol/message.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

type Attempt = { time: string; duration: number; code: number; message: string };

describe('queue dead set, history and retention', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let logs: () => string = () => '';
  let dir: string;
  const file = (name: string): ReturnType<typeof recorded> => recorded(join(dir, `${name}.jsonl`));
  const services = (extra: Record<string, string | number | boolean>): Parameters<typeof startTestNode>[0] => [
    { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
    { service: 'echo', NAME: 'failing', ReplyCode: 500, RecordFile: join(dir, 'failing.jsonl') },
    { service: 'echo', NAME: 'dlq', RecordFile: join(dir, 'dlq.jsonl') },
    {
      service: 'queue',
      NAME: 'queue',
      AllowedChannels: '*',
      PersistPath: join(dir, 'store'),
      DefaultChannel: 'target',
      ...extra,
    },
  ];
  const start = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> => {
    ({ node, logs } = await startTestNode(services(extra)));
    return node;
  };
  const restart = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> => {
    await node?.stop(2000);
    node = undefined;
    return start(extra);
  };
  const figures = (n: HiveNode): Record<string, unknown> =>
    n.services.find((s) => s.kind === 'queue')!.running.status();
  /** Adds an entry for the failing channel that dies after 1 + `retries` attempts. */
  const doomed = async (
    n: HiveNode,
    retries: number,
    control: Record<string, string[]> = {},
    data: Record<string, string[]> = { item: ['broken'] },
  ): Promise<string> => {
    const r = await queueCall(
      n,
      { channel: ['failing'], requeue_timer: ['0'], requeue_count: [String(retries)], ...control },
      data,
    );
    expect(r.Code, r.Message).to.equal(200);
    return r.Data.keys![0]!;
  };
  const history = (r: Result): Attempt[] => (r.List![0] as { history: Attempt[] }).history;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('a dead entry is dead-lettered and kept: listed by deadletter_reason, replayed with an edited field and channel, delivered', async () => {
    const n = await start();
    const key = await doomed(n, 2, { deadletter_slap: ['dlq'] }, { item: ['broken'], other: ['kept'] });
    await until(() => file('dlq').length === 1 && figures(n).deadKept === 1);
    expect(figures(n)).to.include({ deadLettered: 1, dropped: 0, size: 0 });
    const reason = 'no success after 3 attempt(s)';
    const byReason = await queueCall(n, { command: ['list'], state: ['dead'], groupby: ['deadletter_reason'] });
    expect(byReason.Code, byReason.Message).to.equal(200);
    expect(byReason.Data[reason]).to.deep.equal(['1']);
    expect(byReason.Data.dead).to.deep.equal(['1']);
    expect(
      (await queueCall(n, { command: ['list'], state: ['dead'], groupby: ['deadletter_reason'], list: [reason] })).Data
        .objects,
    ).to.deep.equal([key]);
    expect(
      (await queueCall(n, { command: ['list'], state: ['dead'], groupby: ['item'], list: ['other'] })).Data.objects,
    ).to.deep.equal([]);
    const dead = await queueCall(n, { command: ['fetch'], key: [key] });
    expect(dead.Data).to.include.keys('ended');
    expect(dead.Data.state).to.deep.equal(['dead']);
    expect(dead.Data.deadletter_reason).to.deep.equal([reason]);
    expect(history(dead).map((a) => a.code)).to.deep.equal([500, 500, 500]);
    for (const a of history(dead)) expect(a.duration).to.be.a('number').and.at.least(0);

    const replayed = await queueCall(n, { command: ['replay'], key: [key], channel: ['target'] }, { item: ['fixed'] });
    expect(replayed.Code, replayed.Message).to.equal(200);
    expect(replayed.Data.replayed).to.deep.equal(['1']);
    await until(() => file('target').length === 1);
    expect(file('target')[0]!.message.Data).to.deep.equal({ item: ['fixed'], other: ['kept'] });
    await until(() => figures(n).size === 0);
    const status = await queueCall(n, { command: ['status'] });
    expect(status.Data.dead).to.deep.equal(['0']);
    expect(
      (await queueCall(n, { command: ['fetch'], key: [key] })).Code,
      'delivered and DoneRetention 0: gone',
    ).to.equal(404);
  });

  it('fetch gives all 1 + requeue_count attempts of a dead entry, also after a restart; DoneRetention keeps delivered entries as done', async () => {
    let n = await start({ DoneRetention: '1h' });
    const key = await doomed(n, 24);
    const good = (await queueCall(n, {}, { item: ['fine'] })).Data.keys![0]!;
    await until(() => figures(n).deadKept === 1 && figures(n).doneKept === 1, 10_000);
    n = await restart({ DoneRetention: '1h' });
    const dead = await queueCall(n, { command: ['get'], key: [key] });
    expect(history(dead)).to.have.length(25);
    expect(dead.Data.attempts).to.deep.equal(['25']);
    const done = await queueCall(n, { command: ['fetch'], key: [good] });
    expect(done.Data.state).to.deep.equal(['done']);
    expect(history(done).map((a) => a.code)).to.deep.equal([200]);
    expect(Date.parse(done.Data.ended![0]!)).to.be.at.least(Date.parse(done.Data.created![0]!));
    const status = await queueCall(n, { command: ['status'] });
    expect(status.Data).to.deep.include({ queuesize: ['0'], dead: ['1'], done: ['1'] });
    expect((await queueCall(n, { command: ['list'], state: ['done'] })).Data.objects).to.deep.equal([good]);
    const purged = await queueCall(n, { command: ['purge'], state: ['done'] });
    expect(purged.Data.purged).to.deep.equal(['1']);
    expect((await queueCall(n, { command: ['status'] })).Data.done).to.deep.equal(['0']);
  });

  it('purge by age removes only the older dead entries; refusals name what is allowed', async () => {
    const n = await start();
    const older = await doomed(n, 0);
    await until(() => figures(n).deadKept === 1);
    await sleep(1200);
    const newer = await doomed(n, 0);
    await until(() => figures(n).deadKept === 2);
    expect((await queueCall(n, { command: ['list'], state: ['dead'], newer_than: ['1s'] })).Data.objects).to.deep.equal(
      [newer],
    );
    const purged = await queueCall(n, { command: ['purge'], older_than: ['1s'] });
    expect(purged.Code, purged.Message).to.equal(200);
    expect(purged.Data.purged).to.deep.equal(['1']);
    expect((await queueCall(n, { command: ['list'], state: ['dead'] })).Data.objects).to.deep.equal([newer]);
    expect((await queueCall(n, { command: ['fetch'], key: [older] })).Code).to.equal(404);
    const refused = await queueCall(n, { command: ['purge'], state: ['waiting'] });
    expect(refused.Code).to.equal(400);
    expect(refused.Message).to.match(/purge takes state dead or done, got 'waiting'/);
    const badAge = await queueCall(n, { command: ['purge'], older_than: ['a week'] });
    expect(badAge.Code).to.equal(400);
    expect(badAge.Message).to.match(/control older_than 'a week' is not a duration/);
    expect((await queueCall(n, { command: ['purge'], key: ['no-such-key'] })).Code).to.equal(404);
    expect((await queueCall(n, { command: ['purge'], key: [newer] })).Data.purged).to.deep.equal(['1']);
    expect((await queueCall(n, { command: ['status'] })).Data.dead).to.deep.equal(['0']);
  });

  it('replay by filter resets attempts and keeps the history; unknown key 404, a live key 400, edits without a key 400, no match replays 0', async () => {
    const n = await start();
    const a = await doomed(n, 1, {}, { item: ['a'] });
    const b = await doomed(n, 1, {}, { item: ['b'] });
    await until(() => figures(n).deadKept === 2);
    expect(
      (await queueCall(n, { command: ['replay'], groupby: ['item'], list: ['none'] })).Data.replayed,
    ).to.deep.equal(['0']);
    const replayed = await queueCall(n, { command: ['replay'], groupby: ['channel'], list: ['failing'] });
    expect(replayed.Data.replayed).to.deep.equal(['2']);
    await until(() => figures(n).deadKept === 2 && file('failing').length === 8);
    for (const key of [a, b]) {
      const f = await queueCall(n, { command: ['fetch'], key: [key] });
      expect(f.Data.attempts, 'counted again from 0').to.deep.equal(['2']);
      expect(history(f), 'the history runs on').to.have.length(4);
      expect((f.List![0] as { replayedAt: string[] }).replayedAt).to.have.length(1);
    }
    expect((await queueCall(n, { command: ['replay'], key: ['no-such-key'] })).Code).to.equal(404);
    const paused = await queueCall(n, { command: ['pause'] });
    expect(paused.Code).to.equal(200);
    const waiting = (await queueCall(n, {}, { item: ['w'] })).Data.keys![0]!;
    const live = await queueCall(n, { command: ['replay'], key: [waiting] });
    expect(live.Code).to.equal(400);
    expect(live.Message).to.match(/is waiting: only dead entries are replayed/);
    const edits = await queueCall(n, { command: ['replay'] }, { item: ['x'] });
    expect(edits.Code).to.equal(400);
    expect(edits.Message).to.match(/apply to one entry: name it with control key/);
    expect((await queueCall(n, { command: ['replay'], state: ['done'] })).Code).to.equal(400);
  });

  it('a dead entry without a dead-letter target is kept, not dropped; DeadRetention sweeps it away when it has passed', async () => {
    const n = await start({ DeadRetention: '1s' });
    await doomed(n, 0);
    await until(() => figures(n).deadKept === 1);
    expect(figures(n)).to.include({ dropped: 0, deadLettered: 0 });
    await until(() => /kept in the dead set after 1 attempt\(s\)/.test(logs()), 1000);
    await until(() => figures(n).deadKept === 0, 5000);
    await until(() => /queue retention removed 1 dead entry \(DeadRetention\)/.test(logs()), 1000);
    expect((await queueCall(n, { command: ['list'], state: ['dead'] })).Data.objects).to.deep.equal([]);
  });

  it('status and list carry the count of each state: waiting, scheduled, retrying, dead, done', async () => {
    const n = await start({ StartPaused: true, DoneRetention: '1h' });
    await queueCall(n, {}, { item: ['w1'] });
    await queueCall(n, {}, { item: ['w2'] });
    await queueCall(n, { delay: ['1h'] }, { item: ['s'] });
    const retrying = await queueCall(n, { channel: ['failing'], requeue_timer: ['60'] }, { item: ['r'] });
    expect((await queueCall(n, { command: ['step'], key: retrying.Data.keys! })).Data.result_code).to.deep.equal([
      '500',
    ]);
    const dead = await queueCall(n, { channel: ['failing'], requeue_count: ['0'] }, { item: ['d'] });
    await queueCall(n, { command: ['step'], key: dead.Data.keys! });
    const done = await queueCall(n, {}, { item: ['ok'] });
    await queueCall(n, { command: ['step'], key: done.Data.keys! });
    await until(() => figures(n).deadKept === 1 && figures(n).doneKept === 1);
    const counts = {
      waiting: ['2'],
      scheduled: ['1'],
      retrying: ['1'],
      dead: ['1'],
      done: ['1'],
      queuesize: ['4'],
      status: ['paused'],
    };
    expect((await queueCall(n, { command: ['status'] })).Data).to.deep.equal(counts);
    const list = await queueCall(n, { command: ['list'], older_than: ['1h'] });
    expect(list.Data).to.deep.equal({ ...counts, objects: [] });
  });

  it('without persistence the kept entries are held in memory, at most Capacity of them, the oldest dropped first', async () => {
    const n = await start({ PersistPath: '', Capacity: 2 });
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      keys.push(await doomed(n, 0));
      await until(() => figures(n).size === 0);
    }
    await until(() => (figures(n).deadKept as number) === 2);
    expect((await queueCall(n, { command: ['list'], state: ['dead'] })).Data.objects).to.deep.equal(keys.slice(1));
    await until(() => /keeps at most 2 dead and done entries in memory/.test(logs()), 1000);
    expect(logs().match(/keeps at most 2 dead and done entries in memory/g)).to.have.length(1);
    expect(
      (await queueCall(n, { command: ['replay'], key: [keys[2]!], channel: ['target'] })).Data.replayed,
    ).to.deep.equal(['1']);
    await until(() => file('target').length === 1);
  });

  it('list pages its keys with list_offset and list_limit, counting every match in total — dead entries from the store and live ones alike', async () => {
    const n = await start();
    const dead: string[] = [];
    for (let i = 0; i < 7; i++) dead.push(await doomed(n, 0, {}, { item: [i % 2 === 0 ? 'even' : 'odd'] }));
    await until(() => figures(n).deadKept === 7);
    const all = (await queueCall(n, { command: ['list'], state: ['dead'] })).Data.objects!;
    expect([...all].sort()).to.deep.equal([...dead].sort());
    const page = async (control: Record<string, string[]>): Promise<Result> =>
      queueCall(n, { command: ['list'], ...control });
    const second = await page({ state: ['dead'], list_offset: ['3'], list_limit: ['3'] });
    expect(second.Code, second.Message).to.equal(200);
    expect(second.Data.objects).to.deep.equal(all.slice(3, 6));
    expect(second.Data.total).to.deep.equal(['7']);
    expect((await page({ state: ['dead'], list_offset: ['6'] })).Data.objects).to.deep.equal(all.slice(6));
    expect((await page({ state: ['dead'], list_offset: ['9'], list_limit: ['5'] })).Data).to.deep.include({
      objects: [],
      total: ['7'],
    });
    // a group's keys page alike
    const odd = await page({ state: ['dead'], groupby: ['item'], list: ['odd'], list_limit: ['2'] });
    expect(odd.Data.total).to.deep.equal(['3']);
    expect(odd.Data.objects).to.have.length(2);
    // live entries (from memory) page the same way; without the controls the answer is as it always was
    const paused = await queueCall(n, { command: ['pause'] });
    expect(paused.Code).to.equal(200);
    for (let i = 0; i < 5; i++) await queueCall(n, {}, { item: [`w${i}`] });
    const waiting = (await page({ state: ['waiting'] })).Data;
    expect(waiting).to.not.have.property('total');
    expect((await page({ state: ['waiting'], list_offset: ['1'], list_limit: ['2'] })).Data).to.deep.include({
      objects: waiting.objects!.slice(1, 3),
      total: ['5'],
    });
    // bad pages are refused, naming the control
    const refusals: Array<[Record<string, string[]>, string]> = [
      [{ list_limit: ['0'] }, "control list_limit is '0'; give a whole number from 1 to 10000"],
      [{ list_limit: ['10001'] }, 'list_limit'],
      [{ list_offset: ['-1'] }, "control list_offset is '-1'"],
      [{ list_offset: ['two'] }, 'list_offset'],
      [{ groupby: ['item'], list_limit: ['2'] }, 'a groupby without list answers counts, which have no pages'],
    ];
    for (const [control, text] of refusals) {
      const r = await page({ state: ['dead'], ...control });
      expect(r.Code, JSON.stringify(control)).to.equal(400);
      expect(r.Message).to.include(text);
    }
  });
});
