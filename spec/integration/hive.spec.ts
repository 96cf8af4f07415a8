import { expect } from 'chai';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeMessage, mapOf } from '../../protocol/message.js';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from './helpers.js';
import { tempDir } from '../temp.js';
import { until } from '../support/wait.js';

const msg = (data: Record<string, string[]> = {}, control: Record<string, string[]> = {}) =>
  makeMessage({ Class: 'test', Operation: 'call', Data: mapOf(data), Control: mapOf(control) });

describe('embedded hive with echo services', () => {
  let node: HiveNode;
  let dir: string;
  beforeEach(() => {
    dir = tempDir('hn-hive-');
  });
  afterEach(async () => node?.stop(2000));

  it('two echo instances on one channel share 1,000 calls, each answered with its own Data', async () => {
    const a = join(dir, 'a.jsonl');
    const b = join(dir, 'b.jsonl');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'echo-a', INPUTCHANNEL: 'shared', RecordFile: a },
      { service: 'echo', NAME: 'echo-b', INPUTCHANNEL: 'shared', RecordFile: b },
    ]));
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => node.hive.call('shared', msg({ i: [String(i)] }), 5000)),
    );
    results.forEach((r, i) => {
      expect(r.Code).to.equal(200);
      expect(r.Data.i).to.deep.equal([String(i)]);
    });
    const countA = readFileSync(a, 'utf8').trim().split('\n').length;
    const countB = readFileSync(b, 'utf8').trim().split('\n').length;
    expect(countA + countB).to.equal(1000);
    expect(countA).to.be.within(400, 600);
    const recorded = JSON.parse(readFileSync(a, 'utf8').split('\n')[0]!) as { message: { Data: unknown } };
    expect(recorded.message.Data).to.have.property('i');
  });

  it('answers 404 at once for a channel nobody serves, 400 for an invalid channel name', async () => {
    ({ node } = await startTestNode([{ service: 'echo' }]));
    const started = Date.now();
    const r = await node.hive.call('nobody', msg(), 5000);
    expect(r.Code).to.equal(404);
    expect(r.Message).to.contain("'nobody'");
    // at once: far below the call's 5 s timeout
    expect(Date.now() - started).to.be.below(4000);
    expect((await node.hive.call('bad channel!', msg(), 5000)).Code).to.equal(400);
  });

  it('refuses a control character in Class or Operation at the hive boundary (400; an emit is not delivered)', async () => {
    const record = join(dir, 'record.jsonl');
    ({ node } = await startTestNode([{ service: 'echo', RecordFile: record }]));
    const bad = makeMessage({ Class: 'a\nb', Operation: 'call' });
    const r = await node.hive.call('echo', bad, 5000);
    expect(r.Code).to.equal(400);
    expect(r.Message).to.equal(
      String.raw`message.Class 'a\u000Ab' contains the control character U+000A; Class and Operation take printable characters only`,
    );
    expect((await node.hive.execute('echo', makeMessage({ Class: 'c', Operation: 'x\u0000' }), 5000)).Code).to.equal(
      400,
    );
    expect(await node.hive.emit('echo', bad)).to.equal(false);
    expect((await node.hive.call('echo', msg(), 5000)).Code).to.equal(200);
    expect(readFileSync(record, 'utf8').trim().split('\n')).to.have.length(1);
  });

  it('execute is acknowledged on receipt; emits to nobody are counted as dropped', async () => {
    ({ node } = await startTestNode([{ service: 'echo', Delay: '2s' }]));
    const r = await node.hive.execute('echo', msg({ a: ['1'] }), 5000);
    expect(r).to.deep.include({ Code: 200, Message: 'Success', List: null });
    expect(node.services[0]!.running.status().inFlight, 'acknowledged while the echo still works on it (2 s)').to.equal(
      1,
    );
    expect(await node.hive.emit('nowhere', msg())).to.equal(false);
    expect(node.hive.stats().dropped).to.equal(1);
  });

  it('a call that is not answered in time gets 504', async () => {
    ({ node } = await startTestNode([{ service: 'echo', Delay: '1s' }]));
    const r = await node.hive.call('echo', msg(), 100);
    expect(r.Code).to.equal(504);
  });

  it('ReplyCode makes echo answer with that code', async () => {
    ({ node } = await startTestNode([{ service: 'echo', ReplyCode: 503 }]));
    expect((await node.hive.call('echo', msg(), 2000)).Code).to.equal(503);
  });

  it('a crashing echo worker is answered 500, restarted by its supervisor, journaled, and serves again', async () => {
    let logs: () => string;
    ({ node, logs } = await startTestNode([
      { service: 'echo', NAME: 'crashy' },
      { service: 'echo', NAME: 'steady' },
    ]));
    const crashed = await node.hive.call('crashy', msg({}, { echo_crash: ['true'] }), 2000);
    expect(crashed.Code).to.equal(500);
    expect(crashed.Message).to.contain('crash requested');
    expect((await node.hive.call('steady', msg({ x: ['1'] }), 2000)).Code).to.equal(200);
    expect((await node.hive.call('crashy', msg({ x: ['2'] }), 2000)).Data.x).to.deep.equal(['2']);
    await until(() => node.journal.totalsOf('/node/crashy/worker').restarts === 1);
    const crash = node.journal.entries().find((e) => e.event === 'crash');
    expect(crash).to.deep.include({
      path: '/node/crashy/worker',
      error: { class: 'CrashRequestedError', message: 'crash requested by the echo_crash control' },
    });
    expect(logs()).to.contain('supervision crash /node/crashy/worker');
  });

  it('storage serves hive:// templates from a directory and refuses names that leave it', async () => {
    ({ node } = await startTestNode([{ service: 'storage', Directory: dir }]));
    const put = await node.hive.call(
      'DefaultStorageChannel',
      makeMessage({ Operation: 'put', Data: mapOf({ name: ['t1'], content: ['[[ .x ]]'] }) }),
      2000,
    );
    expect(put.Code).to.equal(200);
    const got = await node.hive.call(
      'DefaultStorageChannel',
      makeMessage({ Operation: 'get', Data: mapOf({ name: ['t1'] }) }),
      2000,
    );
    expect(got.Data.content).to.deep.equal(['[[ .x ]]']);
    const list = await node.hive.call('DefaultStorageChannel', makeMessage({ Operation: 'list' }), 2000);
    expect(list.Data.names).to.deep.equal(['t1']);
    expect(
      (
        await node.hive.call(
          'DefaultStorageChannel',
          makeMessage({ Operation: 'get', Data: mapOf({ name: ['../etc/passwd'] }) }),
          2000,
        )
      ).Code,
    ).to.equal(400);
    expect(
      (
        await node.hive.call(
          'DefaultStorageChannel',
          makeMessage({ Operation: 'get', Data: mapOf({ name: ['none'] }) }),
          2000,
        )
      ).Code,
    ).to.equal(404);
  });

  it('storage follows a symbolic link only while its real path stays inside Directory', async () => {
    const store = join(dir, 'store');
    const outside = join(dir, 'outside.txt');
    mkdirSync(join(store, 'sub'), { recursive: true });
    writeFileSync(outside, 'secret outside the store');
    writeFileSync(join(store, 'sub', 'inner'), 'inner template');
    writeFileSync(join(store, 'real'), 'real template');
    symlinkSync('/etc/passwd', join(store, 'passwd'));
    symlinkSync(outside, join(store, 'escape'));
    symlinkSync('../outside.txt', join(store, 'relative-escape'));
    symlinkSync('real', join(store, 'alias'));
    symlinkSync(join(store, 'sub', 'inner'), join(store, 'deep'));
    symlinkSync(join(store, 'gone'), join(store, 'dangling'));
    // Directory itself reached through a link: links inside it are judged against its real path
    symlinkSync(store, join(dir, 'store-link'));
    ({ node } = await startTestNode([{ service: 'storage', Directory: join(dir, 'store-link') }]));
    const get = (name: string) =>
      node.hive.call('DefaultStorageChannel', makeMessage({ Operation: 'get', Data: mapOf({ name: [name] }) }), 2000);
    for (const name of ['passwd', 'escape', 'relative-escape']) {
      const r = await get(name);
      expect(r.Code, name).to.equal(403);
      expect(r.Message, name).to.equal(
        `template '${name}' is a symbolic link leading outside the template directory; only files inside it are served`,
      );
      expect(JSON.stringify(r), name).to.not.contain('secret').and.not.contain('root:');
    }
    expect((await get('alias')).Data.content).to.deep.equal(['real template']);
    expect((await get('deep')).Data.content).to.deep.equal(['inner template']);
    expect((await get('dangling')).Code).to.equal(404);
  });
});
