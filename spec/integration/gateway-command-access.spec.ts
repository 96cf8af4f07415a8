/**
 * Authorization covers what a request does, not only its route (README, Authorization per route): a
 * real strict gateway with Users, Groups, ControlPrefix `_` and Access entries that name commands, in
 * front of a queue delivering to a recording echo and an exec-like channel a writer may not use.
 * A writer who may add entries cannot clear or list the queue through the same route (aliases
 * included), and cannot make the queue deliver to a channel whose route it is refused — by a `_channel`
 * field, a `channel` header, a dead-letter target or a replay's edited channel.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import type { HiveNode } from '../../node/node.js';
import { makeMessage, mapOf } from '../../protocol/message.js';
import { tempDir } from '../temp.js';
import { startTestNode } from './helpers.js';
import { recorded } from './queue/helpers.js';
import { sleep } from '../support/wait.js';

const PASSWORD = 'command-access-1';
const basic = (user: string): string => `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString('base64')}`;

describe('gateway: Access by command and by the channel a control sends to', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let base = '';
  let dir = '';
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  const start = async (access: string): Promise<void> => {
    dir = tempDir('hn-cmd-access-');
    const users = join(dir, 'users');
    const groups = join(dir, 'groups');
    writeFileSync(
      users,
      `${(await Promise.all(['wendy', 'oscar', 'rita'].map((u) => passwdLine(u, PASSWORD, 4)))).join('\n')}\n`,
    );
    writeFileSync(groups, 'writers: wendy\nops: oscar\nreaders: rita\n');
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'recorder', RecordFile: join(dir, 'recorder.jsonl') },
      { service: 'echo', NAME: 'runner', RecordFile: join(dir, 'runner.jsonl') },
      {
        service: 'queue',
        NAME: 'q',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'recorder',
        DefaultRequeueCount: 0,
        AllowedChannels: 'recorder,runner',
      },
      {
        service: 'gateway',
        NAME: 'gw',
        Port: 0,
        Strict: true,
        Users: users,
        Groups: groups,
        Access: access,
        Routes: 'queue=q;cmd=runner;echo=recorder',
        ControlPrefix: '_',
        ControlAllowList: 'command,channel,deadletter_slap,key,groupby,list',
      },
    ]));
    base = `http://127.0.0.1:${node!.services.find((s) => s.name === 'gw')!.running.status().port as number}`;
  };
  const post = async (
    user: string,
    path: string,
    data: Record<string, string[]>,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; json: { Code: number; Message: string; Data: Record<string, string[]> } }> => {
    const res = await request(`${base}/${path}`, {
      method: 'POST',
      body: JSON.stringify(data),
      headers: { 'content-type': 'application/json', authorization: basic(user), ...headers },
    });
    return { status: res.statusCode, json: (await res.body.json()) as never };
  };
  const queueSize = async (): Promise<number> =>
    Number(
      (await node!.hive.call('q', makeMessage({ Control: mapOf({ command: ['status'] }) }), 5000)).Data.queuesize?.[0],
    );

  it("a writer allowed 'add' cannot clear or list through the same route (nor by an alias); readers read; ops do everything", async () => {
    await start('queue/*:add=writers;queue/*:status,list,fetch=readers;queue/*=ops;echo=writers,ops,readers');
    await node!.hive.call('q', makeMessage({ Control: mapOf({ command: ['pause'] }) }), 5000);
    for (let i = 0; i < 3; i++) expect((await post('wendy', 'queue/add', { item: [String(i)] })).status).to.equal(200);
    expect(await queueSize()).to.equal(3);
    for (const command of ['clear', 'wipe', 'delete', 'list', 'show']) {
      const r = await post('wendy', 'queue/add', { _command: [command] });
      expect(r.status, command).to.equal(403);
      expect(r.json.Message).to.match(
        /^command '(delete|list)' on route 'queue\/add' is not allowed for user 'wendy'$/,
      );
    }
    expect(await queueSize(), 'nothing cleared').to.equal(3);
    expect((await post('rita', 'queue/x', { _command: ['status'] })).status).to.equal(200);
    expect((await post('rita', 'queue/x', { _command: ['list'] })).json.Data.objects).to.have.length(3);
    expect((await post('rita', 'queue/x', { item: ['not yours'] })).status, 'readers may not add').to.equal(403);
    expect((await post('oscar', 'queue/x', { _command: ['clear'] })).status).to.equal(200);
    expect(await queueSize()).to.equal(0);
  });

  it('a user refused cmd/* cannot have the queue deliver to its channel: _channel, a channel header, a dead-letter target; ops can', async () => {
    await start('queue=writers,ops;cmd/*=ops;echo=writers,ops');
    const attempts: Array<[Record<string, string[]>, Record<string, string>]> = [
      [{ item: ['a'], _channel: ['runner'] }, {}],
      [{ item: ['b'] }, { channel: 'runner' }],
      [{ item: ['c'], _channel: ['no-route-leads-here'] }, {}],
      [{ item: ['d'], _deadletter_slap: ['runner'] }, {}],
    ];
    for (const [data, headers] of attempts) {
      const r = await post('wendy', 'queue/add', data, headers);
      expect(r.status, JSON.stringify(data)).to.equal(403);
      expect(r.json.Message).to.match(
        /^channel '[\w-]+' \(control '(channel|deadletter_slap)'\) is not allowed for user 'wendy'$/,
      );
    }
    // a channel whose route the writer may use is fine
    expect((await post('wendy', 'queue/add', { item: ['e'], _channel: ['recorder'] })).status).to.equal(200);
    expect((await post('oscar', 'queue/add', { item: ['f'], _channel: ['runner'] })).status).to.equal(200);
    const end = Date.now() + 10_000;
    while (recorded(join(dir, 'runner.jsonl')).length < 1 && Date.now() < end) await sleep(50);
    expect(recorded(join(dir, 'runner.jsonl')).map((r) => r.message.Data.item?.[0])).to.deep.equal(['f']);
    // a replay with an edited channel is the same control
    const replay = await post('wendy', 'queue/add', { _command: ['replay'], _key: ['x'], _channel: ['runner'] });
    expect(replay.status).to.equal(403);
  });
});
