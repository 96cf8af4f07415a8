import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../temp.js';
import type { NatsServer } from './server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from './server.js';
import type { Upstream } from '../../integration/tracing-scenario.js';
import {
  checkOneTrace,
  clientService,
  complete,
  frontServices,
  sendRequest,
  startOtlpReceiver,
  startUpstream,
} from '../../integration/tracing-scenario.js';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';
import { sleep } from '../../support/wait.js';
import { requireInstalled } from '../../support/installed.js';

interface Running {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

/** `hivenode run` on a node file; resolves once it prints what runs. */
function run(file: string): Promise<Running> {
  const child = spawn(process.execPath, [...HIVENODE_ARGS, 'run', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start: ${out}`)), 30_000);
    const poll = setInterval(() => {
      if (out.includes('node running')) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({ child, out: () => out, exited });
      } else if (child.exitCode !== null) {
        clearInterval(poll);
        clearTimeout(timer);
        reject(new Error(`node exited: ${out}`));
      }
    }, 25);
  });
}

describe('tracing over a NATS hive: gateway and queue in one process, the HTTP client in another', function () {
  this.timeout(120_000);
  let server: NatsServer;
  let upstream: Upstream;
  const children: ChildProcess[] = [];
  before(function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
  });
  beforeEach(async () => {
    server = await natsServer();
    upstream = await startUpstream();
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    await server?.stop();
    await upstream.close();
  });

  it('one trace across both processes: response header, queue attempts, HTTP client spans, upstream traceparent and log lines', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const dir = tempDir('hn-trace-nats-');
      writeFileSync(join(dir, 'token'), `${server.token}\n`);
      // a JSON node file, each with its own service.name; the tracing section is what the processes export by
      // the front node exports in protobuf (the default), the back one in JSON
      const nodeFile = (
        name: string,
        services: Array<Record<string, string | number | boolean>>,
        protocol?: string,
      ): string => {
        const file = join(dir, `${name}.json`);
        writeFileSync(
          file,
          JSON.stringify({
            hive: { SERVERHOST: server.url, SERVERAUTH: `file://${join(dir, 'token')}` },
            tracing: { endpoint: receiver.endpoint, serviceName: name, ...(protocol ? { protocol } : {}) },
            services,
          }),
        );
        return file;
      };
      const front = await run(nodeFile('front', frontServices(join(dir, 'store'))));
      children.push(front.child);
      const back = await run(nodeFile('back', [clientService(upstream, 'TEXT')], 'http/json'));
      children.push(back.child);
      const port = Number(/serves HTTP on port (\d+)/.exec(front.out())![1]);

      const answer = await sendRequest(port);
      expect(answer.status).to.equal(200);
      const end = Date.now() + 30_000;
      while (upstream.traceparents.length < 2 && Date.now() < end) await sleep(50);
      // a drained node exports what it batched before it exits
      front.child.kill('SIGTERM');
      back.child.kill('SIGTERM');
      expect(await front.exited).to.equal(0);
      expect(await back.exited).to.equal(0);
      expect(complete(receiver.spans), `spans received: ${receiver.spans.map((s) => s.name).join(', ')}`).to.equal(
        true,
      );
      expect(receiver.refused).to.deep.equal([]);
      expect([...receiver.serviceNames].sort()).to.deep.equal(['back', 'front']);
      expect([...receiver.contentTypes].sort()).to.deep.equal(['application/json', 'application/x-protobuf']);
      checkOneTrace({
        header: answer.traceparent,
        spans: receiver.spans,
        upstream,
        logs: back.out(),
        logFormat: 'TEXT',
      });
    } finally {
      await receiver.close();
    }
  });
});
