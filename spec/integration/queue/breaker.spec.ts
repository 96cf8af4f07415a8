/**
 * Circuit breakers per target channel, on a node (both stores: queue-store.ts runs this suite on
 * JetStream too). The target is a listener whose answer Code the test switches: failing, the
 * breaker opens; entries wait held without spending attempts (the target gets nothing more); after
 * BreakerOpenFor it half-opens and sends probes one at a time; good probes close it and every held
 * entry goes out in FIFO order. Status, /metrics figures, the journal and the breaker command show
 * it; an operator opens and closes one.
 */
import { expect } from 'chai';
import type { HiveNode } from '../../../node/node.js';
import type { Result } from '../../../protocol/message.js';
import { mapOf } from '../../../protocol/message.js';
import { startTestNode } from '../helpers.js';
import { queueCall, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue circuit breaker per target channel (Breaker, BreakerOpenFor, breaker command)', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(1000);
    node = undefined;
  });

  /** The switchable target: answers `code.now`, records what it got (item values) and when a delivery overlapped another. */
  interface Target {
    code: { now: number };
    got: Array<{ item: string; at: number }>;
    maxInFlight: number;
  }
  const start = async (
    extra: Record<string, string | number> = {},
  ): Promise<{ node: HiveNode; target: Target; logs: () => string }> => {
    const started = await startTestNode([
      {
        service: 'queue',
        NAME: 'queue',
        PersistPath: `${dir}/store`,
        DefaultChannel: 'target',
        DeliveryConcurrency: 4,
        DoneRetention: '1h',
        Breaker: 'errors>50%/10s,min=3',
        BreakerOpenFor: '2s',
        BreakerProbes: 2,
        ...extra,
      },
    ]);
    node = started.node;
    const target: Target = { code: { now: 503 }, got: [], maxInFlight: 0 };
    let inFlight = 0;
    await node.hive.listen('target', (d) => {
      const item = d.message.Data.item?.[0] ?? '';
      target.got.push({ item, at: Date.now() });
      inFlight++;
      target.maxInFlight = Math.max(target.maxInFlight, inFlight);
      const code = target.code.now;
      // answered a little later, so a second delivery would overlap a probe if one were sent
      setTimeout(() => {
        inFlight--;
        d.respond({
          Code: code,
          Message: code < 300 ? 'Success' : `switched to ${code}`,
          Data: mapOf({ item: [item] }),
          List: [],
        });
      }, 30);
    });
    return { ...started, target };
  };
  const add = (n: HiveNode, item: string): Promise<Result> =>
    queueCall(n, { requeue_timer: ['0'], requeue_count: ['10'] }, { item: [item] });
  const status = (n: HiveNode): Record<string, unknown> => n.services.find((s) => s.kind === 'queue')!.running.status();
  const breaker = (n: HiveNode, action: string, channel?: string): Promise<Result> =>
    queueCall(n, { command: ['breaker'], breaker: [action], ...(channel ? { channel: [channel] } : {}) });
  const attemptsOf = async (n: HiveNode, key: string): Promise<number> =>
    Number((await queueCall(n, { command: ['fetch'], key: [key] })).Data.attempts![0]);
  const journal = (n: HiveNode): string[] =>
    n.journal
      .entries()
      .filter((e) => e.event === 'breaker')
      .map((e) => e.action ?? '');

  it('opens on a failing target, holds entries without spending attempts, half-opens, probes one at a time and closes', async () => {
    const { node: n, target } = await start();
    const keys: string[] = [];
    for (const item of ['a', 'b', 'c']) keys.push((await add(n, item)).Data.keys![0]!);
    // three of three failed: open
    await until(() => (status(n).breakers as Record<string, number> | undefined)?.target === 2, 5000);
    const failedBeforeOpen = target.got.length;
    expect(failedBeforeOpen).to.be.within(3, 6); // each failed once (a retry may have left before the third outcome)
    for (const item of ['d', 'e', 'f', 'g', 'h']) keys.push((await add(n, item)).Data.keys![0]!);
    await sleep(400);
    // held: nothing reached the target while open, and no entry spent an attempt
    expect(target.got.length).to.equal(failedBeforeOpen);
    const attemptsWhileOpen = await Promise.all(keys.map((k) => attemptsOf(n, k)));
    expect(attemptsWhileOpen.slice(3)).to.deep.equal([0, 0, 0, 0, 0]);
    expect((status(n).breakerHeld as Record<string, number>).target).to.equal(8);
    const shown = await breaker(n, 'status', 'target');
    expect(shown.Data.breaker).to.deep.equal(['open']);
    expect(shown.Data.held).to.deep.equal(['8']);
    expect(shown.Data.reason![0]).to.match(/^errors>50%\/10s,min=3: \d of \d deliveries failed$/);
    expect(journal(n).join('\n')).to.match(/breaker of channel 'target' opened: errors>50%/);

    // the target recovers: after BreakerOpenFor (2 s) the probes go out one at a time, then all the rest
    target.code.now = 200;
    await until(() => (status(n).breakers as Record<string, number>).target === 0, 10_000);
    await until(() => (status(n).size as number) === 0, 10_000);
    const afterOpen = target.got.slice(failedBeforeOpen);
    expect(afterOpen.map((g) => g.item).sort()).to.deep.equal(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    // the two probes first, one after the other (the second only once the first answered: 30 ms apart at least)
    expect(afterOpen[1]!.at - afterOpen[0]!.at).to.be.at.least(25);
    const log = journal(n).join('\n');
    expect(log).to.match(/half-open after 2000 ms/);
    expect(log).to.match(/closed after 2 good probe\(s\); \d held entries released/);
    // the entries that never failed were delivered at their first attempt (kept as done: a write not awaited, on JetStream a moment later)
    await until(
      async () =>
        (await Promise.all(keys.map((k) => queueCall(n, { command: ['fetch'], key: [k] })))).every(
          (r) => r.Data.state?.[0] === 'done',
        ),
      5000,
    );
    const attempts = await Promise.all(keys.map((k) => attemptsOf(n, k)));
    expect(attempts.slice(3)).to.deep.equal([1, 1, 1, 1, 1]);
    const metrics = await n.metrics.text();
    expect(metrics).to.match(
      /hivenode_service_figure_by_key\{service="queue",kind="queue",figure="breakers",key="target"\} 0/,
    );
  });

  it('a failed probe opens it again; entries keep their attempts through both openings', async () => {
    const { node: n, target } = await start({ BreakerProbes: 1 });
    for (const item of ['a', 'b', 'c']) await add(n, item);
    await until(() => (status(n).breakers as Record<string, number> | undefined)?.target === 2, 5000);
    await sleep(200); // retries sent before it opened have arrived
    const before = target.got.length;
    // still failing: the half-open probe fails and it opens again
    await until(() => journal(n).some((l) => /opened: probe failed: 503 switched to 503/.test(l)), 5000);
    expect(target.got.length).to.equal(before + 1);
    expect((await breaker(n, 'status', 'target')).Data.opens).to.deep.equal(['2']);
    target.code.now = 200;
    await until(() => (status(n).size as number) === 0, 10_000);
  });

  it('the breaker command opens one by hand (held until closed), shows every breaker, and closes it', async () => {
    const { node: n, target } = await start({ Breaker: '', BreakerOpenFor: '500ms' });
    target.code.now = 200;
    const opened = await breaker(n, 'open', 'target');
    expect(opened.Code).to.equal(200);
    expect(opened.Data.breaker).to.deep.equal(['open']);
    expect(opened.Data.until).to.deep.equal(['']);
    for (const item of ['a', 'b']) await add(n, item);
    await sleep(1000); // beyond BreakerOpenFor: a breaker opened by hand does not half-open
    expect(target.got).to.deep.equal([]);
    const all = await breaker(n, 'status');
    expect(all.Data.channels).to.deep.equal(['target']);
    expect(all.List).to.have.length(1);
    const closed = await breaker(n, 'close', 'target');
    expect(closed.Data.breaker).to.deep.equal(['closed']);
    await until(() => target.got.length === 2, 5000);
    expect(target.got.map((g) => g.item)).to.deep.equal(['a', 'b']);
    expect(journal(n).join('\n')).to.match(/opened by command[\s\S]*closed by command; 2 held entries released/);
  });

  it('refuses a channel beyond AllowedChannels (403) and a bad action (400)', async () => {
    const { node: n } = await start({ Breaker: '' });
    expect((await breaker(n, 'open', 'elsewhere')).Code).to.equal(403);
    const bad = await breaker(n, 'toggle', 'target');
    expect(bad.Code).to.equal(400);
    expect(bad.Message).to.match(/control breaker is 'toggle'/);
  });

  it('refuses a Breaker it cannot read at start, naming the expression', async () => {
    const err = await start({ Breaker: 'errors>50%/10s;errors>lots' }).catch((e: unknown) => e);
    expect((err as Error).message).to.match(
      /Breaker: 'errors>lots' is not an expression; expected expressions separated by ';'/,
    );
  });
});
