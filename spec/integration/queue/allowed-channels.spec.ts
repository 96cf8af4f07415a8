/**
 * AllowedChannels bounds where a queue's entries go, whoever enqueued them (README, Authorization
 * model): a caller on the hive — no gateway in front to check its Access — cannot make the queue
 * deliver to, or hand dead entries to, a channel its configuration does not name. Each way a channel
 * reaches an entry is tried: the `channel` and `deadletter_slap` controls, a replay's edited channel,
 * a schedule and a template's fan-out. Nothing reaches the refused channel's service (its RecordFile).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue AllowedChannels: where entries may go, whatever the caller', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  const file = (name: string): ReturnType<typeof recorded> => recorded(join(dir, `${name}.jsonl`));
  const start = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> => {
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
      { service: 'echo', NAME: 'dlq', RecordFile: join(dir, 'dlq.jsonl') },
      { service: 'echo', NAME: 'failing', ReplyCode: 500, RecordFile: join(dir, 'failing.jsonl') },
      { service: 'echo', NAME: 'runner', RecordFile: join(dir, 'runner.jsonl') },
      {
        service: 'queue',
        NAME: 'queue',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        DefaultDeadLetterSlap: 'dlq',
        DeadRetention: '1h',
        ...extra,
      },
    ]));
    return node;
  };
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('by default only DefaultChannel and DefaultDeadLetterSlap: a channel or deadletter_slap control naming another is 403 naming it, and nothing is stored', async () => {
    const n = await start();
    const byChannel = await queueCall(n, { channel: ['runner'] }, { cmd: ['rm -rf /'] });
    expect(byChannel.Code).to.equal(403);
    expect(byChannel.Message).to.equal("channel 'runner' is not among the queue's AllowedChannels");
    const byDeadLetter = await queueCall(n, { deadletter_slap: ['runner'] }, { cmd: ['x'] });
    expect(byDeadLetter.Code).to.equal(403);
    expect(byDeadLetter.Message).to.equal("deadletter_slap 'runner' is not among the queue's AllowedChannels");
    const status = await queueCall(n, { command: ['status'] });
    expect(status.Data.queuesize).to.deep.equal(['0']);
    // the configured channels themselves are allowed, also when named
    const named = await queueCall(n, { channel: ['target'], deadletter_slap: ['dlq'] }, { item: ['ok'] });
    expect(named.Code, named.Message).to.equal(200);
    await until(() => file('target').length === 1);
    await sleep(200);
    expect(file('runner')).to.have.length(0);
  });

  it("a replay's edited channel outside the list is 403 and leaves the entry dead; a schedule naming one is refused at once", async () => {
    const n = await start({ AllowedChannels: 'target,dlq,failing' });
    const added = await queueCall(
      n,
      { channel: ['failing'], requeue_timer: ['0'], requeue_count: ['0'] },
      { item: ['broken'] },
    );
    expect(added.Code, added.Message).to.equal(200);
    const key = added.Data.keys![0]!;
    await until(() => file('dlq').length === 1);
    const replay = await queueCall(n, { command: ['replay'], key: [key], channel: ['runner'] });
    expect(replay.Code).to.equal(403);
    expect(replay.Message).to.contain("channel 'runner'");
    const fetched = await queueCall(n, { command: ['fetch'], key: [key] });
    expect((fetched.List![0] as { state: string }).state).to.equal('dead');
    const allowedReplay = await queueCall(n, { command: ['replay'], key: [key], channel: ['target'] });
    expect(allowedReplay.Code, allowedReplay.Message).to.equal(200);
    await until(() => file('target').length === 1);

    const schedule = await queueCall(
      n,
      { command: ['schedule'], schedule_name: ['nightly'], cron: ['0 2 * * *'], channel: ['runner'] },
      { item: ['x'] },
    );
    expect(schedule.Code).to.equal(403);
    expect(file('runner')).to.have.length(0);
  });

  it("a template's fan-out is bounded too: an entry it renders for another channel refuses the request", async () => {
    const template =
      '[[ define "default" ]][[ $r := newRequest ]][[ $c := newControl ]][[ addValue $c "channel" (index .Data.to 0) ]][[ setRequestControl $r $c ]][[ addEntry $r ]][[ end ]]';
    const n = await start({ Template: template, DefaultTemplateDefine: 'default' });
    const refused = await queueCall(n, {}, { to: ['runner'] });
    expect(refused.Code).to.equal(403);
    const allowed = await queueCall(n, {}, { to: ['target'] });
    expect(allowed.Code, allowed.Message).to.equal(200);
    await until(() => file('target').length === 1);
    expect(file('runner')).to.have.length(0);
  });

  it("'*' opens it (the behaviour before the parameter), a list replaces the defaults", async () => {
    let n = await start({ AllowedChannels: '*' });
    expect((await queueCall(n, { channel: ['runner'] }, { item: ['a'] })).Code).to.equal(200);
    await until(() => file('runner').length === 1);
    await node!.stop(2000);
    n = await start({ AllowedChannels: 'runner,dlq' });
    expect((await queueCall(n, { channel: ['runner'] }, { item: ['b'] })).Code).to.equal(200);
    // the list replaces the defaults: DefaultChannel itself is no longer allowed
    const toDefault = await queueCall(n, {}, { item: ['c'] });
    expect(toDefault.Code).to.equal(403);
    expect(toDefault.Message).to.contain("channel 'target'");
    await until(() => file('runner').length === 2);
  });
});
