import { expect } from 'chai';
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { ConfigError } from '../../../protocol/errors.js';
import { JournalEvent } from '../../../supervisors/journal.js';
import { sqliteOnly } from '../queue-store.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { until } from '../../support/wait.js';

describe('queue retries, dead letters and durability', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('an always-failing channel gets exactly 1 + requeue_count attempts spaced by requeue_timer, then the dead-letter channel gets the entry with its reason', async () => {
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'failing', ReplyCode: 500, RecordFile: join(dir, 'failing.jsonl') },
      { service: 'echo', NAME: 'dlq', RecordFile: join(dir, 'dlq.jsonl') },
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store') },
    ]));
    await queueCall(
      node,
      { channel: ['failing'], requeue_timer: ['1'], requeue_count: ['2'], deadletter_slap: ['dlq'] },
      { item: ['doomed'] },
    );
    await until(() => recorded(join(dir, 'dlq.jsonl')).length === 1, 10_000);
    const attempts = recorded(join(dir, 'failing.jsonl'));
    expect(attempts).to.have.length(3);
    const times = attempts.map((a) => Date.parse(a.time));
    // never earlier than requeue_timer (1 s); the upper bound only tells the timer from DefaultRequeueTime (30 s)
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).to.be.within(1000, 5000);
    const dead = recorded(join(dir, 'dlq.jsonl'))[0]!;
    expect(dead.message.Data).to.deep.equal({ item: ['doomed'] });
    expect(dead.message.Control.deadletter_reason).to.deep.equal(['no success after 3 attempt(s)']);
    expect(dead.message.Control.attempts).to.deep.equal(['3']);
    expect(dead.message.Control.last_error![0]).to.match(/^500 /);
    await until(() => (node!.services.find((s) => s.kind === 'queue')!.running.status().size as number) === 0);
  });

  it('without a dead-letter target and DeadRetention 0 a dead entry is dropped (and logged); no listener counts as a failure', async () => {
    let logs: () => string;
    ({ node, logs } = await startTestNode([
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store'), DeadRetention: '0' },
    ]));
    await queueCall(node, { channel: ['nobody'], requeue_timer: ['0'], requeue_count: ['1'] }, { item: ['lost'] });
    await until(() => (node!.services.find((s) => s.kind === 'queue')!.running.status().dropped as number) === 1);
    expect(logs()).to.contain('dropped after 2 attempt(s): 404');
  });

  it('fetch shows the attempt history of a retrying entry', async () => {
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'failing', ReplyCode: 503 },
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store') },
    ]));
    const added = await queueCall(node, { channel: ['failing'], requeue_timer: ['60'] }, { x: ['1'] });
    await until(() => ((node!.services.find((s) => s.kind === 'queue')!.running.status().retried as number) ?? 0) >= 1);
    const f = await queueCall(node, { command: ['fetch'], key: added.Data.keys! });
    expect(f.Data.state).to.deep.equal(['retrying']);
    expect(f.Data.attempts).to.deep.equal(['1']);
    const entry = f.List![0] as { history: Array<{ code: number; message: string }> };
    expect(entry.history[0]?.code).to.equal(503);
  });

  it('recovers every entry, its attempts and the paused state after a restart', async () => {
    const entries: Parameters<typeof startTestNode>[0] = [
      { service: 'echo', NAME: 'failing', ReplyCode: 500 },
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store') },
    ];
    ({ node } = await startTestNode(entries));
    await queueCall(node, { command: ['pause'] });
    for (let i = 0; i < 50; i++) await queueCall(node, {}, { i: [String(i)] });
    const failing = await queueCall(node, { channel: ['failing'], requeue_timer: ['60'] }, { retry: ['me'] });
    const stepped = await queueCall(node, { command: ['step'], key: failing.Data.keys! });
    expect(stepped.Data.result_code).to.deep.equal(['500']);
    await node.stop(2000);
    ({ node } = await startTestNode(entries));
    const status = await queueCall(node, { command: ['status'] });
    expect(status.Data).to.deep.equal({
      waiting: ['50'],
      scheduled: ['0'],
      retrying: ['1'],
      dead: ['0'],
      done: ['0'],
      queuesize: ['51'],
      status: ['paused'],
    });
    const retrying = await queueCall(node, { command: ['list'], state: ['retrying'] });
    expect(retrying.Data.objects).to.have.length(1);
    const f = await queueCall(node, { command: ['fetch'], key: retrying.Data.objects! });
    expect(f.Data.attempts).to.deep.equal(['1']);
  });

  it('a store that is not a database stops the start with one line naming the file; the file is left as it was', async function () {
    sqliteOnly(this, 'a file of its own');
    const storeDir = join(dir, 'store', 'queue');
    mkdirSync(storeDir, { recursive: true });
    const garbage = Buffer.from('this is not an sqlite database at all, just garbage bytes '.repeat(200));
    writeFileSync(join(storeDir, 'queue.db'), garbage);
    const refused = await startTestNode([
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store') },
    ]).then(
      (r) => ((node = r.node), undefined),
      (e: unknown) => e,
    );
    expect(refused).to.be.instanceOf(ConfigError);
    const message = (refused as Error).message;
    expect(message).to.not.contain('\n');
    expect(message)
      .to.contain(join(storeDir, 'queue.db'))
      .and.to.match(/not a database/);
    expect(readdirSync(storeDir).filter((f) => f.includes('.corrupt-'))).to.deep.equal([]);
    expect(readFileSync(join(storeDir, 'queue.db')).equals(garbage)).to.equal(true);
  });

  /** 300 entries stored by a node, the node stopped, three pages in the middle of queue.db overwritten with noise: the file and its bytes. */
  async function damagedStore(): Promise<{ file: string; bytes: Buffer }> {
    ({ node } = await startTestNode([
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store'), StartPaused: true },
    ]));
    for (let i = 0; i < 300; i++)
      expect((await queueCall(node, {}, { item: [`entry-${i}-${'p'.repeat(200)}`] })).Code).to.equal(200);
    await node.stop(2000);
    node = undefined;
    const file = join(dir, 'store', 'queue', 'queue.db');
    const bytes = readFileSync(file);
    const pages = Math.floor(bytes.length / 4096);
    expect(pages).to.be.greaterThan(10);
    // three pages in the middle of the entries' b-tree overwritten with noise
    for (const page of [Math.floor(pages / 4), Math.floor(pages / 2), Math.floor((3 * pages) / 4)])
      bytes.fill(0xa5, page * 4096, (page + 1) * 4096);
    writeFileSync(file, bytes);
    return { file, bytes };
  }

  it('a store with overwritten pages stops the start (not replaced by an empty queue) and keeps every byte', async function () {
    sqliteOnly(this, 'a file of its own');
    const { file, bytes } = await damagedStore();
    const refused = await startTestNode([
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store'), StartPaused: true },
    ]).then(
      (r) => ((node = r.node), undefined),
      (e: unknown) => e,
    );
    expect(refused).to.be.instanceOf(ConfigError);
    expect((refused as Error).message)
      .to.contain(file)
      .and.to.not.contain('\n');
    expect(readFileSync(file).equals(bytes)).to.equal(true);
    expect(readdirSync(join(dir, 'store', 'queue')).filter((f) => f.includes('.corrupt-'))).to.deep.equal([]);
  });

  it('StoreRecovery: salvage salvages a store with overwritten pages at the start, journals it with its counts, and serves what it recovered', async function () {
    sqliteOnly(this, 'a file of its own');
    await damagedStore();
    ({ node } = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        StartPaused: true,
        StoreRecovery: 'salvage',
      },
    ]));
    const journaled = node.journal.entries().filter((e) => e.event === JournalEvent.Salvage);
    expect(journaled).to.have.length(1);
    expect(journaled[0]!.path).to.equal('/node/queue');
    const counts = /queue store .*queue\.db salvaged: entries (\d+) recovered, (\d+) lost/.exec(
      journaled[0]!.action ?? '',
    );
    expect(counts, journaled[0]!.action).to.not.equal(null);
    const [recovered, lost] = [Number(counts![1]), Number(counts![2])];
    expect(recovered + lost).to.equal(300);
    expect(recovered).to.be.at.least(200);
    expect(readdirSync(join(dir, 'store', 'queue')).filter((f) => f.startsWith('queue.db.damaged-'))).to.have.length(1);
    const status = await queueCall(node, { command: ['status'] });
    expect(status.Data.waiting).to.deep.equal([String(recovered)]);
  });

  it('a full store refuses the enqueue with 507 and acknowledges nothing that was not stored', async () => {
    ({ node } = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        MaxStoreBytes: 200_000,
        StartPaused: true,
      },
    ]));
    const big = 'x'.repeat(20_000);
    const acknowledged: string[] = [];
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      const r = await queueCall(node, {}, { blob: [big], i: [String(i)] });
      if (r.Code === 200) acknowledged.push(...r.Data.keys!);
      else {
        expect(r.Code).to.equal(507);
        expect(r.Message).to.contain('full');
        refused++;
      }
    }
    expect(refused).to.be.greaterThan(0);
    await node.stop(2000);
    ({ node } = await startTestNode([
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: join(dir, 'store'), StartPaused: true },
    ]));
    const listed = await queueCall(node, { command: ['list'] });
    expect(listed.Data.objects).to.include.members(acknowledged);
    expect(listed.Data.objects).to.have.length(acknowledged.length);
  });

  it('an empty PersistPath keeps entries in memory and warns', async () => {
    let logs: () => string;
    ({ node, logs } = await startTestNode([
      { service: 'queue', NAME: 'queue', AllowedChannels: '*', PersistPath: '', StartPaused: true },
    ]));
    expect(logs()).to.contain('kept in memory only');
    expect((await queueCall(node, {}, { a: ['1'] })).Data.queuesize).to.deep.equal(['1']);
  });
});
