/**
 * What a careless or hostile caller sends the queue: numbers beyond what it can compute (a
 * requeue_timer of 1e14 s, an age of 9999999999999h), selectors given but empty (`key ""`,
 * `groupby ""`), a filter without the control it needs (`list` without `groupby`), a delete of a key
 * that is no entry. Each is a 400 (404 for the unknown key) naming the control, and nothing is lost:
 * the entries stay, and an entry added after it is delivered. Also the sweep of idempotency keys on
 * an idle queue, and the bounded, cancellable hand-over to a dead-letter target nobody serves.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { request } from 'undici';
import type { HiveNode } from '../../../node/node.js';
import type { Result } from '../../../protocol/message.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue bounds: numbers, ages and selectors checked at the boundary', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let logs: () => string = () => '';
  let dir: string;
  const file = (name: string): ReturnType<typeof recorded> => recorded(join(dir, `${name}.jsonl`));
  const start = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> => {
    ({ node, logs } = await startTestNode([
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
    ]));
    return node;
  };
  const figures = (n: HiveNode): Record<string, unknown> =>
    n.services.find((s) => s.kind === 'queue')!.running.status();
  const refused = (r: Result, code: number, ...parts: string[]): void => {
    expect(r.Code, r.Message).to.equal(code);
    for (const p of parts) expect(r.Message).to.contain(p);
  };
  const dead = async (n: HiveNode, control: Record<string, string[]> = {}): Promise<string> => {
    const r = await queueCall(
      n,
      { channel: ['failing'], requeue_timer: ['0'], requeue_count: ['0'], ...control },
      { item: ['broken'] },
    );
    expect(r.Code, r.Message).to.equal(200);
    return r.Data.keys![0]!;
  };
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('requeue_timer and requeue_count beyond their range are 400 naming them; a long exponential backoff never leaves the dates; the queue keeps delivering', async () => {
    const n = await start({ RequeueBackoff: 'exponential' });
    refused(
      await queueCall(n, { channel: ['failing'], requeue_timer: ['100000000000000'] }, { item: ['x'] }),
      400,
      'requeue_timer',
      '31622400',
    );
    refused(
      await queueCall(n, { channel: ['failing'], requeue_timer: ['9000000000000'] }, { item: ['x'] }),
      400,
      'requeue_timer',
    );
    refused(
      await queueCall(n, { channel: ['failing'], requeue_timer: ['1e14'] }, { item: ['x'] }),
      400,
      'requeue_timer',
    );
    refused(
      await queueCall(n, { channel: ['failing'], requeue_count: ['99999999999'] }, { item: ['x'] }),
      400,
      'requeue_count',
    );
    // the longest timer allowed, doubled at every attempt: stepped 40 times, its due time stays a date
    const r = await queueCall(
      n,
      { channel: ['failing'], requeue_timer: ['31622400'], requeue_count: ['100'] },
      { item: ['long'] },
    );
    expect(r.Code, r.Message).to.equal(200);
    const key = r.Data.keys![0]!;
    const state = async (): Promise<string | undefined> =>
      (await queueCall(n, { command: ['fetch'], key: [key] })).Data.state?.[0];
    for (let i = 0; i < 50 && (await state()) !== 'retrying'; i++) await sleep(20);
    for (let i = 0; i < 40; i++) {
      const step = await queueCall(n, { command: ['step'], key: [key] });
      expect(step.Code, step.Message).to.equal(200);
    }
    const fetched = await queueCall(n, { command: ['fetch'], key: [key] });
    expect(fetched.Code, fetched.Message).to.equal(200);
    expect(fetched.Data.state).to.deep.equal(['retrying']);
    const due = Date.parse(fetched.Data.due![0]!);
    expect(due - Date.now()).to.be.within(300 * 86_400_000, 367 * 86_400_000);
    const ok = await queueCall(n, {}, { item: ['after'] });
    expect(ok.Code, ok.Message).to.equal(200);
    await until(() => file('target').length === 1);
    expect(logs()).to.not.match(/RangeError|Invalid time value|not an integer/);
  });

  it('an age beyond any date (older_than, newer_than) is a 400 naming the control, for list, purge and replay', async () => {
    const n = await start();
    await dead(n);
    await until(() => figures(n).deadKept === 1);
    refused(await queueCall(n, { command: ['purge'], older_than: ['9999999999999h'] }), 400, 'older_than');
    refused(await queueCall(n, { command: ['list'], state: ['dead'], newer_than: ['999999999d'] }), 400, 'newer_than');
    refused(await queueCall(n, { command: ['replay'], older_than: ['99999999999999999999d'] }), 400, 'older_than');
    const list = await queueCall(n, { command: ['list'], state: ['dead'], older_than: ['36500d'] });
    expect(list.Code, list.Message).to.equal(200);
    expect(figures(n).deadKept).to.equal(1);
  });

  it('a selector given but empty is a 400, and a filter without the control it needs is a 400: nothing is cleared, purged or replayed', async () => {
    const n = await start({ StartPaused: true });
    await queueCall(n, {}, { item: ['a'] });
    await queueCall(n, {}, { item: ['b'] });
    await queueCall(n, { command: ['resume'] });
    await until(() => file('target').length === 2);
    await dead(n);
    await dead(n);
    await until(() => figures(n).deadKept === 2);
    await queueCall(n, { command: ['pause'] });
    await queueCall(n, {}, { item: ['c'] });
    refused(await queueCall(n, { command: ['delete'], key: [''] }), 400, 'key');
    refused(await queueCall(n, { command: ['clear'], key: [''] }), 400, 'key');
    refused(await queueCall(n, { command: ['purge'], key: [''] }), 400, 'key');
    refused(await queueCall(n, { command: ['replay'], key: [''] }), 400, 'key');
    refused(await queueCall(n, { command: ['purge'], list: ['zzz'] }), 400, 'groupby');
    refused(await queueCall(n, { command: ['replay'], list: ['zzz'] }), 400, 'groupby');
    refused(await queueCall(n, { command: ['purge'], groupby: [''], list: ['zzz'] }), 400, 'groupby');
    refused(await queueCall(n, { command: ['list'], groupby: [''] }), 400, 'groupby');
    refused(await queueCall(n, { command: ['list'], state: ['dead'], list: ['zzz'] }), 400, 'groupby');
    refused(await queueCall(n, { command: ['list'], state: [''] }), 400, 'state');
    refused(await queueCall(n, { command: ['purge'], state: [''] }), 400, 'state');
    refused(await queueCall(n, { command: ['fetch'], key: [''] }), 400, 'key');
    const status = await queueCall(n, { command: ['status'] });
    expect(status.Data.queuesize).to.deep.equal(['1']);
    expect(figures(n).deadKept).to.equal(2);
    // the spec's clear: the command, and no key
    const cleared = await queueCall(n, { command: ['clear'] });
    expect(cleared.Code, cleared.Message).to.equal(200);
    expect(cleared.Data.queuesize).to.deep.equal(['0']);
  });

  it('delete of a key that is no entry is 404, as fetch is; of a dead one 400 pointing to purge', async () => {
    const n = await start({ StartPaused: true });
    const r = await queueCall(n, {}, { item: ['a'] });
    const key = r.Data.keys![0]!;
    refused(await queueCall(n, { command: ['fetch'], key: ['no-such-key'] }), 404, 'no-such-key');
    refused(await queueCall(n, { command: ['delete'], key: ['no-such-key'] }), 404, 'no-such-key');
    await queueCall(n, { command: ['resume'] });
    const gone = await dead(n);
    await until(() => figures(n).deadKept === 1);
    refused(await queueCall(n, { command: ['delete'], key: [gone] }), 400, 'purge');
    await queueCall(n, { command: ['pause'] });
    const kept = await queueCall(n, {}, { item: ['b'] });
    const deleted = await queueCall(n, { command: ['delete'], key: [kept.Data.keys![0]!] });
    expect(deleted.Code, deleted.Message).to.equal(200);
    expect(deleted.Data.deleted).to.deep.equal(['1']);
    expect(key).to.be.a('string');
  });

  it('an idle queue drops its idempotency keys once DedupWindow has passed, with no enqueue to trigger it', async () => {
    const n = await start({ DedupWindow: '1s' });
    const r = await queueCall(n, { 'idempotency-key': ['order-1'] }, { item: ['a'] });
    expect(r.Code, r.Message).to.equal(200);
    expect(figures(n).idempotencyKeys).to.equal(1);
    await until(() => figures(n).idempotencyKeys === 0, 5000);
  });

  it('a dead-letter target nobody serves: the hand-over is retried DeadLetterRetries times, then the entry stays in the dead set with one line', async () => {
    const n = await start({ DefaultDeadLetterSlap: 'nobody-serves-this', DeadLetterRetries: 2 });
    const key = await dead(n);
    // tries at 0, +1 s and +2 s, then it gives up
    await until(() => figures(n).deadKept === 1, 8000);
    const fetched = await queueCall(n, { command: ['fetch'], key: [key] });
    expect(fetched.Data.state).to.deep.equal(['dead']);
    const warnings = logs()
      .split('\n')
      .filter((l) => l.includes('nobody-serves-this'));
    expect(
      warnings.filter((l) => /warn/i.test(l)),
      logs(),
    ).to.have.length(2);
    expect(logs()).to.contain('no more tries');
    const before = logs().length;
    await sleep(2500);
    expect(logs().slice(before)).to.not.contain('nobody-serves-this');
  });

  it('replaying or purging a dead entry ends its hand-over to the dead-letter target', async () => {
    // at debug level every retry of a hand-over is logged
    const n = await start({ DefaultDeadLetterSlap: 'nobody-serves-this', DeadLetterRetries: 20, LOGLEVEL: 'debug' });
    const replayed = await dead(n);
    const purged = await dead(n);
    await until(() => logs().includes(`refused entry ${replayed}`) && logs().includes(`refused entry ${purged}`));
    const r = await queueCall(n, { command: ['replay'], key: [replayed], channel: ['target'] });
    expect(r.Code, r.Message).to.equal(200);
    const p = await queueCall(n, { command: ['purge'], key: [purged] });
    expect(p.Code, p.Message).to.equal(200);
    await until(() => file('target').length === 1);
    const before = logs().length;
    // without the cancel the next tries come at +1 s, +2 s, +4 s
    await sleep(3500);
    const after = logs().slice(before);
    expect(after).to.not.contain(replayed);
    expect(after).to.not.contain(purged);
  });

  it('a page of the dead set spans the stored dead entries and those still being handed over, in the order of the whole list', async () => {
    const n = await start({ DeadLetterRetries: 50 });
    for (let i = 0; i < 3; i++) await dead(n);
    await until(() => figures(n).deadKept === 3);
    // these two wait for a dead-letter target nobody serves: dead, in memory, not yet in the dead set
    for (let i = 0; i < 2; i++) await dead(n, { deadletter_slap: ['nobody-serves-this'] });
    await until(() => logs().split('refused entry').length === 3);
    const all = (await queueCall(n, { command: ['list'], state: ['dead'] })).Data.objects!;
    expect(all).to.have.length(5);
    for (const [offset, limit] of [
      [0, 2],
      [2, 2],
      [3, 5],
      [4, 1],
      [5, 3],
    ] as const) {
      const r = await queueCall(n, {
        command: ['list'],
        state: ['dead'],
        list_offset: [String(offset)],
        list_limit: [String(limit)],
      });
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.objects, `offset ${offset} limit ${limit}`).to.deep.equal(all.slice(offset, offset + limit));
      expect(r.Data.total).to.deep.equal(['5']);
    }
  });

  it('a queue parameter beyond what the queue computes refuses the start, naming it', async () => {
    for (const [extra, name] of [
      [{ DefaultRequeueTime: 100_000_000_000_000 }, 'DefaultRequeueTime'],
      [{ DefaultRequeueCount: 99_999_999_999 }, 'DefaultRequeueCount'],
      [{ DeadRetention: '9999999999999h' }, 'DeadRetention'],
      [{ DedupWindow: '999999999d' }, 'DedupWindow'],
      [{ CallTimeout: '30d' }, 'CallTimeout'],
      [{ GroupBy: 'customer', GroupRate: '1/9999999h' }, 'GroupRate'],
    ] as const) {
      const refusal = await start(extra).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(refusal, name).to.be.instanceOf(Error);
      expect(refusal!.name, name).to.equal('ConfigError');
      expect(refusal!.message).to.contain(name);
      await node?.stop(2000);
      node = undefined;
    }
  });

  it('through a strict gateway (ControlPrefix _): an empty _key, a _list without _groupby and a huge _requeue_timer are 400; the queue keeps its entries', async () => {
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'failing', ReplyCode: 500 },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'failing',
        StartPaused: true,
      },
      {
        service: 'gateway',
        NAME: 'gw',
        Port: 0,
        Strict: true,
        OUTPUTCHANNEL: 'queue',
        ControlPrefix: '_',
        ControlAllowList: '*',
      },
    ]));
    const port = node.services.find((s) => s.kind === 'gateway')!.running.status().port as number;
    const post = async (body: Record<string, string[]>): Promise<{ status: number; text: string }> => {
      const res = await request(`http://127.0.0.1:${port}/queue/action`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.statusCode, text: await res.body.text() };
    };
    for (let i = 0; i < 3; i++) expect((await post({ item: [String(i)] })).status).to.equal(200);
    for (const [body, name] of [
      [{ _command: ['delete'], _key: [''] }, 'key'],
      [{ _command: ['purge'], _list: ['zzz'] }, 'groupby'],
      [{ _command: ['purge'], _groupby: [''], _list: ['zzz'] }, 'groupby'],
      [{ _command: ['replay'], _key: [''] }, 'key'],
      [{ _requeue_timer: ['100000000000000'], item: ['x'] }, 'requeue_timer'],
      [{ _command: ['purge'], _older_than: ['9999999999999h'] }, 'older_than'],
      [{ _command: ['list'], _state: ['dead'], _newer_than: ['999999999d'] }, 'newer_than'],
    ] as const) {
      const r = await post(body as unknown as Record<string, string[]>);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).to.equal(400);
      expect(r.text).to.contain(name);
    }
    const status = JSON.parse((await post({ _command: ['status'] })).text) as { Data: Record<string, string[]> };
    expect(status.Data.queuesize).to.deep.equal(['3']);
  });
});
