import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recorded } from '../../integration/queue/helpers.js';
import type { NatsServer } from './server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from './server.js';
import { tempDir } from '../../temp.js';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';
import { sleep } from '../../support/wait.js';
import { requireInstalled } from '../../support/installed.js';

/** Starts `hivenode run` on a node file and resolves once it prints what runs. */
function run(file: string): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn(process.execPath, [...HIVENODE_ARGS, 'run', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start: ${out}`)), 30_000);
    const poll = setInterval(() => {
      if (out.includes('node running')) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({ child, out: () => out });
      } else if (child.exitCode !== null) {
        clearInterval(poll);
        clearTimeout(timer);
        reject(new Error(`node exited: ${out}`));
      }
    }, 25);
  });
}

describe('several processes on one NATS hive', function () {
  this.timeout(120_000);
  let server: NatsServer;
  const children: ChildProcess[] = [];
  let dir: string;
  before(function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
  });
  beforeEach(async () => {
    server = await natsServer();
    dir = tempDir('hn-multi-');
    writeFileSync(join(dir, 'token'), `${server.token}\n`);
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    await server?.stop();
  });

  const nodeFile = (name: string, services: string[]): string => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      [
        `hive: {SERVERHOST: "${server.url}", SERVERAUTH: "file://${join(dir, 'token')}"}`,
        'services:',
        ...services.map((s) => `  - ${s}`),
        '',
      ].join('\n'),
    );
    return file;
  };
  const startAll = async (): Promise<number> => {
    const files = [
      nodeFile('echo1', [
        `{service: echo, NAME: echo1, INPUTCHANNEL: work, RecordFile: "${join(dir, 'echo1.jsonl')}"}`,
      ]),
      nodeFile('echo2', [
        `{service: echo, NAME: echo2, INPUTCHANNEL: work, RecordFile: "${join(dir, 'echo2.jsonl')}"}`,
      ]),
      nodeFile('queue', [
        `{service: queue, NAME: q, PersistPath: "${join(dir, 'store')}", DefaultChannel: work, DefaultRequeueTime: 1, DefaultRequeueCount: 100, DeliveryConcurrency: 8}`,
      ]),
      nodeFile('gateway', [
        '{service: gateway, NAME: gw, Port: 0, Strict: true, Routes: "queue=q;work=work", OUTPUTCHANNEL: work, RequestTimeout: 2s}',
      ]),
    ];
    const started = await Promise.all(files.map(run));
    children.push(...started.map((s) => s.child));
    return Number(/serves HTTP on port (\d+)/.exec(started[3]!.out())![1]);
  };
  const post = async (
    port: number,
    path: string,
    body: unknown,
  ): Promise<{ status: number; json: { Code: number; Data: Record<string, string[]> } }> => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as never };
  };

  it('gateway, two echo processes and a queue process give the same results as the embedded hive', async () => {
    const port = await startAll();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => post(port, '/work/op', { i: [String(i)] })),
    );
    answers.forEach((a, i) => {
      expect(a.status).to.equal(200);
      expect(a.json.Data).to.deep.equal({ i: [String(i)] });
    });
    const one = recorded(join(dir, 'echo1.jsonl')).length;
    const two = recorded(join(dir, 'echo2.jsonl')).length;
    expect(one + two).to.equal(100);
    expect(one).to.be.within(20, 80);
    for (let i = 0; i < 50; i++)
      expect((await post(port, '/queue/action', { q: [String(i)] })).json.Code).to.equal(200);
    const end = Date.now() + 30_000;
    const queued = (): number =>
      [...recorded(join(dir, 'echo1.jsonl')), ...recorded(join(dir, 'echo2.jsonl'))].filter((r) => r.message.Data.q)
        .length;
    while (queued() < 50 && Date.now() < end) await sleep(100);
    expect(queued()).to.equal(50);
  });

  it('nats-server restarted mid-traffic: the gateway answers 503 during the outage, recovers, and no queue entry is lost', async () => {
    const port = await startAll();
    for (let i = 0; i < 200; i++)
      expect((await post(port, '/queue/action', { q: [String(i)] })).json.Code).to.equal(200);
    await server.stop();
    await sleep(500);
    const during = await post(port, '/work/op', {});
    expect(during.status).to.equal(503);
    await sleep(1500);
    await server.start();
    const end = Date.now() + 60_000;
    let status = 0;
    while (Date.now() < end && status !== 200) {
      status = (await post(port, '/work/op', { after: ['outage'] })).status;
      if (status !== 200) await sleep(250);
    }
    expect(status).to.equal(200);
    const delivered = (): Set<string> =>
      new Set(
        [...recorded(join(dir, 'echo1.jsonl')), ...recorded(join(dir, 'echo2.jsonl'))]
          .filter((r) => r.message.Data.q)
          .map((r) => r.message.Data.q![0]!),
      );
    while (delivered().size < 200 && Date.now() < end) await sleep(200);
    expect(delivered().size).to.equal(200);
  });
});
