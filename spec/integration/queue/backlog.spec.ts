/**
 * A backlog in bounded memory (backlog.ts): entries waiting for a time due beyond
 * PageHorizon stay in the SQLite store after a start, and the queue behaves as if they were in
 * memory: counted, listed, fetched, deleted, stepped, delivered on time. On Store jetstream every
 * entry is in memory, and the same answers must come (only the log line saying what was left in
 * the store is the SQLite store's).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { QUEUE_STORE } from '../queue-store.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { until } from '../../support/wait.js';

describe('queue backlog beyond PageHorizon', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  let logs: () => string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  const start = async (extra: Record<string, string | number | boolean> = {}): Promise<void> => {
    await node?.stop(2000);
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        PageHorizon: '2s',
        ...extra,
      },
    ]));
  };
  const status = async (): Promise<Record<string, string[]>> => (await queueCall(node!, { command: ['status'] })).Data;
  const delivered = (): string[] => recorded(join(dir, 'target.jsonl')).map((r) => r.message.Data.n![0]!);
  /** The start's log says `n` entries were left in the store (the store loads with the first command). */
  const leftInStore = async (n: number): Promise<void> => {
    await status();
    if (QUEUE_STORE === 'sqlite')
      expect(logs()).to.match(
        new RegExp(`queue loaded ${n} entries, ${n} of them due after .* left in the store until then`),
      );
  };
  /** Enqueues entries n = 0..count-1 with `control`; their keys in order. */
  const enqueue = async (count: number, control: Record<string, string[]>): Promise<string[]> => {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) {
      const r = await queueCall(node!, control, { n: [String(i)] });
      expect(r.Code).to.equal(200);
      keys.push(...r.Data.keys!);
    }
    return keys;
  };

  it('scheduled entries left in the store are counted, listed in order, fetched, deleted and stepped by key; new entries come after them', async () => {
    await start();
    const keys = await enqueue(5, { delay: ['1h'] });
    await start();
    await leftInStore(5);
    expect(await status()).to.deep.include({ scheduled: ['5'], queuesize: ['5'] } as never);
    expect((await queueCall(node!, { command: ['list'], state: ['scheduled'] })).Data.objects).to.deep.equal(keys);
    await start();
    const f = await queueCall(node!, { command: ['fetch'], key: [keys[2]!] });
    expect(f.Data.state).to.deep.equal(['scheduled']);
    expect(f.Data.n).to.deep.equal(['2']);
    const d = await queueCall(node!, { command: ['delete'], key: [keys[1]!] });
    expect(d.Data.deleted).to.deep.equal(['1']);
    expect(await status()).to.deep.include({ scheduled: ['4'], queuesize: ['4'] } as never);
    const stepped = await queueCall(node!, { command: ['step'], key: [keys[3]!] });
    expect(stepped.Data.result_code).to.deep.equal(['200']);
    await until(() => delivered().length === 1);
    expect(delivered()).to.deep.equal(['3']);
    // a new entry gets a seq after every stored one, parked or not, and replaces none of them
    const [fresh] = await enqueue(1, {});
    await until(() => delivered().length === 2);
    await start();
    await leftInStore(3);
    expect(await status()).to.deep.include({ scheduled: ['3'], waiting: ['0'], queuesize: ['3'] } as never);
    expect((await queueCall(node!, { command: ['list'] })).Data.objects).to.deep.equal([keys[0], keys[2], keys[4]]);
    expect((await queueCall(node!, { command: ['fetch'], key: [keys[1]!] })).Code).to.equal(404);
    expect((await queueCall(node!, { command: ['fetch'], key: [fresh!] })).Code).to.equal(404);
  });

  it('fetch and step without a key take the oldest entry, also when it is left in the store', async () => {
    await start({ StartPaused: true });
    const [failing] = await enqueue(1, { channel: ['nobody'], requeue_timer: ['3600'] });
    await queueCall(node!, { command: ['step'], key: [failing!] });
    const [scheduled] = await enqueue(1, { delay: ['1h'] });
    await start({ StartPaused: true });
    await leftInStore(2);
    const [waiting] = await enqueue(1, {});
    expect(await status()).to.deep.include({
      waiting: ['1'],
      retrying: ['1'],
      scheduled: ['1'],
      queuesize: ['3'],
    } as never);
    const oldest = await queueCall(node!, { command: ['fetch'] });
    expect(oldest.Data.key).to.deep.equal([failing]);
    expect(oldest.Data.state).to.deep.equal(['retrying']);
    const stepped = await queueCall(node!, { command: ['step'] });
    expect(stepped.Data.key).to.deep.equal([failing]);
    expect((await queueCall(node!, { command: ['list'] })).Data.objects).to.deep.equal([failing, scheduled, waiting]);
  });

  it('an entry left in the store is read back as its time nears and delivered at its time; clear removes the ones still there', async () => {
    await start();
    const started = Date.now();
    await enqueue(1, { delay: ['5s'] });
    await enqueue(3, { delay: ['1h'] });
    await start();
    await leftInStore(4);
    await until(() => delivered().length === 1, 10_000);
    expect(Date.now() - started).to.be.at.least(4_900);
    await until(() => node!.services.find((s) => s.kind === 'queue')!.running.status().size === 3);
    expect(await status()).to.deep.include({ scheduled: ['3'], queuesize: ['3'] } as never);
    expect((await queueCall(node!, { command: ['clear'] })).Data.cleared).to.deep.equal(['3']);
    await start();
    expect(await status()).to.deep.include({ scheduled: ['0'], queuesize: ['0'] } as never);
  });

  it('PageHorizon 0 holds every entry in memory', async () => {
    await start({ PageHorizon: '0' });
    await enqueue(2, { delay: ['1h'] });
    await start({ PageHorizon: '0' });
    await status();
    expect(logs()).to.match(/queue loaded 2 entries and/);
    expect(await status()).to.deep.include({ scheduled: ['2'], queuesize: ['2'] } as never);
  });
});
