import { expect } from 'chai';
import { queueCall, recorded } from '../queue/helpers.js';
import type { ConsoleNode } from './helpers.js';
import { basicHeader, csrfOf, postAction, startConsoleNode } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

/** Waits until the queue reports the entry in that state. */
async function untilState(c: ConsoleNode, key: string, state: string): Promise<void> {
  await until(
    async () => (await queueCall(c.node, { command: ['fetch'], key: [key] }, {}, 'jobs')).Data.state?.[0] === state,
    { ms: 10_000, every: 50, what: `entry ${key} to become ${state}` },
  );
}

describe('console actions through the JSON API: each is the queue command it names', function () {
  this.timeout(30_000);
  let c: ConsoleNode | undefined;
  let headers: Record<string, string>;
  beforeEach(async () => {
    c = await startConsoleNode();
    const { cookie, token } = await csrfOf(c.base);
    headers = { cookie, 'x-csrf-token': token, authorization: basicHeader() };
  });
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
  });

  it('run adds the message of a schedule now, with its controls, and a name that does not exist is 404', async () => {
    const scheduled = await queueCall(
      c!.node,
      { command: ['schedule'], schedule_name: ['report'], cron: ['0 3 1 1 *'] },
      { report: ['yearly'] },
      'jobs',
    );
    expect(scheduled.Code).to.equal(200);
    const run = await postAction(c!.base, 'run', { Control: { schedule_name: ['report'] } }, headers);
    expect(run.status).to.equal(200);
    const key = run.json.Data!.keys![0]!;
    await untilState(c!, key, 'done');
    expect(recorded(c!.record).map((r) => r.message.Data)).to.deep.include({ report: ['yearly'] });
    const unknown = await postAction(c!.base, 'run', { Control: { schedule_name: ['nope'] } }, headers);
    expect(unknown.status).to.equal(404);
  });

  it("run obeys the schedule's overlap rule: with the previous entry still waiting it is 409 naming the schedule and the entry, and the journal records the refusal with the user", async () => {
    expect((await postAction(c!.base, 'pause', {}, headers)).status).to.equal(200);
    await queueCall(
      c!.node,
      { command: ['schedule'], schedule_name: ['report'], cron: ['0 3 1 1 *'] },
      { report: ['yearly'] },
      'jobs',
    );
    const first = await postAction(c!.base, 'run', { Control: { schedule_name: ['report'] } }, headers);
    expect(first.status).to.equal(200);
    const key = first.json.Data!.keys![0]!;
    const second = await postAction(c!.base, 'run', { Control: { schedule_name: ['report'] } }, headers);
    expect(second.status).to.equal(409);
    expect(second.json.Message).to.equal(
      `schedule 'report' was not run: its overlap rule 'skip' adds no entry while 1 earlier entry is still in the queue: '${key}' (waiting)`,
    );
    const journal = (await (await fetch(`${c!.base}/api/journal?service=jobs&event=action`)).json()) as Array<{
      user: string;
      action: string;
    }>;
    expect(journal.map((e) => `${e.user}: ${e.action}`)).to.include(
      `ops: run schedule_name=report → 409 ${second.json.Message}`,
    );
    const waiting = (await (await fetch(`${c!.base}/api/queues/jobs?state=waiting`)).json()) as { total: number };
    expect(waiting.total, 'the refused run added nothing').to.equal(1);
  });

  it('a paused queue delivers nothing until step delivers the entry named; delete removes a waiting one', async () => {
    expect((await postAction(c!.base, 'pause', {}, headers)).status).to.equal(200);
    const a = (await queueCall(c!.node, {}, { n: ['a'] }, 'jobs')).Data.keys![0]!;
    const b = (await queueCall(c!.node, {}, { n: ['b'] }, 'jobs')).Data.keys![0]!;
    await sleep(200);
    expect(recorded(c!.record)).to.have.length(0);
    const step = await postAction(c!.base, 'step', { Control: { key: [b] } }, headers);
    expect(step.status).to.equal(200);
    expect(recorded(c!.record).map((r) => r.message.Data.n)).to.deep.equal([['b']]);
    const del = await postAction(c!.base, 'delete', { Control: { key: [a] } }, headers);
    expect(del.json.Data).to.deep.include({ deleted: ['1'] });
    const page = (await (await fetch(`${c!.base}/api/queues/jobs?state=waiting`)).json()) as { total: number };
    expect(page.total).to.equal(0);
  });

  it('a queue page asks the queue for its 20 keys only: page 3 of 45 waiting entries holds the last 5, in list order', async () => {
    expect((await postAction(c!.base, 'pause', {}, headers)).status).to.equal(200);
    for (let i = 0; i < 45; i++) await queueCall(c!.node, {}, { n: [String(i)] }, 'jobs');
    const all = (await queueCall(c!.node, { command: ['list'], state: ['waiting'] }, {}, 'jobs')).Data.objects!;
    type Page = { total: number; pages: number; entries: Array<{ key: string; data: { n: string[] } }> };
    const third = (await (await fetch(`${c!.base}/api/queues/jobs?state=waiting&page=3`)).json()) as Page;
    expect({ total: third.total, pages: third.pages }).to.deep.equal({ total: 45, pages: 3 });
    expect(third.entries.map((e) => e.key)).to.deep.equal(all.slice(40));
    const first = (await (await fetch(`${c!.base}/api/queues/jobs?state=waiting`)).json()) as Page;
    expect(first.entries.map((e) => e.key)).to.deep.equal(all.slice(0, 20));
    const beyond = (await (await fetch(`${c!.base}/api/queues/jobs?state=waiting&page=9`)).json()) as Page;
    expect({ total: beyond.total, entries: beyond.entries }).to.deep.equal({ total: 45, entries: [] });
  });

  it('replay and purge take the filters of the page: a Data field value picks the dead entries they act on', async () => {
    for (const customer of ['acme', 'acme', 'globex'])
      await queueCall(c!.node, { channel: ['nobody-here'] }, { customer: [customer] }, 'jobs');
    for (let end = Date.now() + 10_000; Date.now() < end; await sleep(50)) {
      if (((await (await fetch(`${c!.base}/api/queues/jobs?state=dead`)).json()) as { total: number }).total === 3)
        break;
    }
    const acme = (await (await fetch(`${c!.base}/api/queues/jobs?state=dead&field=customer&value=acme`)).json()) as {
      total: number;
      entries: Array<{ data: { customer: string[] } }>;
    };
    expect(acme.total).to.equal(2);
    expect(acme.entries.map((e) => e.data.customer[0])).to.deep.equal(['acme', 'acme']);
    const purged = await postAction(
      c!.base,
      'purge',
      { Control: { state: ['dead'], groupby: ['customer'], list: ['globex'] } },
      headers,
    );
    expect(purged.json.Data).to.deep.include({ purged: ['1'] });
    const replayed = await postAction(
      c!.base,
      'replay',
      { Control: { state: ['dead'], groupby: ['customer'], list: ['acme'] } },
      headers,
    );
    expect(replayed.json.Data).to.deep.include({ replayed: ['2'] });
  });
});
