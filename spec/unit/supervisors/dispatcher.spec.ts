import { expect } from 'chai';
import { Dispatcher } from '../../../supervisors/dispatcher.js';
import type { Runnable } from '../../../supervisors/dispatcher.js';
import { Journal } from '../../../supervisors/journal.js';
import { ActorRuntime } from '../../../supervisors/runtime.js';
import type { Runtime } from '../../../supervisors/runtime.js';
import type { ActorRef } from '../../../supervisors/runtime.js';
import { sleep } from '../../support/wait.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A runnable that counts its runs and handles `perRun` messages each time. */
function counter(perRun = 1): Runnable & { runs: number } {
  const r = {
    runs: 0,
    runBatch(): number {
      r.runs++;
      return perRun;
    },
  };
  return r;
}

describe('supervisors/dispatcher', () => {
  it('runs the first pass of a turn from a microtask, before the event loop turns', async () => {
    const d = new Dispatcher();
    const r = counter();
    d.schedule(r);
    expect(r.runs).to.equal(0, 'never inside schedule: the caller finishes first');
    await null;
    expect(r.runs).to.equal(1);
  });

  it('defers a later pass of the same turn to the check phase, where it runs once for all', async () => {
    const d = new Dispatcher();
    const first = counter();
    d.schedule(first);
    await null;
    const [a, b] = [counter(), counter()];
    d.schedule(a);
    d.schedule(b);
    await null;
    await null;
    expect([a.runs, b.runs]).to.deep.equal([0, 0]);
    await nextTurn();
    expect([a.runs, b.runs]).to.deep.equal([1, 1]);
    // a new turn: inline again
    const c = counter();
    d.schedule(c);
    await null;
    expect(c.runs).to.equal(1);
  });

  it('runs what a pass wakes in the same pass', async () => {
    const d = new Dispatcher();
    const second = counter();
    const first = {
      runs: 0,
      runBatch(): number {
        first.runs++;
        d.schedule(second);
        return 1;
      },
    };
    d.schedule(first);
    await null;
    expect([first.runs, second.runs]).to.deep.equal([1, 1]);
  });

  it('stops a pass at its budget and goes on in later turns, so timers still run', async () => {
    const d = new Dispatcher(10);
    let handled = 0;
    let timerFired = false;
    const timer = setTimeout(() => (timerFired = true), 1);
    // mail that never runs out: the runnable wakes itself again on every run
    const endless: Runnable = {
      runBatch(): number {
        handled++;
        if (!timerFired) d.schedule(endless);
        return 1;
      },
    };
    d.schedule(endless);
    await null;
    expect(handled).to.equal(10, 'one pass, then the budget is spent');
    const deadline = Date.now() + 5000;
    while (!timerFired && Date.now() < deadline) await nextTurn();
    clearTimeout(timer);
    expect(timerFired, 'the timer fired while the mail was endless').to.equal(true);
    expect(handled).to.be.greaterThan(10);
  });
});

describe('supervisors/runtime on the dispatcher', () => {
  type Hop = { n: number; done: (n: number) => void };
  let rt: Runtime;
  beforeEach(() => {
    rt = new ActorRuntime(new Journal(100), 'dispatch-test');
  });
  afterEach(() => rt.shutdown());

  it('a message crossing two actors is handled before an immediate queued beside it', async () => {
    const order: string[] = [];
    const second = rt.spawn<undefined, Hop>(rt.root, {
      name: 'second',
      init: () => undefined,
      receive: (s, m) => {
        order.push('second');
        m.done(m.n + 1);
        return s;
      },
    });
    const first = rt.spawn<undefined, Hop>(rt.root, {
      name: 'first',
      init: () => undefined,
      receive: (s, m) => {
        order.push('first');
        rt.tell(second, m);
        return s;
      },
    });
    await nextTurn();
    const answered = new Promise<number>((resolve) => rt.tell(first, { n: 1, done: resolve }));
    setImmediate(() => order.push('immediate'));
    expect(await answered).to.equal(2);
    await nextTurn();
    expect(order).to.deep.equal(['first', 'second', 'immediate']);
  });

  it('two actors playing ping-pong without end do not starve timers or I/O', async () => {
    type Ball = { left: number };
    let volleys = 0;
    const players: { ping?: ActorRef<Ball> } = {};
    const pong = rt.spawn<undefined, Ball>(rt.root, {
      name: 'pong',
      init: () => undefined,
      receive: (s, m) => {
        volleys++;
        if (m.left > 0) rt.tell(players.ping!, { left: m.left - 1 });
        return s;
      },
    });
    const ping = rt.spawn<undefined, Ball>(rt.root, {
      name: 'ping',
      init: () => undefined,
      receive: (s, m) => {
        volleys++;
        rt.tell(pong, { left: m.left });
        return s;
      },
    });
    players.ping = ping;
    rt.tell(ping, { left: 1_000_000 });
    const started = volleys;
    await sleep(5);
    expect(volleys).to.be.greaterThan(started).and.lessThan(2_000_000, 'a timer fired while the volleys went on');
  });
});
