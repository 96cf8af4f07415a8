import { expect } from 'chai';
import { Journal } from '../../../supervisors/journal.js';
import { ActorRuntime } from '../../../supervisors/runtime.js';
import type { Runtime } from '../../../supervisors/runtime.js';
import type { ActorRef } from '../../../supervisors/runtime.js';
import { ServiceFailureError, TimeoutError, UnavailableError } from '../../../protocol/errors.js';
import { sleep, until } from '../../support/wait.js';

type EchoMsg =
  | { type: 'echo'; n: number; reply: (n: number) => void }
  | { type: 'crash'; reply: (n: number) => void }
  | { type: 'silent' };

function echoActor(rt: Runtime, name = 'echo', policy = {}): ActorRef<EchoMsg> {
  return rt.spawn<number, EchoMsg>(rt.root, {
    name,
    init: () => 0,
    policy,
    receive: (count, msg) => {
      switch (msg.type) {
        case 'echo':
          msg.reply(msg.n);
          return count + 1;
        case 'crash':
          throw new RangeError('asked to crash');
        case 'silent':
          return count;
      }
    },
  });
}

describe('supervisors/runtime', () => {
  let rt: Runtime;
  let journal: Journal;
  beforeEach(() => {
    journal = new Journal(1000);
    rt = new ActorRuntime(journal, 'test');
  });
  afterEach(() => rt.shutdown());

  it('answers 200,000 concurrent asks, each with its own answer', async function () {
    this.timeout(60_000);
    const ref = echoActor(rt);
    const n = 200_000;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        rt.ask<EchoMsg, number>(ref, (reply) => ({ type: 'echo', n: i, reply }), 60_000),
      ),
    );
    let wrong = 0;
    for (let i = 0; i < n; i++) if (answers[i] !== i) wrong++;
    expect(wrong).to.equal(0);
  });

  it('rejects an unanswered ask with TimeoutError after its timeout', async () => {
    const ref = echoActor(rt);
    const started = Date.now();
    const err = await rt.ask<EchoMsg, number>(ref, () => ({ type: 'silent' }), 50).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TimeoutError);
    expect(Date.now() - started).to.be.within(40, 2000);
  });

  it('fails an ask at once when the actor crashes on it, restarts the actor and journals the crash', async () => {
    const ref = echoActor(rt, 'crashy', { initialMs: 30, factor: 2, maxRestarts: 5, withinMs: 10_000 });
    const started = Date.now();
    const err = await rt
      .ask<EchoMsg, number>(ref, (reply) => ({ type: 'crash', reply }), 5000)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ServiceFailureError);
    expect((err as Error).message).to.contain('asked to crash');
    // at once: far below the ask's 5 s timeout
    expect(Date.now() - started).to.be.below(4000);
    // the next message waits for the backoff, then the restarted actor answers it
    expect(await rt.ask<EchoMsg, number>(ref, (reply) => ({ type: 'echo', n: 7, reply }), 5000)).to.equal(7);
    expect(Date.now() - started).to.be.at.least(25);
    const events = journal
      .entries()
      .filter((e) => e.path === '/crashy')
      .map((e) => e.event);
    expect(events).to.include.members(['start', 'crash', 'decision', 'restart']);
    const crash = journal.entries().find((e) => e.event === 'crash');
    expect(crash?.error).to.deep.equal({ class: 'RangeError', message: 'asked to crash' });
    expect(journal.totalsOf('/crashy').restarts).to.equal(1);
  });

  it('escalates to the parent when restarts are exhausted and the parent restarts the child', async () => {
    type SupMsg = { type: 'nothing' };
    const sup = rt.spawn<undefined, SupMsg>(rt.root, {
      name: 'sup',
      init: () => undefined,
      receive: (s) => s,
      childPolicy: { initialMs: 1, maxRestarts: 1, withinMs: 60_000, onExhausted: 'stop' },
    });
    const child = rt.spawn<number, EchoMsg>(sup as ActorRef<never>, {
      name: 'child',
      init: () => 0,
      policy: { initialMs: 1, maxRestarts: 2, withinMs: 60_000 },
      receive: (c, m) => {
        if (m.type === 'crash') throw new Error('boom');
        if (m.type === 'echo') m.reply(m.n);
        return c;
      },
    });
    const crash = (): Promise<unknown> =>
      rt.ask<EchoMsg, number>(child, (reply) => ({ type: 'crash', reply }), 2000).catch((e: unknown) => e);
    for (let i = 0; i < 3; i++) expect(await crash()).to.be.instanceOf(ServiceFailureError);
    await until(() => journal.entries().some((e) => e.event === 'escalation' && e.path === '/sup/child'));
    await until(() =>
      journal
        .entries()
        .some(
          (e) => e.event === 'restart' && e.decision === undefined && e.path === '/sup/child' && (e.restarts ?? 0) >= 1,
        ),
    );
    // the parent restarted it: it answers again
    expect(await rt.ask<EchoMsg, number>(child, (reply) => ({ type: 'echo', n: 3, reply }), 2000)).to.equal(3);
    // crashing on until the parent's own budget is spent makes the parent stop the child
    for (let i = 0; i < 3; i++) await crash();
    await until(() => journal.entries().some((e) => e.event === 'decision' && e.decision === 'stop (by /sup)'));
    const after = await rt
      .ask<EchoMsg, number>(child, (reply) => ({ type: 'echo', n: 1, reply }), 500)
      .catch((e: unknown) => e);
    expect(after).to.be.instanceOf(UnavailableError);
  });

  it('a top-level actor out of restarts stops instead of hanging, and later asks fail with 503', async () => {
    const ref = echoActor(rt, 'fragile', { initialMs: 1, maxRestarts: 1, withinMs: 60_000 });
    for (let i = 0; i < 2; i++)
      await rt.ask<EchoMsg, number>(ref, (reply) => ({ type: 'crash', reply }), 2000).catch(() => undefined);
    await until(() =>
      journal.entries().some((e) => e.path === '/fragile' && e.event === 'decision' && e.decision === 'stop'),
    );
    const err = await rt
      .ask<EchoMsg, number>(ref, (reply) => ({ type: 'echo', n: 1, reply }), 2000)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnavailableError);
  });

  it('a crash in the middle of a batch loses none of the messages queued behind it', async () => {
    const ref = echoActor(rt, 'batchy', { initialMs: 1, maxRestarts: 100, withinMs: 60_000 });
    const asks = Array.from({ length: 1000 }, (_, i) =>
      rt
        .ask<EchoMsg, number>(
          ref,
          (reply) => (i % 100 === 50 ? { type: 'crash', reply } : { type: 'echo', n: i, reply }),
          10_000,
        )
        .then(
          (n) => ({ ok: n === i }),
          (e: unknown) => ({ ok: false, crashed: e instanceof ServiceFailureError }),
        ),
    );
    const results = await Promise.all(asks);
    expect(results.filter((r) => r.ok)).to.have.length(990);
    expect(results.filter((r) => 'crashed' in r && r.crashed)).to.have.length(10);
  });

  it('stopping an actor fails the messages still queued for it with 503', async () => {
    type SlowMsg = { type: 'work'; reply: (n: number) => void };
    // the first message holds the actor until the test has stopped it: the other 49 are still queued then
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const ref = rt.spawn<number, SlowMsg>(rt.root, {
      name: 'slow',
      init: () => 0,
      receive: async (n, m) => {
        await gate;
        m.reply(n);
        return n + 1;
      },
    });
    const asks = Array.from({ length: 50 }, () =>
      rt.ask<SlowMsg, number>(ref, (reply) => ({ type: 'work', reply }), 10_000).catch((e: unknown) => e),
    );
    await sleep(30);
    rt.stop(ref);
    open();
    const results = await Promise.all(asks);
    const unavailable = results.filter((r) => r instanceof UnavailableError).length;
    expect(unavailable).to.be.at.least(49);
    expect(results.every((r) => typeof r === 'number' || r instanceof UnavailableError)).to.equal(true);
  });

  it('lists live actors with their paths', () => {
    echoActor(rt, 'a');
    echoActor(rt, 'b');
    expect(rt.actorInfos().map((a) => a.path)).to.deep.equal(['/a', '/b']);
  });
});
