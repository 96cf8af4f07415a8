/**
 * Cron schedules: a schedule firing every second for 5 s delivers 5 ± 1 entries carrying
 * the request's Class, Operation, Data and controls (echo's RecordFile counts them); `skip` makes no
 * entry while the previous one is delivering to a slow target or retrying, `buffer_one` at most one
 * behind it, `allow` one per firing; a paused queue records firings as waiting entries; schedules
 * survive a stop and start and a SIGKILL on the same store, and `catchup` decides what a restart
 * makes of a missed firing. Refused controls are 400, unknown names 404.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import type { Result } from '../../../protocol/message.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { startNodeProcess } from '../../reliability/node-process.js';
import { startTestNode } from '../helpers.js';
import { killableQueueNode, queueCall, recorded, tempDir } from './helpers.js';
import { storeAgnostic } from '../queue-store.js';
import { sleep, until } from '../../support/wait.js';

const EVERY_SECOND = '* * * * * *';

describe('queue cron schedules', function () {
  this.timeout(40_000);
  let node: HiveNode | undefined;
  let dir: string;
  const deliveries = (): ReturnType<typeof recorded> => recorded(join(dir, 'target.jsonl'));
  const start = async (
    extra: Record<string, string | number | boolean> = {},
    target: Record<string, string | number | boolean> = {},
  ): Promise<HiveNode> =>
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl'), ...target },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        ...extra,
      },
    ])).node;
  const stop = async (): Promise<void> => {
    await node?.stop(2000);
    node = undefined;
  };
  const schedule = (
    n: HiveNode,
    name: string,
    cron: string,
    control: Record<string, string[]> = {},
    data: Record<string, string[]> = { item: [name] },
  ): Promise<Result> => queueCall(n, { command: ['schedule'], schedule_name: [name], cron: [cron], ...control }, data);
  const size = async (n: HiveNode): Promise<number> =>
    Number((await queueCall(n, { command: ['status'] })).Data.queuesize![0]);
  /** The largest queuesize seen while polling for `ms`. */
  const largestSize = async (n: HiveNode, ms: number): Promise<number> => {
    let largest = 0;
    for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) largest = Math.max(largest, await size(n));
    return largest;
  };
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(stop);

  it('fires every second for 5 s: 5 ± 1 entries with the request Class, Operation, Data and controls; unschedule stops it', async () => {
    const n = await start();
    const made = await schedule(
      n,
      'ticks',
      EVERY_SECOND,
      { custom: ['kept'], channel: ['target'] },
      { item: ['tick'] },
    );
    expect(made.Code, made.Message).to.equal(200);
    expect(made.Data.schedule_name).to.deep.equal(['ticks']);
    expect(made.Data.replaced).to.deep.equal(['false']);
    expect(Date.parse(made.Data.next![0]!) - Date.now()).to.be.within(-50, 1000);
    const from = Date.now();
    await sleep(5000);
    const gone = await queueCall(n, { command: ['unschedule'], schedule_name: ['ticks'] });
    expect(gone.Data.unscheduled).to.deep.equal(['ticks']);
    const elapsed = Date.now() - from;
    await sleep(300); // the last entry's delivery
    const count = deliveries().length;
    expect(count, `${count} entries in ${elapsed} ms`).to.be.within(4, 6);
    const got = deliveries()[0]!;
    expect(got.message.Class).to.equal('queue');
    expect(got.message.Operation).to.equal('action');
    expect(got.message.Data).to.deep.equal({ item: ['tick'] });
    expect(got.message.Control, 'the schedule controls stay with the queue').to.deep.equal({ custom: ['kept'] });
    const seconds = deliveries().map((d) => Math.floor(Date.parse(d.time) / 1000));
    expect(new Set(seconds).size, 'one firing per second').to.equal(seconds.length);
    await sleep(1200);
    expect(deliveries(), 'nothing after unschedule').to.have.length(count);
    expect((await queueCall(n, { command: ['schedules'] })).Data.names).to.deep.equal([]);
  });

  storeAgnostic(
    'skip: no new entry while the previous one is delivering to a target that answers after 3 s',
    async () => {
      const n = await start({}, { Delay: '3s' });
      await schedule(n, 'slow', EVERY_SECOND);
      expect(await largestSize(n, 7500), 'never a second entry').to.equal(1);
      const listed = await queueCall(n, { command: ['schedules'] });
      const times = deliveries().map((d) => Date.parse(d.time));
      expect(times.length).to.be.within(2, 3);
      for (let i = 1; i < times.length; i++)
        expect(times[i]! - times[i - 1]!, 'a new entry only once the previous one answered').to.be.at.least(3000);
      expect(Number(listed.Data.skipped![0]), 'the firings in between were skipped').to.be.at.least(3);
      expect(Number(listed.Data.fired![0])).to.be.within(times.length, times.length + 1);
    },
  );

  storeAgnostic('skip: no new entry while the previous one is retrying', async () => {
    const n = await start({}, { ReplyCode: 503 });
    await schedule(n, 'failing', EVERY_SECOND, { requeue_timer: ['2'], requeue_count: ['1'] });
    let sawRetrying = false;
    for (const end = Date.now() + 4000; Date.now() < end; await sleep(100)) {
      const byState = (await queueCall(n, { command: ['list'], groupby: ['state'] })).Data;
      if (byState.retrying) sawRetrying = true;
      expect(Number(byState.queuesize![0]), JSON.stringify(byState)).to.be.at.most(1);
    }
    expect(sawRetrying).to.equal(true);
    expect(Number((await queueCall(n, { command: ['schedules'] })).Data.skipped![0])).to.be.at.least(1);
  });

  storeAgnostic('buffer_one keeps at most one entry behind the slow one; allow makes one per firing', async () => {
    let n = await start({}, { Delay: '3s' });
    await schedule(n, 'buffered', EVERY_SECOND, { overlap: ['buffer_one'] });
    expect(await largestSize(n, 4000)).to.equal(2);
    await stop();
    dir = tempDir();
    n = await start({}, { Delay: '3s' });
    await schedule(n, 'piling', EVERY_SECOND, { overlap: ['allow'] });
    expect(await largestSize(n, 3500)).to.be.at.least(3);
    expect((await queueCall(n, { command: ['schedules'] })).Data.skipped).to.deep.equal(['0']);
  });

  it('a paused queue records firings as waiting entries (skip: one; allow: one per firing), delivered on resume', async () => {
    const n = await start({ StartPaused: true });
    await schedule(n, 'one', EVERY_SECOND);
    await schedule(n, 'many', EVERY_SECOND, { overlap: ['allow'] });
    await sleep(3200);
    const listed = await queueCall(n, { command: ['list'], groupby: ['state'] });
    const waiting = Number(listed.Data.waiting![0]);
    expect(waiting).to.be.within(4, 5);
    expect(deliveries()).to.have.length(0);
    const lastMany = (await queueCall(n, { command: ['schedules'], schedule_name: ['many'] })).Data.last_entry![0]!;
    // a firing of the moment may still be pending (its write not yet committed): it is waiting once durable
    let state: string[] | undefined;
    for (let tries = 0; tries < 20 && state?.[0] !== 'waiting'; tries++) {
      if (state) await sleep(50);
      state = (await queueCall(n, { command: ['fetch'], key: [lastMany] })).Data.state;
      expect(state?.[0]).to.be.oneOf(['pending', 'waiting']);
    }
    expect(state).to.deep.equal(['waiting']);
    await queueCall(n, { command: ['resume'] });
    await until(
      () => deliveries().filter((d) => d.message.Data.item![0] === 'one').length >= 1 && deliveries().length >= waiting,
      5000,
    );
    expect(deliveries().filter((d) => d.message.Data.item![0] === 'one').length).to.be.at.most(2);
  });

  it('run_schedule adds the message now under the overlap rule: skip refuses it with 409 while the previous entry is in the queue, buffer_one and allow let it in', async () => {
    const n = await start({ StartPaused: true });
    const yearly = '0 3 1 1 *';
    await schedule(n, 'report', yearly);
    await schedule(n, 'buffered', yearly, { overlap: ['buffer_one'] });
    await schedule(n, 'any', yearly, { overlap: ['allow'] });
    const run = (name: string): Promise<Result> => queueCall(n, { command: ['run_schedule'], schedule_name: [name] });
    const first = await run('report');
    expect(first.Code, first.Message).to.equal(200);
    const key = first.Data.keys![0]!;
    const listed = await queueCall(n, { command: ['schedules'], schedule_name: ['report'] });
    expect(listed.Data.last_entry).to.deep.equal([key]);
    expect(listed.Data.fired).to.deep.equal(['1']);
    const refused = await run('report');
    expect(refused.Code).to.equal(409);
    expect(refused.Message).to.equal(
      `schedule 'report' was not run: its overlap rule 'skip' adds no entry while 1 earlier entry is still in the queue: '${key}' (waiting)`,
    );
    expect(
      (await queueCall(n, { command: ['schedules'], schedule_name: ['report'] })).Data.fired,
      'a refused run is no firing',
    ).to.deep.equal(['1']);
    expect((await run('buffered')).Code).to.equal(200);
    expect((await run('buffered')).Code).to.equal(200);
    const third = await run('buffered');
    expect(third.Code).to.equal(409);
    expect(third.Message).to.match(
      /^schedule 'buffered' was not run: its overlap rule 'buffer_one' adds no entry while 2 earlier entries are still in the queue: '[^']+' \(waiting\), '[^']+' \(waiting\)$/,
    );
    for (let i = 0; i < 3; i++) expect((await run('any')).Code).to.equal(200);
    expect(await size(n)).to.equal(6);
    // once the entry in the way is delivered, the schedule runs again
    await queueCall(n, { command: ['step'], key: [key] });
    const again = await run('report');
    expect(again.Code, again.Message).to.equal(200);
    expect(deliveries().map((d) => d.message.Data)).to.deep.equal([{ item: ['report'] }]);
    expect((await run('nope')).Code).to.equal(404);
  });

  it('schedules survive a stop and start on the same store and keep firing; the answer lists them', async () => {
    let n = await start();
    await schedule(n, 'b-every', EVERY_SECOND, { tz: ['Europe/Berlin'] });
    await schedule(n, 'a-daily', '0 3 * * *', { overlap: ['allow'], catchup: ['one'] });
    await until(() => deliveries().length >= 2, 5000);
    await stop();
    const before = deliveries().length;
    n = await start();
    const listed = await queueCall(n, { command: ['schedules'] });
    expect(listed.Code, listed.Message).to.equal(200);
    expect(listed.Data.names).to.deep.equal(['a-daily', 'b-every']);
    expect(listed.Data.cron).to.deep.equal(['0 3 * * *', EVERY_SECOND]);
    expect(listed.Data.tz).to.deep.equal(['UTC', 'Europe/Berlin']);
    expect(listed.Data.overlap).to.deep.equal(['allow', 'skip']);
    expect(listed.Data.catchup).to.deep.equal(['one', 'none']);
    expect(new Date(listed.Data.next![0]!).getUTCHours()).to.equal(3);
    expect(listed.Data.last_entry![0]).to.equal('');
    expect(listed.Data.last_entry![1]).to.match(/^[0-9a-f-]{36}$/);
    expect(listed.List).to.have.length(2);
    expect(listed.List![1]).to.include({ name: 'b-every', cron: EVERY_SECOND, tz: 'Europe/Berlin' });
    await until(() => deliveries().length >= before + 2, 5000);
  });

  it('catchup: after a restart that missed a firing, one makes one entry at once and none makes nothing', async () => {
    let n = await start();
    // a daily firing 3 s from now, missed while the node is down
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3000);
    const cron = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
    await schedule(n, 'catch-one', cron, { catchup: ['one'] });
    await schedule(n, 'catch-none', cron);
    await stop();
    expect(deliveries(), 'stopped before the firing').to.have.length(0);
    await sleep(Math.max(0, at.getTime() + 500 - Date.now()));
    n = await start();
    await until(() => deliveries().length === 1, 3000);
    await sleep(500);
    const listed = await queueCall(n, { command: ['schedules'] });
    expect(listed.Data.fired, 'catch-none, catch-one').to.deep.equal(['0', '1']);
    expect(deliveries().map((d) => d.message.Data.item![0])).to.deep.equal(['catch-one']);
    for (const next of listed.Data.next!)
      expect(Date.parse(next), 'the next firing is tomorrow').to.equal(at.getTime() + 86_400_000);
  });

  it('refuses bad controls with 400 naming them, unknown names with 404; the same name replaces', async () => {
    const n = await start();
    const cases: Array<[Record<string, string[]>, RegExp]> = [
      [{ cron: ['* * * * *'] }, /control schedule_name is missing/],
      [{ schedule_name: ['x'] }, /control cron is missing/],
      [
        { schedule_name: ['x'], cron: ['61 * * * *'] },
        /control cron '61 \* \* \* \*': minute field '61' is out of range 0-59/,
      ],
      [{ schedule_name: ['x'], cron: ['* * * *'] }, /has 4 field\(s\); give 5/],
      [{ schedule_name: ['x'], cron: ['0 0 30 2 *'] }, /names no time within eight years/],
      [
        { schedule_name: ['x'], cron: ['* * * * *'], tz: ['Mars/Olympus'] },
        /control tz 'Mars\/Olympus' is not a known time zone/,
      ],
      [
        { schedule_name: ['x'], cron: ['* * * * *'], overlap: ['queue'] },
        /control overlap 'queue' is not known; use one of skip, allow, buffer_one/,
      ],
      [
        { schedule_name: ['x'], cron: ['* * * * *'], catchup: ['all'] },
        /control catchup 'all' is not known; use one of none, one/,
      ],
      [{ schedule_name: ['x'], cron: ['* * * * *'], mode: ['later'] }, /control mode must be 'call' or 'execute'/],
      [{ schedule_name: ['x'], cron: ['* * * * *'], template_define: ['two'] }, /template_define cannot be scheduled/],
    ];
    for (const [control, message] of cases) {
      const r = await queueCall(n, { command: ['schedule'], ...control });
      expect(r.Code, JSON.stringify(control)).to.equal(400);
      expect(r.Message).to.match(message);
    }
    expect((await queueCall(n, { command: ['unschedule'], schedule_name: ['nope'] })).Code).to.equal(404);
    expect((await queueCall(n, { command: ['schedules'], schedule_name: ['nope'] })).Code).to.equal(404);
    expect((await schedule(n, 'same', '0 4 * * *')).Data.replaced).to.deep.equal(['false']);
    const again = await schedule(n, 'same', '0 5 * * *', { tz: ['America/New_York'] });
    expect(again.Data.replaced).to.deep.equal(['true']);
    const listed = await queueCall(n, { command: ['schedules'] });
    expect(listed.Data.names).to.deep.equal(['same']);
    expect(listed.Data.cron).to.deep.equal(['0 5 * * *']);
    expect(listed.Data.tz).to.deep.equal(['America/New_York']);
    expect(listed.Data.queuesize).to.deep.equal(['0']);
  });

  describe('across a SIGKILL', () => {
    let killed: NodeProcess | undefined;
    after(async () => {
      await killed?.kill();
    });

    it('a schedule made in a node killed with SIGKILL fires in the next node on the store', async () => {
      const file = await killableQueueNode(dir, 'command,schedule_name,cron');
      killed = await startNodeProcess(file);
      const res = await fetch(`http://127.0.0.1:${killed.port}/queue/action`, {
        method: 'POST',
        headers: { command: 'schedule', schedule_name: 'survivor', cron: EVERY_SECOND },
        body: JSON.stringify({ item: ['survivor'] }),
      });
      const body = (await res.json()) as Result;
      expect(body.Code, body.Message).to.equal(200);
      await until(() => deliveries().length >= 2, 5000);
      await killed.kill('SIGKILL');
      killed = undefined;
      const before = deliveries().length;

      const n = await start();
      expect((await queueCall(n, { command: ['schedules'] })).Data.names).to.deep.equal(['survivor']);
      await until(() => deliveries().length >= before + 2, 5000);
      expect(deliveries().at(-1)!.message.Data).to.deep.equal({ item: ['survivor'] });
    });
  });
});
