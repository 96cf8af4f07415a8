/**
 * Flows of one NAME on a nats-server (Store jetstream; docs/ARCHITECTURE.md, The life of a run, 6): one
 * node holds the flow and the other stands by; starts and commands through the standby's gateway reach
 * the holder; the holder SIGKILLed with runs at every point — a slow step under way, a wait step, in
 * line — the standby takes over and every run goes on at its step: the runs the dead holder was
 * sending send their step again only once AckWait passed, with the same idempotency key; none skipped.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { recorded } from '../../integration/queue/helpers.js';
import type { NodeProcess } from '../../reliability/node-process.js';
import { GATEWAY_READY, startNodeProcess } from '../../reliability/node-process.js';
import { tempDir } from '../../temp.js';
import type { NatsServer } from './server.js';
import { natsServer, natsServerAvailable } from './server.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const HOLDING = /active flow holder now/;

async function waitFor(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

describe('flows of one NAME on a nats-server (Store jetstream)', function () {
  this.timeout(120_000);
  let server: NatsServer;
  const nodes: NodeProcess[] = [];
  const dir = tempDir('hn-jsflow-');
  before(async function () {
    if (!natsServerAvailable()) {
      if (process.env.CI) throw new Error('nats-server is not installed (scripts/test.sh installs it)');
      this.skip();
    }
    server = await natsServer({ auth: { kind: 'none' } });
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    await server?.stop();
  });

  // steps: a (fast), slow (3 s), pause (a wait step of 15 s when the Input asks for one: longer than a takeover), c (fast)
  const definition = JSON.stringify({
    steps: [
      { name: 'a', call: 'a', data: { n: '{{index .Input.Data.n 0}}' } },
      { name: 'pick', choice: [{ when: '{{eq (index .Input.Data.kind 0) "wait"}}', next: 'pause' }], default: 'slow' },
      { name: 'slow', call: 'slow', data: { n: '{{index .Input.Data.n 0}}' }, next: 'c' },
      { name: 'pause', wait: '15s' },
      { name: 'c', call: 'c', data: { n: '{{index .Input.Data.n 0}}' } },
    ],
  });
  const nodeOn = async (i: number): Promise<NodeProcess> => {
    const file = join(dir, `node${i}.yaml`);
    writeFileSync(
      file,
      [
        `hive: {SERVERHOST: "${server.url}"}`,
        'services:',
        `  - {service: gateway, NAME: gw${i}, Port: 0, Strict: true, OUTPUTCHANNEL: flow, ControlAllowList: "command,key,state"}`,
        `  - {service: flow, NAME: flow, Store: jetstream, AckWait: 20s, MaxRuns: 4, PersistPath: "${join(dir, `store${i}`)}", Definition: '${definition}'}`,
        `  - {service: echo, NAME: a, RecordFile: "${join(dir, `a${i}.jsonl`)}"}`,
        `  - {service: echo, NAME: slow, Delay: 3000, RecordFile: "${join(dir, `slow${i}.jsonl`)}"}`,
        `  - {service: echo, NAME: c, RecordFile: "${join(dir, `c${i}.jsonl`)}"}`,
        '',
      ].join('\n'),
    );
    const n = await startNodeProcess(file, { ready: GATEWAY_READY, timeoutMs: 60_000 });
    nodes.push(n);
    return n;
  };
  const post = async (
    n: NodeProcess,
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ Code: number; Data: Record<string, string[]> }> => {
    const res = await request(`http://127.0.0.1:${n.port}${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      headersTimeout: 60_000,
    });
    return (await res.body.json()) as { Code: number; Data: Record<string, string[]> };
  };
  const startRun = async (n: NodeProcess, k: number, kind: string): Promise<string> => {
    const r = await post(n, '/order/new', { n: [String(k)], kind: [kind] }, { 'platform-procedure': 'Execution' });
    expect(r.Code).to.equal(200);
    return r.Data.key![0]!;
  };
  /** A step's effects over both nodes: idempotency key and time. */
  const effects = (step: string): Array<{ key: string; at: number }> =>
    [0, 1].flatMap((i) =>
      recorded(join(dir, `${step}${i}.jsonl`)).map((r) => ({
        key: r.message.Control['idempotency-key']![0]!,
        at: Date.parse(r.time),
      })),
    );

  it('one node holds the flow; its loss mid-run: the other takes over, runs sending wait for AckWait, a wait step survives, operations work through either node', async () => {
    const a = await nodeOn(0);
    const b = await nodeOn(1);
    await waitFor(() => [a, b].some((n) => HOLDING.test(n.output())), 30_000, 'a holder');
    const holder = [a, b].find((n) => HOLDING.test(n.output()))!;
    const standby = holder === a ? b : a;
    await waitFor(() => /standing by/.test(standby.output()), 10_000, 'the other standing by');

    // started through the standby's gateway: 6 runs through the slow step (4 at once: MaxRuns), 2 into the wait
    const slow = await Promise.all([1, 2, 3, 4, 5, 6].map((k) => startRun(standby, k, 'slow')));
    const waiting = await Promise.all([7, 8].map((k) => startRun(standby, k, 'wait')));
    await waitFor(() => effects('slow').length >= 4, 10_000, 'the slow steps under way');
    const status = await post(standby, '/flow/status', {}, { command: 'status' });
    expect(status.Code).to.equal(200);
    expect(status.Data.queuesize).to.deep.equal(['8']);
    // the next renewal of the lease (every 2 s) reports the runs sending
    await sleep(2_100);
    const inFlight = new Set(effects('slow').map((e) => e.key));
    await holder.kill('SIGKILL');
    const lostAt = Date.now();
    await waitFor(() => HOLDING.test(standby.output()), 30_000, 'a takeover');
    const tookOverAt = Date.now();
    expect(standby.output()).to.match(
      /flow: \d+ run\(s\) the previous holder had a step under way for wait until .* \(AckWait\)/,
    );

    // operations on the new holder (the runs read from the stream)
    const fetched = await post(standby, '/flow/fetch', {}, { command: 'fetch', key: waiting[0]! });
    expect(fetched.Code).to.equal(200);
    expect(fetched.Data.state).to.deep.equal(['waiting']);
    expect(fetched.Data.step).to.deep.equal(['pause']);

    await waitFor(() => new Set(effects('c').map((e) => e.key)).size >= 8, 60_000, 'every run at its last step');
    const keys = (step: string): Set<string> => new Set(effects(step).map((e) => e.key));
    for (const run of [...slow, ...waiting]) expect(keys('a').has(`${run}:a`), `run ${run} step a`).to.equal(true);
    for (const run of slow) expect(keys('slow').has(`${run}:slow`), `run ${run} step slow`).to.equal(true);
    for (const run of [...slow, ...waiting]) expect(keys('c').has(`${run}:c`), `run ${run} step c`).to.equal(true);
    // the steps the dead holder was sending were sent again only once AckWait (20 s) passed since its report
    const again = effects('slow').filter((e) => inFlight.has(e.key) && e.at > lostAt);
    expect(again.length, 'slow steps sent again after the loss').to.be.greaterThan(0);
    // (the taker counts from a lease period before its takeover: 14 s after it; runs in line went on at once)
    expect(
      Math.min(...again.map((e) => e.at - tookOverAt)),
      'the first of those steps sent again after the takeover (ms)',
    ).to.be.at.least(12_000);
    // the wait step was not skipped: its runs reached c 15 s after their a at the earliest
    for (const run of waiting) {
      const aAt = effects('a').find((e) => e.key === `${run}:a`)!.at;
      const cAt = Math.min(
        ...effects('c')
          .filter((e) => e.key === `${run}:c`)
          .map((e) => e.at),
      );
      expect(cAt - aAt, `run ${run} waited`).to.be.at.least(14_900);
    }
    await waitFor(
      async () => (await post(standby, '/flow/status', {}, { command: 'status' })).Data.queuesize?.[0] === '0',
      10_000,
      'no run in progress',
    );
    const end = await post(standby, '/flow/status', {}, { command: 'status' });
    expect(end.Data.succeeded).to.deep.equal(['8']);
    expect(end.Data.failed).to.deep.equal(['0']);
    const purged = await post(standby, '/flow/purge', {}, { command: 'purge', state: 'succeeded' });
    expect(purged.Code).to.equal(200);
    expect((await post(standby, '/flow/status', {}, { command: 'status' })).Data.succeeded).to.deep.equal(['0']);
  });
});
