/**
 * HiveNode.reload in one process (docs/ARCHITECTURE.md, Reloading a node): what is journalled and
 * shown, what is left untouched, the gateway's socket handed over (a keep-alive connection carries
 * on), and a failed start undone.
 */
import { expect } from 'chai';
import { Agent, request } from 'undici';
import { makeMessage, mapOf } from '../../protocol/message.js';
import type { ServicePlan } from '../../node/node-plan.js';
import type { HiveNode } from '../../node/node.js';
import { HiveNode as Node } from '../../node/node.js';
import { PassThrough } from 'node:stream';
import { freePort } from '../adapters/ports.js';
import { runStatus } from '../../bin/status.js';
import { sleep, until } from '../support/wait.js';

const plans = (entries: Array<Record<string, string>>): ServicePlan[] =>
  entries.map(({ service, ...rest }, i) => ({
    kind: service as ServicePlan['kind'],
    layers: [{ source: `n.yaml services[${i}]`, values: Object.entries(rest) }],
    where: `n.yaml services[${i}]`,
  }));

describe('HiveNode.reload', () => {
  let node: HiveNode | undefined;
  let logs = '';
  afterEach(async () => {
    await node?.stop(2_000);
    node = undefined;
  });
  const start = async (entries: Array<Record<string, string>>, dashboardPort?: number): Promise<HiveNode> => {
    const stream = new PassThrough();
    logs = '';
    stream.on('data', (c: Buffer) => (logs += c.toString()));
    node = await Node.start({
      logStream: stream,
      services: plans(entries),
      source: { file: 'n.yaml', hash: 'a'.repeat(64) },
      ...(dashboardPort === undefined ? {} : { dashboardPort }),
    });
    return node;
  };

  it('hivenode status shows the node file, its hash and when it was last applied, and the reload in the journal', async () => {
    const n = await start([{ service: 'echo', NAME: 'e' }], 0);
    await n.reload(plans([{ service: 'echo', NAME: 'e', ReplyCode: '202' }]), 'SIGHUP', 'c'.repeat(64));
    const lines: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => void lines.push(args.join(' '));
    try {
      await runStatus(`http://127.0.0.1:${n.dashboard!.port}`);
    } finally {
      console.log = log;
    }
    const text = lines.join('\n');
    expect(text).to.match(
      new RegExp(`node file n\\.yaml sha256 ${'c'.repeat(16)}, applied ${n.status().source!.appliedAt} \\(1 reload\\)`),
    );
    expect(text).to.match(/reload \/node by SIGHUP applied: changed e \(ReplyCode\)/);
  });

  it('applies a diff by NAME, journals it with who asked, and leaves unchanged services untouched', async () => {
    const n = await start([
      { service: 'echo', NAME: 'keep' },
      { service: 'echo', NAME: 'change', ReplyCode: '200' },
      { service: 'echo', NAME: 'gone' },
    ]);
    const kept = n.services.find((s) => s.name === 'keep')!.running;
    const outcome = await n.reload(
      plans([
        { service: 'echo', NAME: 'keep' },
        { service: 'echo', NAME: 'change', ReplyCode: '201' },
        { service: 'echo', NAME: 'added' },
      ]),
      'SIGHUP',
      'b'.repeat(64),
    );
    expect(outcome).to.include({ applied: true, summary: 'added added; removed gone; changed change (ReplyCode)' });
    expect(n.services.map((s) => s.name)).to.deep.equal(['keep', 'change', 'added']);
    expect(n.services[0]!.running).to.equal(kept);
    const answer = await n.hive.call('change', makeMessage({ Data: mapOf({ a: ['1'] }) }), 2_000);
    expect(answer.Code).to.equal(201);
    expect((await n.hive.call('gone', makeMessage({}), 500)).Code).to.be.oneOf([404, 503]);
    const event = n.journal.entries().find((e) => e.event === 'reload');
    expect(event).to.include({
      path: '/node',
      user: 'SIGHUP',
      action: 'applied: added added; removed gone; changed change (ReplyCode)',
    });
    const status = n.status();
    expect(status.source).to.include({ file: 'n.yaml', hash: 'b'.repeat(64), reloads: 1 });
    expect(Date.parse(status.source!.appliedAt)).to.be.greaterThan(Date.parse(status.node.startedAt) - 1);
    // the replaced and the removed services' actors are gone
    await sleep(50);
    const paths = n.runtime.actorInfos().map((a) => a.path);
    expect(paths.filter((p) => /^\/node\/(gone|change)(\/|$)/.test(p))).to.deep.equal([]);
    expect(paths.some((p) => p.startsWith('/node/change.2'))).to.equal(true);
  });

  it('refuses a file with an error, changes nothing, and journals the refusal', async () => {
    const n = await start([{ service: 'echo', NAME: 'e', ReplyCode: '200' }]);
    const before = n.services[0]!.running;
    const outcome = await n.reload(plans([{ service: 'echo', NAME: 'e', ReplyCode: '201', Bogus: '1' }]), 'alice');
    expect(outcome.applied).to.equal(false);
    expect(n.services[0]!.running).to.equal(before);
    await until(() => /reload refused/.test(logs));
    expect(logs).to.match(/reload refused: n\.yaml: unknown parameter 'Bogus' \(n\.yaml services\[0\]\)/);
    expect(n.journal.entries().find((e) => e.event === 'reload')).to.include({ user: 'alice' });
    expect(n.status().source?.reloads).to.equal(0);
  });

  it('hands the gateway socket over: a keep-alive connection carries on with the new ResponseHeaders', async () => {
    const port = await freePort();
    const gw = (v: string): Record<string, string> => ({
      service: 'gateway',
      NAME: 'gw',
      Port: String(port),
      Strict: 'true',
      Routes: 'a=e',
      ResponseHeaders: `X-Config: ${v}`,
    });
    const n = await start([{ service: 'echo', NAME: 'e' }, gw('one')]);
    const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
    const sockets = new Set<unknown>();
    const get = async (): Promise<string | string[] | undefined> => {
      const res = await request(`http://127.0.0.1:${port}/a/x`, { method: 'POST', body: '{}', dispatcher: agent });
      await res.body.dump();
      expect(res.statusCode).to.equal(200);
      return res.headers['x-config'];
    };
    try {
      agent.on('connect', (_origin, [client]) => sockets.add(client));
      expect(await get()).to.equal('one');
      const outcome = await n.reload(plans([{ service: 'echo', NAME: 'e' }, gw('two')]), 'watch');
      expect(outcome.applied).to.equal(true);
      expect(await get()).to.equal('two');
      await until(() => logs.includes('gateway took over the listener'));
      let connects = 0;
      agent.on('connect', () => connects++);
      expect(await get()).to.equal('two');
      expect(connects, 'no new connection after the reload').to.equal(0);
    } finally {
      await agent.close();
    }
  });

  it('a gateway whose Port changed opens the new port before the old one closes', async () => {
    const [a, b] = [await freePort(), await freePort()];
    const gw = (port: number): Record<string, string> => ({
      service: 'gateway',
      NAME: 'gw',
      Port: String(port),
      Strict: 'true',
      Routes: 'a=e',
    });
    const n = await start([{ service: 'echo', NAME: 'e' }, gw(a)]);
    const post = async (port: number): Promise<number | string> => {
      try {
        const res = await request(`http://127.0.0.1:${port}/a/x`, { method: 'POST', body: '{}' });
        await res.body.dump();
        return res.statusCode;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code ?? 'error';
      }
    };
    let done = false;
    const reloaded = n.reload(plans([{ service: 'echo', NAME: 'e' }, gw(b)]), 'SIGHUP').finally(() => (done = true));
    // while the reload runs, a request finds one port or the other open, never neither
    const neither: number[] = [];
    for (let i = 0; !done || i < 3; i++) {
      const [onA, onB] = await Promise.all([post(a), post(b)]);
      if (onA !== 200 && onB !== 200) neither.push(i);
    }
    expect((await reloaded).applied).to.equal(true);
    expect(neither, 'rounds with neither port answering').to.deep.equal([]);
    expect(await post(b)).to.equal(200);
    expect(await post(a)).to.equal('ECONNREFUSED');
  });

  it('undoes a reload whose start fails: the old gateway serves on', async () => {
    const port = await freePort();
    const taken = await freePort();
    const blocker = (await import('node:net')).createServer().listen(taken, '0.0.0.0');
    await new Promise((r) => blocker.once('listening', r));
    try {
      const n = await start([
        { service: 'echo', NAME: 'e' },
        {
          service: 'gateway',
          NAME: 'gw',
          Port: String(port),
          Strict: 'true',
          Routes: 'a=e',
          ResponseHeaders: 'X-Config: one',
        },
      ]);
      const outcome = await n.reload(
        plans([
          { service: 'echo', NAME: 'e' },
          {
            service: 'gateway',
            NAME: 'gw',
            Port: String(port),
            Strict: 'true',
            Routes: 'a=e',
            ResponseHeaders: 'X-Config: two',
          },
          { service: 'gateway', NAME: 'second', Port: String(taken), Strict: 'true' },
        ]),
        'SIGHUP',
      );
      expect(outcome.applied).to.equal(false);
      const res = await request(`http://127.0.0.1:${port}/a/x`, { method: 'POST', body: '{}' });
      await res.body.dump();
      expect(res.statusCode).to.equal(200);
      expect(res.headers['x-config']).to.equal('one');
      expect(n.services.map((s) => s.name)).to.deep.equal(['e', 'gw']);
    } finally {
      blocker.close();
    }
  });
});
