import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../../node/node.js';
import { freePort } from '../adapters/ports.js';
import { tempDir } from '../temp.js';

const layer = (source: string, params: Record<string, string | number>): { source: string; values: Array<readonly [string, string]> } => ({
  source,
  values: Object.entries(params).map(([k, v]) => [k, String(v)] as const),
});

async function health(port: number): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthcheck`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return undefined; // not listening yet
  }
}

describe('gateway health check before readiness', function () {
  this.timeout(30_000);

  it('answers 503 "starting" while a later service of the node is still starting, then 200', async () => {
    // The queue after the gateway reads its Template from a named pipe: its start blocks until the
    // test writes the template, so "still starting" lasts exactly as long as the test wants.
    const dir = tempDir('gateway-health');
    const fifo = join(dir, 'template.fifo');
    execFileSync('mkfifo', [fifo]);
    const port = await freePort();
    const starting = HiveNode.start({
      logStream: new PassThrough(),
      services: [
        { kind: 'echo', layers: [layer('test echo', { NAME: 'echo' })] },
        { kind: 'gateway', layers: [layer('test gateway', { NAME: 'gw', Port: port, Strict: 'true', OUTPUTCHANNEL: 'q' })] },
        { kind: 'queue', layers: [layer('test queue', { NAME: 'q', PersistPath: '', DefaultChannel: 'echo', Template: `file://${fifo}` })] },
      ],
    });
    let node: HiveNode | undefined;
    let released = false;
    const release = async (): Promise<void> => {
      released = true;
      await writeFile(fifo, '[[ define "x" ]][[ end ]]');
    };
    try {
      let first: Awaited<ReturnType<typeof health>>;
      const end = Date.now() + 20_000;
      while ((first = await health(port)) === undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(first, 'the gateway listens while the queue is starting').to.not.equal(undefined);
      expect(first!.status).to.equal(503);
      expect(first!.body).to.deep.equal({ status: 'starting', hive: 'connected', starting: ['q'] });
      // the queue really is not serving yet: a request through the gateway finds nobody on 'q'
      const early = await fetch(`http://127.0.0.1:${port}/x/y`, { method: 'POST', body: '{}' });
      expect(early.status).to.equal(404);

      await release();
      node = await starting;
      const after = await health(port);
      expect(after).to.deep.equal({ status: 200, body: { status: 'ok', hive: 'connected' } });
    } finally {
      // a failed assertion above must not leave the queue's start blocked on the pipe
      if (!released) await release();
      node ??= await starting.catch(() => undefined);
      await node?.stop(2000);
    }
  });

  it('a gateway alone is healthy once it has started', async () => {
    const node = await HiveNode.start({ logStream: new PassThrough(), services: [{ kind: 'gateway', layers: [layer('test gateway', { Port: 0, Strict: 'true' })] }] });
    try {
      const port = node.services[0]!.running.status().port as number;
      expect(await health(port)).to.deep.equal({ status: 200, body: { status: 'ok', hive: 'connected' } });
    } finally {
      await node.stop(2000);
    }
  });
});
