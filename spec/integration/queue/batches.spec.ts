/**
 * Batches (README, The queue: Batches), on both stores: BatchSize entries for one channel (and one
 * group) leave as one message, Data as parallel lists and Control keys; a partial batch waits
 * BatchWindow; a real SQL service (SQLite, SQL_BATCH with SQL_ROWCODES) answers a code per row, so
 * one bad entry of 100 is retried and dead-lettered alone while the 99 are done; a Result without
 * codes applies to every entry; codes of the wrong length fail every entry with 502.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import type { Result } from '../../../protocol/message.js';
import { mapOf } from '../../../protocol/message.js';
import { ConfigError } from '../../../protocol/errors.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

interface StoredEntry {
  key: string;
  attempts: number;
  history: { code: number; message: string; batch?: number }[];
}

describe('queue batches (BatchSize, BatchWindow)', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  let dir: string;
  const sent = (): ReturnType<typeof recorded> => recorded(join(dir, 'target.jsonl'));
  const start = async (
    extra: Record<string, string | number | boolean> = {},
    more: Array<{ service: 'echo' | 'sql' } & Record<string, string | number | boolean>> = [],
  ): Promise<HiveNode> =>
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
      ...more,
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        ...extra,
      },
    ])).node;
  const status = async (n: HiveNode): Promise<Result> => queueCall(n, { command: ['status'] });
  const count = async (n: HiveNode, state: string): Promise<number> =>
    Number((await status(n)).Data[state]?.[0] ?? NaN);
  const fetch = async (n: HiveNode, key: string): Promise<StoredEntry> =>
    (await queueCall(n, { command: ['fetch'], key: [key] })).List![0] as StoredEntry;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('delivers BatchSize waiting entries as one message: Data as parallel lists, Control keys in order', async () => {
    const n = await start({ BatchSize: 5, StartPaused: true });
    const keys: string[] = [];
    for (let i = 0; i < 12; i++)
      keys.push((await queueCall(n, {}, { item: [`i${i}`], n: [String(i)] })).Data.keys![0]!);
    await queueCall(n, { command: ['resume'] });
    await until(() => sent().length === 3);
    await until(async () => (await status(n)).Data.queuesize![0] === '0');
    const messages = sent().map((r) => r.message);
    expect(messages.map((m) => m.Data.item)).to.deep.equal([
      ['i0', 'i1', 'i2', 'i3', 'i4'],
      ['i5', 'i6', 'i7', 'i8', 'i9'],
      ['i10', 'i11'],
    ]);
    expect(messages[1]!.Data.n).to.deep.equal(['5', '6', '7', '8', '9']);
    expect(messages.flatMap((m) => m.Control.keys)).to.deep.equal(keys);
    const figures = node!.services.find((s) => s.name === 'queue')!.running.status() as Record<string, unknown>;
    expect(figures.batches).to.equal(3);
    expect(figures.batchedEntries).to.equal(12);
    expect(figures.delivered).to.equal(12);
  });

  it('a partial batch waits BatchWindow for more entries, then goes anyway', async () => {
    const n = await start({ BatchSize: 10, BatchWindow: '800ms' });
    const t0 = Date.now();
    await queueCall(n, {}, { item: ['a'] });
    await sleep(200);
    await queueCall(n, {}, { item: ['b'] });
    await queueCall(n, {}, { item: ['c'] });
    await sleep(300);
    expect(sent(), 'not before the window is over').to.have.length(0);
    await until(() => sent().length === 1, 5000);
    expect(Date.now() - t0).to.be.at.least(750);
    expect(sent()[0]!.message.Data.item).to.deep.equal(['a', 'b', 'c']);
    // a full batch does not wait
    const t1 = Date.now();
    for (let i = 0; i < 10; i++) await queueCall(n, {}, { item: [`f${i}`] });
    await until(() => sent().length === 2, 5000);
    expect(sent()[1]!.message.Data.item).to.have.length(10);
    expect(Date.now() - t1).to.be.below(800);
  });

  it('with GroupBy a batch holds one group, in the order of arrival', async () => {
    const n = await start({ BatchSize: 10, GroupBy: 'customer', GroupConcurrency: 1, StartPaused: true });
    for (let i = 0; i < 6; i++) await queueCall(n, {}, { customer: [i % 2 === 0 ? 'a' : 'b'], item: [`x${i}`] });
    await queueCall(n, {}, { customer: ['a'], item: ['other'] }).then((r) => expect(r.Code).to.equal(200));
    await queueCall(n, { command: ['resume'] });
    await until(() => sent().length === 2);
    const byCustomer = Object.fromEntries(sent().map((r) => [r.message.Data.customer![0]!, r.message.Data]));
    expect(byCustomer.a!.item).to.deep.equal(['x0', 'x2', 'x4', 'other']);
    expect(byCustomer.a!.customer).to.deep.equal(['a', 'a', 'a', 'a']);
    expect(byCustomer.b!.item).to.deep.equal(['x1', 'x3', 'x5']);
    // a group without a limit on the gate still batches per group
    await node!.stop(2000);
    dir = tempDir();
    const m = await start({ BatchSize: 10, GroupBy: 'customer', StartPaused: true });
    for (let i = 0; i < 4; i++) await queueCall(m, {}, { customer: [i % 2 === 0 ? 'a' : 'b'], item: [`y${i}`] });
    await queueCall(m, { command: ['resume'] });
    await until(() => sent().length === 2);
    expect(
      sent()
        .map((r) => r.message.Data.item)
        .sort(),
    ).to.deep.equal([
      ['y0', 'y2'],
      ['y1', 'y3'],
    ]);
  });

  it('with GroupConcurrency a batch waiting out its BatchWindow takes the entries of its group that come meanwhile', async () => {
    const n = await start({ BatchSize: 10, BatchWindow: '700ms', GroupBy: 'customer', GroupConcurrency: 1 });
    await queueCall(n, {}, { customer: ['a'], item: ['a1'] });
    await sleep(250);
    await queueCall(n, {}, { customer: ['a'], item: ['a2'] });
    await queueCall(n, {}, { customer: ['b'], item: ['b1'] });
    await until(() => sent().length === 2, 5000);
    expect(sent().map((r) => r.message.Data.item)).to.deep.equal([['a1', 'a2'], ['b1']]);
  });

  it('a batch of 100 into a SQLite SQL service: the one bad row is retried and dead alone, the 99 are done', async () => {
    const db = join(dir, 'rows.sqlite');
    const init = join(dir, 'init.sql');
    writeFileSync(init, 'CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, n INTEGER NOT NULL CHECK (n >= 0));\n');
    const sql = {
      service: 'sql' as const,
      NAME: 'rows',
      SQL_DATABASE: db,
      SQL_INITFILE: init,
      SQL_STATEMENT: 'INSERT',
      SQL_TABLE: 'items',
      SQL_COLUMNS: 'id, n',
      SQL_VALUEPARAMS: 'id, n',
      SQL_BATCH: true,
      SQL_ROWCODES: true,
    };
    const counter = {
      service: 'sql' as const,
      NAME: 'counted',
      SQL_DATABASE: db,
      SQL_STATEMENT: 'SELECT',
      SQL_TABLE: 'items',
      SQL_COLUMNS: 'id',
    };
    const n = await start({ BatchSize: 100, StartPaused: true, DefaultChannel: 'rows', DeadRetention: '1h' }, [
      sql,
      counter,
    ]);
    const keys: string[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await queueCall(
        n,
        { requeue_timer: ['1'], requeue_count: ['1'] },
        { id: [`id${i}`], n: [i === 42 ? '-1' : String(i)] },
      );
      keys.push(r.Data.keys![0]!);
    }
    await queueCall(n, { command: ['resume'] });
    await until(async () => (await count(n, 'dead')) === 1, 20_000);
    expect((await status(n)).Data.queuesize).to.deep.equal(['0']);
    const rowsIn = await n.hive.call(
      'counted',
      { Class: 'sql', Operation: 'select', Control: mapOf({}), Data: mapOf({}) },
      5000,
    );
    expect(rowsIn.Data.id, rowsIn.Message).to.have.length(99);
    expect(rowsIn.Data.id).not.to.include('id42');
    const bad = await fetch(n, keys[42]!);
    expect(bad.attempts).to.equal(2);
    expect(bad.history.map((h) => [h.code, h.batch])).to.deep.equal([
      [400, 100],
      [400, 1],
    ]);
    expect(bad.history[0]!.message).to.match(/CHECK constraint failed/);
    const good = await queueCall(n, { command: ['fetch'], key: [keys[41]!] });
    expect(good.Code, 'a done entry is removed (DoneRetention 0)').to.equal(404);
    const figures = node!.services.find((s) => s.name === 'rows')!.running.status() as Record<string, unknown>;
    expect(figures.rowRedos, 'the first batch and the retry of the bad row were redone row by row').to.equal(2);
  });

  it('SQL_ROWCODES: a batch without a bad row is one statement, never redone', async () => {
    const db = join(dir, 'rows.sqlite');
    const init = join(dir, 'init.sql');
    writeFileSync(init, 'CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, n INTEGER NOT NULL);\n');
    const sql = {
      service: 'sql' as const,
      NAME: 'rows',
      SQL_DATABASE: db,
      SQL_INITFILE: init,
      SQL_STATEMENT: 'INSERT',
      SQL_TABLE: 'items',
      SQL_COLUMNS: 'id, n',
      SQL_VALUEPARAMS: 'id, n',
      SQL_BATCH: true,
      SQL_ROWCODES: true,
    };
    const n = await start({}, [sql]);
    const r = await n.hive.call(
      'rows',
      {
        Class: 'sql',
        Operation: 'insert',
        Control: mapOf({}),
        Data: mapOf({ id: ['a', 'b', 'c'], n: ['1', '2', '3'] }),
      },
      5000,
    );
    expect(r.Code).to.equal(200);
    expect(r.Data.codes).to.deep.equal(['200', '200', '200']);
    expect(r.Data.affected).to.deep.equal(['3']);
    const figures = node!.services.find((s) => s.name === 'rows')!.running.status() as Record<string, unknown>;
    expect(figures.rowRedos).to.equal(0);
    const partly = await n.hive.call(
      'rows',
      {
        Class: 'sql',
        Operation: 'insert',
        Control: mapOf({}),
        Data: mapOf({ id: ['d', 'a', 'e'], n: ['4', '5', 'x'] }),
      },
      5000,
    );
    expect(partly.Code, partly.Message).to.equal(207);
    expect(partly.Data.codes).to.deep.equal(['200', '400', '200']);
    expect(partly.Data.messages![1]).to.match(/UNIQUE/);
    expect(partly.Data.affected).to.deep.equal(['2']);
  });

  it('a Result without codes applies to every entry of the batch', async () => {
    // a window: the four entries' retries come due a few ms apart (on JetStream their outcomes are written one by one)
    const n = await start({
      BatchSize: 10,
      BatchWindow: '500ms',
      StartPaused: true,
      DefaultChannel: 'failing',
      DeadRetention: '1h',
    });
    let calls = 0;
    await n.hive.listen('failing', (d) => {
      calls++;
      d.respond({ Code: 503, Message: 'down', Data: mapOf({}), List: [] });
    });
    const keys: string[] = [];
    for (let i = 0; i < 4; i++)
      keys.push(
        (await queueCall(n, { requeue_timer: ['1'], requeue_count: ['1'] }, { item: [`i${i}`] })).Data.keys![0]!,
      );
    await queueCall(n, { command: ['resume'] });
    await until(async () => (await count(n, 'dead')) === 4, 20_000);
    expect(calls, 'each attempt of the four entries was one batch').to.equal(2);
    for (const key of keys)
      expect((await fetch(n, key)).history.map((h) => [h.code, h.batch])).to.deep.equal([
        [503, 4],
        [503, 4],
      ]);
  });

  it('codes of the wrong length fail every entry with 502 naming the mismatch; right ones fail the named entry alone', async () => {
    const n = await start({
      BatchSize: 10,
      StartPaused: true,
      DefaultChannel: 'answering',
      DeadRetention: '1h',
      RetryOn: 'retryable',
    });
    let wrong = true;
    await n.hive.listen('answering', (d) => {
      const keys = d.message.Control.keys!;
      const codes = wrong ? ['200'] : keys.map((_, i) => (i === 1 ? '422' : '200'));
      wrong = false;
      d.respond({ Code: 200, Message: 'Success', Data: mapOf({ codes }), List: [] });
    });
    const keys: string[] = [];
    for (let i = 0; i < 3; i++)
      keys.push(
        (await queueCall(n, { requeue_timer: ['1'], requeue_count: ['2'] }, { item: [`i${i}`] })).Data.keys![0]!,
      );
    await queueCall(n, { command: ['resume'] });
    await until(async () => (await count(n, 'dead')) === 1, 20_000);
    expect((await status(n)).Data.queuesize).to.deep.equal(['0']);
    const dead = await fetch(n, keys[1]!);
    expect(dead.history.map((h) => h.code)).to.deep.equal([502, 422]);
    expect(dead.history[0]!.message).to.match(/1 code\(s\) in Data codes for a batch of 3 entries/);
    expect(
      (await queueCall(n, { command: ['fetch'], key: [keys[0]!] })).Code,
      'the others are done after their second attempt',
    ).to.equal(404);
  });

  it('refuses BatchSize with GroupOrder, and a BatchWindow too long, naming the parameter', async () => {
    for (const [extra, message] of [
      [
        { BatchSize: 10, GroupBy: 'customer', GroupOrder: 'strict' },
        /GroupOrder strict delivers one entry of a group at a time, but BatchSize is 10/,
      ],
      [{ BatchSize: 10, BatchWindow: '30d' }, /BatchWindow/],
      [{ BatchSize: 0 }, /BatchSize/],
    ] as const) {
      const failed = await start(extra).catch((e: unknown) => e);
      expect(failed, JSON.stringify(extra)).to.be.instanceOf(ConfigError);
      expect((failed as Error).message).to.match(message);
    }
  });
});
