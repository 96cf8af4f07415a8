/**
 * Delayed entries: an entry enqueued with `delay` or `not_before` is
 * `scheduled` until its time, then delivered (checked by echo's RecordFile and its receipt times);
 * refused controls add nothing; list, fetch, delete, clear, pause, fan-out and step see scheduled
 * entries; and a node SIGKILLed while an entry is scheduled delivers it after a restart, at its time.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { startNodeProcess } from '../../reliability/node-process.js';
import { startTestNode } from '../helpers.js';
import { killableQueueNode, queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue delay and not_before', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  const deliveries = (): ReturnType<typeof recorded> => recorded(join(dir, 'target.jsonl'));
  const start = async (extra: Record<string, string | number | boolean> = {}): Promise<HiveNode> =>
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'target', RecordFile: join(dir, 'target.jsonl') },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DefaultChannel: 'target',
        ...extra,
      },
    ])).node;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('an entry with delay 2s is scheduled, then delivered no sooner than 2 s after the enqueue, without the control', async () => {
    const n = await start();
    const sent = Date.now();
    const added = await queueCall(n, { delay: ['2s'], custom: ['kept'] }, { item: ['later'] });
    const answered = Date.now();
    expect(added.Code, added.Message).to.equal(200);
    await sleep(1500);
    expect(deliveries(), 'nothing before its time').to.have.length(0);
    const f = await queueCall(n, { command: ['fetch'], key: added.Data.keys! });
    expect(f.Data.state).to.deep.equal(['scheduled']);
    // due 2 s after the queue took the entry: between the send and the answer
    expect(Date.parse(f.Data.due![0]!)).to.be.within(sent + 2000, answered + 2000);
    await until(() => deliveries().length === 1, 5000);
    const got = deliveries()[0]!;
    expect(Date.parse(got.time) - sent).to.be.at.least(2000);
    expect(got.message.Data).to.deep.equal({ item: ['later'] });
    expect(got.message.Control).to.deep.equal({ custom: ['kept'] });
    // the echo records before it answers: the entry leaves the queue with the answer, a moment later
    await until(() => (n.services.find((s) => s.kind === 'queue')!.running.status().size as number) === 0);
  });

  it('not_before delivers at or after that time; a time in the past and delay 0 deliver at once', async () => {
    const n = await start();
    const when = new Date(Date.now() + 1500);
    const key = (await queueCall(n, { not_before: [when.toISOString()] }, { item: ['at'] })).Data.keys![0];
    await queueCall(n, { not_before: ['2001-02-03T04:05:06+01:00'] }, { item: ['past'] });
    await queueCall(n, { delay: ['0'] }, { item: ['zero'] });
    await until(() => deliveries().length === 2, 1000);
    expect(deliveries().map((d) => d.message.Data.item![0])).to.deep.equal(['past', 'zero']);
    expect((await queueCall(n, { command: ['list'], state: ['scheduled'] })).Data.objects).to.deep.equal([key]);
    await until(() => deliveries().length === 3, 5000);
    expect(Date.parse(deliveries()[2]!.time)).to.be.at.least(when.getTime());
  });

  it('both controls, a bad delay, a bad not_before or one beyond 366 days: 400 naming the control, nothing added', async () => {
    const n = await start();
    const cases: Array<[Record<string, string[]>, RegExp]> = [
      [{ delay: ['5s'], not_before: [new Date().toISOString()] }, /delay and not_before exclude each other/],
      [
        { delay: ['soon'] },
        /control delay 'soon' is not a duration; use a duration such as 250ms, 20s, 5m, 1h, 30d or 1m30s/,
      ],
      [{ delay: ['2w'] }, /control delay '2w' is not a duration/],
      [{ delay: ['367d'] }, /control delay '367d' is too long; it may be at most 366 days ahead/],
      [{ delay: ['8785h'] }, /control delay '8785h' is too long; it may be at most 366 days ahead/],
      [{ not_before: ['tomorrow'] }, /control not_before 'tomorrow' is not a time; use an RFC 3339 time with its zone/],
      [{ not_before: ['2030-01-02T15:04:05'] }, /control not_before '2030-01-02T15:04:05' is not a time/],
      [
        { not_before: [new Date(Date.now() + 400 * 86_400_000).toISOString()] },
        /too far ahead; it may be at most 366 days ahead/,
      ],
    ];
    for (const [control, message] of cases) {
      const r = await queueCall(n, control, { item: ['x'] });
      expect(r.Code, JSON.stringify(control)).to.equal(400);
      expect(r.Message).to.match(message);
    }
    expect((await queueCall(n, { command: ['status'] })).Data.queuesize).to.deep.equal(['0']);
  });

  it('list filters and groups by state scheduled; status counts scheduled entries in queuesize', async () => {
    const n = await start();
    const later = await queueCall(n, { delay: ['1h'] }, { item: ['a'] });
    await queueCall(n, { delay: ['90m'] }, { item: ['b'] });
    const listed = await queueCall(n, { command: ['list'], state: ['scheduled'] });
    expect(listed.Code, listed.Message).to.equal(200);
    expect(listed.Data.objects).to.have.length(2).and.to.include(later.Data.keys![0]);
    expect((await queueCall(n, { command: ['list'], groupby: ['state'] })).Data.scheduled).to.deep.equal(['2']);
    expect((await queueCall(n, { command: ['list'], state: ['waiting'] })).Data.objects).to.deep.equal([]);
    expect((await queueCall(n, { command: ['status'] })).Data).to.deep.equal({
      waiting: ['0'],
      scheduled: ['2'],
      retrying: ['0'],
      dead: ['0'],
      done: ['0'],
      queuesize: ['2'],
      status: ['running'],
    });
  });

  it('delete removes a scheduled entry (its timer finds nothing) and clear removes them all; the others keep their time', async () => {
    const n = await start();
    const doomed = (await queueCall(n, { delay: ['800ms'] }, { item: ['deleted'] })).Data.keys![0]!;
    await queueCall(n, { delay: ['1s'] }, { item: ['kept'] });
    const d = await queueCall(n, { command: ['delete'], key: [doomed] });
    expect(d.Data.deleted).to.deep.equal(['1']);
    await until(() => deliveries().length === 1, 5000);
    await sleep(300);
    expect(deliveries().map((x) => x.message.Data.item![0])).to.deep.equal(['kept']);
    await queueCall(n, { delay: ['500ms'] }, { item: ['cleared'] });
    expect((await queueCall(n, { command: ['clear'] })).Data.cleared).to.deep.equal(['1']);
    await sleep(900);
    expect(deliveries()).to.have.length(1);
  });

  it('a paused queue keeps them until due, then waiting in FIFO order; resume delivers them', async () => {
    const n = await start({ StartPaused: true });
    const first = (await queueCall(n, { delay: ['300ms'] }, { item: ['first'] })).Data.keys![0];
    await queueCall(n, {}, { item: ['second'] });
    expect((await queueCall(n, { command: ['list'], state: ['scheduled'] })).Data.objects).to.deep.equal([first]);
    await sleep(700);
    expect((await queueCall(n, { command: ['list'], groupby: ['state'] })).Data.waiting).to.deep.equal(['2']);
    expect(deliveries()).to.have.length(0);
    await queueCall(n, { command: ['resume'] });
    await until(() => deliveries().length === 2, 5000);
    expect(deliveries().map((x) => x.message.Data.item![0])).to.deep.equal(['first', 'second']);
  });

  it('fan-out entries take the request delay unless the template gives one; step with a key delivers a scheduled entry now', async () => {
    const template =
      '[[ define "two" ]][[ addEntry (newRequest) ]][[ $c := newControl ]][[ addValue $c "delay" "0" ]][[ $r := newRequest ]][[ setRequestControl $r $c ]][[ addEntry $r ]][[ end ]]';
    const n = await start({ Template: template });
    const r = await queueCall(n, { template_define: ['two'], delay: ['1h'] });
    expect(r.Data.queuesize).to.deep.equal(['2']);
    await until(() => deliveries().length === 1, 5000);
    expect(deliveries()[0]!.message.Control, 'the template delay is not passed on either').to.deep.equal({});
    const scheduled = (await queueCall(n, { command: ['list'], state: ['scheduled'] })).Data.objects!;
    expect(scheduled).to.have.length(1);
    expect((await queueCall(n, { command: ['step'] })).Code, 'without a key nothing scheduled is taken early').to.equal(
      404,
    );
    const stepped = await queueCall(n, { command: ['step'], key: scheduled });
    expect(stepped.Data.result_code).to.deep.equal(['200']);
    expect(deliveries()).to.have.length(2);
  });

  it('a delay longer than the longest Node timer (30 days) stays scheduled without timer overflow', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): number => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const n = await start();
      await queueCall(n, { delay: ['720h'] }, { item: ['next month'] });
      await sleep(300);
      expect(deliveries()).to.have.length(0);
      expect((await queueCall(n, { command: ['list'], state: ['scheduled'] })).Data.objects).to.have.length(1);
      expect(warnings).not.to.include('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  describe('across a SIGKILL', () => {
    let killed: NodeProcess | undefined;
    after(async () => {
      await killed?.kill();
    });

    it('an entry scheduled in a node killed with SIGKILL is delivered by the next node on the store, at its time', async () => {
      const file = await killableQueueNode(dir, 'command,delay');
      killed = await startNodeProcess(file);
      const sent = Date.now();
      const res = await fetch(`http://127.0.0.1:${killed.port}/queue/action`, {
        method: 'POST',
        headers: { delay: '4s' },
        body: JSON.stringify({ item: ['survivor'] }),
      });
      const body = (await res.json()) as { Code: number; Data: { keys: string[] } };
      expect(body.Code).to.equal(200);
      await killed.kill('SIGKILL');
      killed = undefined;
      expect(deliveries(), 'killed before its time').to.have.length(0);

      const n = await start();
      const listed = await queueCall(n, { command: ['list'], state: ['scheduled'] });
      if (Date.now() - sent < 3500)
        expect(listed.Data.objects, 'still scheduled after the restart').to.deep.equal(body.Data.keys);
      await until(() => deliveries().length === 1, 10_000);
      expect(Date.parse(deliveries()[0]!.time) - sent).to.be.at.least(4000);
      expect(deliveries()[0]!.message.Data).to.deep.equal({ item: ['survivor'] });
    });
  });
});
