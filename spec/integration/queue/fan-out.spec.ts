import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { sqliteOnly } from '../queue-store.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { until } from '../../support/wait.js';

const FANOUT = new URL('../../../examples/templates/fanout.tmpl', import.meta.url).pathname;

describe('queue template fan-out', function () {
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

  it('one request creates one entry per addEntry; queuesize equals the number created; entries are delivered', async () => {
    let logs: () => string;
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'main', RecordFile: join(dir, 'main.jsonl') },
      { service: 'echo', NAME: 'other', RecordFile: join(dir, 'other.jsonl') },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        Template: `file://${FANOUT}`,
        DEBUG_TEMPLATE: true,
      },
    ]));
    const r = await queueCall(node, { template_define: ['default'] }, { item: ['a', 'b', 'c'], target: ['other'] });
    expect(r.Code).to.equal(200);
    expect(r.Data.queuesize).to.deep.equal(['3']);
    await until(() => recorded(join(dir, 'other.jsonl')).length === 3);
    expect(recorded(join(dir, 'other.jsonl')).map((x) => x.message.Data.item![0])).to.deep.equal(['a', 'b', 'c']);
    expect(recorded(join(dir, 'other.jsonl'))[0]!.message.Class).to.equal('fanout');
    expect(logs()).to.contain('template created entry');
    const defaulted = await queueCall(node, { template_define: [''] }, { item: ['x'] });
    expect(defaulted.Data.queuesize).to.deep.equal(['1']);
    await until(() => recorded(join(dir, 'main.jsonl')).length === 1);
  });

  it('DefaultTemplateDefine applies when no control names one; an unknown define is a 400 naming it', async () => {
    ({ node } = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        Template: `file://${FANOUT}`,
        DefaultTemplateDefine: 'default',
        StartPaused: true,
      },
    ]));
    expect((await queueCall(node, {}, { item: ['1', '2'] })).Data.queuesize).to.deep.equal(['2']);
    const bad = await queueCall(node, { template_define: ['nope'] }, { item: ['1'] });
    expect(bad.Code).to.equal(400);
    expect(bad.Message).to.contain('nope');
  });

  it('an inline template works; a broken template stops the start', async () => {
    const inline = '[[ define "one" ]][[ addEntry (newRequest) ]][[ end ]]';
    ({ node } = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        Template: inline,
        StartPaused: true,
      },
    ]));
    expect((await queueCall(node, { template_define: ['one'] })).Data.queuesize).to.deep.equal(['1']);
    await node.stop(1000);
    node = undefined;
    const err = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store2'),
        Template: '[[ define "x" ]][[ if ]]',
      },
    ]).catch((e: unknown) => e);
    expect((err as Error).message).to.match(/^Template: template: /);
  });
  it('hive:// templates come from the storage service', async function () {
    sqliteOnly(
      this,
      'the NATS hive keeps hive:// templates in a bucket of its own, tested in spec/adapters/nats/hive.spec.ts',
    );
    ({ node } = await startTestNode([
      { service: 'storage', NAME: 'templates', INPUTCHANNEL: 'DefaultStorageChannel', Directory: join(FANOUT, '..') },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store3'),
        Template: 'hive://fanout.tmpl',
        StartPaused: true,
      },
    ]));
    expect(
      (await queueCall(node, { template_define: ['default'] }, { item: ['p', 'q'] })).Data.queuesize,
    ).to.deep.equal(['2']);
  });
  it('a small request whose fan-out builds more than MaxRenderChars or MaxRenderItems is answered 413 and stores nothing; the node keeps serving', async () => {
    // ~15 KB of request: 3000 items, each becoming an entry with a value padded to 10000 characters
    const items = Array.from({ length: 3000 }, (_, i) => String(i));
    const template =
      '[[ define "pad" ]][[ range .Data.items ]][[ $r := newRequest ]][[ addValue (getRequestData $r) "v" (printf "%-9999s" .) ]][[ addEntry $r ]][[ end ]][[ end ]]';
    ({ node } = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        Template: template,
        StartPaused: true,
      },
    ]));
    const r = await queueCall(node, { template_define: ['pad'] }, { items });
    expect(r.Code).to.equal(413);
    expect(r.Message).to.match(/the render builds more than 16777216 characters \(the limit MaxRenderChars\)$/);
    const next = await queueCall(node, { template_define: ['pad'] }, { items: ['a', 'b'] });
    expect(next.Code).to.equal(200);
    expect(next.Data.queuesize).to.deep.equal(['2'], 'the refused request added nothing');
    await node.stop(1000);
    // every entry copies the request: 3000 copies of its 3000 values are 9 million items
    ({ node } = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store2'),
        Template: '[[ define "copy" ]][[ range .Data.items ]][[ addEntry getRequest ]][[ end ]][[ end ]]',
        StartPaused: true,
      },
    ]));
    const copies = await queueCall(node, { template_define: ['copy'] }, { items });
    expect(copies.Code).to.equal(413);
    expect(copies.Message).to.match(/the limit MaxRenderItems\)$/);
    expect((await queueCall(node, { template_define: ['copy'] }, { items: ['a', 'b'] })).Data.queuesize).to.deep.equal([
      '2',
    ]);
  });

  it('a file:// Template that is /dev/zero or a directory stops the start at once with one line naming it', async () => {
    for (const [path, what] of [
      ['/dev/zero', 'a character device'],
      [dir, 'a directory'],
    ]) {
      const err = await startTestNode([
        {
          service: 'queue',
          NAME: 'queue',
          AllowedChannels: '*',
          PersistPath: join(dir, 'store'),
          Template: `file://${path}`,
        },
      ]).catch((e: unknown) => e as Error);
      expect((err as Error).message).to.equal(`Template: template file '${path}' is ${what}, not a regular file`);
    }
  });
});
