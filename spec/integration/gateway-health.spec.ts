import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../../node/node.js';
import { freePort } from '../adapters/ports.js';
import { tempDir } from '../temp.js';
import { sleep } from '../support/wait.js';

const layer = (
  source: string,
  params: Record<string, string | number>,
): { source: string; values: Array<readonly [string, string]> } => ({
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
    // The echo service after the gateway records to a named pipe: opening it for writing blocks its
    // start until the test opens the pipe for reading, so "still starting" lasts as long as the test wants.
    const dir = tempDir('gateway-health');
    const fifo = join(dir, 'record.fifo');
    execFileSync('mkfifo', [fifo]);
    const port = await freePort();
    const starting = HiveNode.start({
      logStream: new PassThrough(),
      services: [
        {
          kind: 'gateway',
          layers: [layer('test gateway', { NAME: 'gw', Port: port, Strict: 'true', OUTPUTCHANNEL: 'q' })],
        },
        { kind: 'echo', layers: [layer('test echo', { NAME: 'q', RecordFile: fifo })] },
      ],
    });
    let node: HiveNode | undefined;
    let reader: FileHandle | undefined;
    const release = async (): Promise<void> => {
      // non-blocking: opening the reader never waits, whether or not the service got to its writer
      reader ??= await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    };
    try {
      let first: Awaited<ReturnType<typeof health>>;
      const end = Date.now() + 20_000;
      while ((first = await health(port)) === undefined && Date.now() < end) await sleep(20);
      expect(first, 'the gateway listens while the echo service is starting').to.not.equal(undefined);
      expect(first!.status).to.equal(503);
      expect(first!.body).to.deep.equal({ status: 'starting', hive: 'connected', starting: ['q'] });
      // the echo service is not serving yet: the gateway refuses as its health check does, with
      // Retry-After, rather than letting the request find nobody on 'q' (a 404 no client retries)
      const early = await fetch(`http://127.0.0.1:${port}/x/y`, { method: 'POST', body: '{}' });
      expect(early.status).to.equal(503);
      expect(early.headers.get('retry-after')).to.equal('1');
      expect(((await early.json()) as { Message: string }).Message).to.match(
        /the node is starting \(q not ready yet\)/,
      );

      await release();
      node = await starting;
      const after = await health(port);
      expect(after).to.deep.equal({ status: 200, body: { status: 'ok', hive: 'connected' } });
    } finally {
      // a failed assertion above must not leave the echo service's start blocked on the pipe
      await release();
      node ??= await starting.catch(() => undefined);
      await node?.stop(2000);
      await reader?.close();
    }
  });

  it('a gateway alone is healthy once it has started', async () => {
    const node = await HiveNode.start({
      logStream: new PassThrough(),
      services: [{ kind: 'gateway', layers: [layer('test gateway', { Port: 0, Strict: 'true' })] }],
    });
    try {
      const port = node.services[0]!.running.status().port as number;
      expect(await health(port)).to.deep.equal({ status: 200, body: { status: 'ok', hive: 'connected' } });
    } finally {
      await node.stop(2000);
    }
  });
});
