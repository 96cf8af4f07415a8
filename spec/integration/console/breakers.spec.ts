/**
 * The circuit breakers on the console (README, Console; README, The queue, Circuit breakers): the
 * queue page lists each breaker with its state and held entries, and its Open / Close buttons post
 * the queue's `breaker` command through the console's action checks — an operator's login and the
 * CSRF token, as every action — journaled with the operator's name; /api/queues/<name>/breakers
 * gives the same as JSON.
 */
import { expect } from 'chai';
import { queueCall, recorded } from '../queue/helpers.js';
import type { ConsoleNode } from './helpers.js';
import { basicHeader, csrfOf, postAction, startConsoleNode } from './helpers.js';
import { mapOf } from '../../../protocol/message.js';
import { sleep, until } from '../../support/wait.js';

describe('console circuit breakers: listed on the queue page, opened and closed by an operator', function () {
  this.timeout(30_000);
  let c: ConsoleNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2000);
    c = undefined;
  });

  it('opens a breaker by a button post, shows it holding an entry, closes it, and journals both', async () => {
    c = await startConsoleNode();
    const { cookie, token } = await csrfOf(c.base);
    const headers = { cookie, 'x-csrf-token': token, authorization: basicHeader() };
    // without the CSRF token the console refuses, as for every action
    const forged = await postAction(
      c.base,
      'breaker',
      { Control: { breaker: ['open'], channel: ['recorder'] } },
      { authorization: basicHeader() },
    );
    expect(forged.status).to.equal(403);
    const opened = await postAction(
      c.base,
      'breaker',
      { Control: { breaker: ['open'], channel: ['recorder'] } },
      headers,
    );
    expect(opened.status).to.equal(200);
    expect(opened.json.Data!.breaker).to.deep.equal(['open']);
    await queueCall(c.node, {}, { item: ['held'] }, 'jobs');
    await sleep(300);
    expect(recorded(c.record)).to.have.length(0);

    const page = await (await fetch(`${c.base}/queues/jobs`, { headers: { authorization: basicHeader() } })).text();
    expect(page).to.contain('<h2>Circuit breakers</h2>');
    expect(page).to.match(
      /<tr data-channel="recorder" data-breaker="open"><td><code>recorder<\/code><\/td><td class="bad">open<\/td><td class="num">1<\/td><td>opened by command \(stays open until closed\)<\/td>/,
    );
    expect(page).to.match(
      /action="\/api\/queues\/jobs\/breaker"[^>]*>.*<input type="hidden" name="breaker" value="close">.*Close \(release 1\)/,
    );
    const api = (await (await fetch(`${c.base}/api/queues/jobs/breakers`)).json()) as Array<{
      channel: string;
      state: string;
      held: number;
    }>;
    expect(api.map(({ channel, state, held }) => ({ channel, state, held }))).to.deep.equal([
      { channel: 'recorder', state: 'open', held: 1 },
    ]);

    const closed = await postAction(
      c.base,
      'breaker',
      { Control: { breaker: ['close'], channel: ['recorder'] } },
      headers,
    );
    expect(closed.json.Data!.breaker).to.deep.equal(['closed']);
    await until(() => recorded(c!.record).length === 1, 5000);
    const journal = (await (await fetch(`${c.base}/api/journal?service=jobs`)).json()) as Array<{
      event: string;
      user?: string;
      action: string;
    }>;
    const lines = journal.map((e) => `${e.event} ${e.user ?? '-'}: ${e.action}`);
    expect(lines).to.include('action ops: breaker breaker=open channel=recorder → 200 Success');
    expect(lines).to.include("breaker -: breaker of channel 'recorder' closed by command; 1 held entry released");
  });

  it('refuses a breaker action without a channel or with an action it does not know (400), naming it', async () => {
    c = await startConsoleNode();
    const { cookie, token } = await csrfOf(c.base);
    const headers = { cookie, 'x-csrf-token': token, authorization: basicHeader() };
    const missing = await postAction(c.base, 'breaker', { Control: { breaker: ['open'] } }, headers);
    expect(missing.status).to.equal(400);
    expect(missing.json.Message).to.equal("breaker needs control 'channel'");
    const bad = await postAction(c.base, 'breaker', { Control: { breaker: ['flip'], channel: ['recorder'] } }, headers);
    expect(bad.status).to.equal(400);
    expect(bad.json.Message).to.match(/control breaker is 'flip'/);
  });

  it('a channel DisableAfter disabled is listed with Resume and replay dead: one click releases what it held and replays its dead entries', async () => {
    c = await startConsoleNode({
      queue: [
        ['AllowedChannels', 'recorder,flaky'],
        ['DisableAfter', '300ms'],
      ],
    });
    const code = { now: 503 };
    const got: string[] = [];
    await c.node.hive.listen('flaky', (d) => {
      got.push(d.message.Data.item?.[0] ?? '');
      d.respond({ Code: code.now, Message: code.now < 300 ? 'Success' : 'down', Data: mapOf({}), List: [] });
    });
    const dead = async (): Promise<number> =>
      Number((await queueCall(c!.node, { command: ['status'] }, {}, 'jobs')).Data.dead![0]);
    // no retries (DefaultRequeueCount 0): each failure is a dead entry; the second, 400 ms into the run, disables the channel
    await queueCall(c.node, { channel: ['flaky'] }, { item: ['a'] }, 'jobs');
    await until(async () => (await dead()) === 1, 5000);
    await sleep(400);
    await queueCall(c.node, { channel: ['flaky'] }, { item: ['b'] }, 'jobs');
    await until(async () => (await dead()) === 2, 5000);
    await queueCall(c.node, { channel: ['flaky'] }, { item: ['c'] }, 'jobs');
    await sleep(200);
    expect(got).to.deep.equal(['a', 'b']);

    const page = await (await fetch(`${c.base}/queues/jobs`, { headers: { authorization: basicHeader() } })).text();
    expect(page).to.match(/<tr data-channel="flaky" data-breaker="disabled">/);
    expect(page).to.match(
      /action="\/api\/queues\/jobs\/resume_channel"[^>]*>.*<input type="hidden" name="channel" value="flaky">.*Resume and replay dead \(1 held\)/,
    );

    code.now = 200;
    const { cookie, token } = await csrfOf(c.base);
    const resumed = await postAction(
      c.base,
      'resume_channel',
      { Control: { channel: ['flaky'] } },
      { cookie, 'x-csrf-token': token, authorization: basicHeader() },
    );
    expect(resumed.status).to.equal(200);
    expect(resumed.json.Data!.breaker).to.deep.equal(['closed']);
    expect(resumed.json.Data!.replayed).to.deep.equal(['2']);
    await until(() => got.length === 5, 5000);
    expect(got.slice(2).sort()).to.deep.equal(['a', 'b', 'c']);
    const journal = (await (await fetch(`${c.base}/api/journal?service=jobs&event=action`)).json()) as Array<{
      user: string;
      action: string;
    }>;
    expect(journal.map((e) => `${e.user}: ${e.action}`)).to.include('ops: resume_channel channel=flaky → 200 Success');
  });
});
