/**
 * Stopping a queue cleanly: a stopped node holding retrying entries lets its process exit (no timer
 * of the queue keeps Node's event loop alive; checked in a child process, the only place where "the
 * process exits by itself" can be observed), and a node whose start fails after the queue started
 * stops the queue without a crash (the store is not closed under the loading actor).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../../../node/node.js';
import { tempDir } from './helpers.js';
import { sleep } from '../../support/wait.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

const script = (dir: string): string => `
import { PassThrough } from 'node:stream';
import { HiveNode } from '${join(ROOT, 'node/node.ts')}';
import { makeMessage, mapOf } from '${join(ROOT, 'protocol/message.ts')}';
const node = await HiveNode.start({ logStream: new PassThrough(), services: [
  { kind: 'echo', layers: [{ source: 'test', values: [['NAME', 'failing'], ['ReplyCode', '500']] }] },
  { kind: 'queue', layers: [{ source: 'test', values: [['NAME', 'q'], ['PersistPath', '${dir}'], ['DefaultChannel', 'failing'], ['DefaultRequeueTime', '3600']] }] },
] });
await node.hive.call('q', makeMessage({ Data: mapOf({ a: ['1'] }) }), 5000);
for (let i = 0; i < 100; i++) {
  const r = await node.hive.call('q', makeMessage({ Control: mapOf({ command: ['list'], state: ['retrying'] }) }), 5000);
  if ((r.Data.objects ?? []).length === 1) break;
  await new Promise((res) => setTimeout(res, 20));
}
await node.stop(2000);
console.log('stopped');
`;

describe('queue shutdown', function () {
  this.timeout(30_000);

  it('a stopped node with a retrying entry lets the process exit by itself', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(tempDir())], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, 15_000);
      child.on('exit', (code) => {
        clearTimeout(t);
        resolve(code);
      });
    });
    expect(out).to.contain('stopped');
    expect(exited, `the process did not exit by itself after the node stopped:\n${out}`).to.equal(0);
  });

  it('a start that fails after the queue started stops the queue without a crash', async () => {
    const logs = new PassThrough();
    let text = '';
    logs.on('data', (c: Buffer) => (text += c.toString()));
    const failed = await HiveNode.start({
      logStream: logs,
      services: [
        {
          kind: 'queue',
          layers: [
            {
              source: 'test',
              values: [
                ['NAME', 'q'],
                ['PersistPath', tempDir()],
              ],
            },
          ],
        },
        // interceptor mode without interceptors refuses to start
        {
          kind: 'gateway',
          layers: [
            {
              source: 'test',
              values: [
                ['NAME', 'g'],
                ['Port', '0'],
              ],
            },
          ],
        },
      ],
    }).catch((e: unknown) => e as Error);
    expect(failed).to.be.instanceOf(Error);
    await sleep(300);
    expect(text).to.contain("queue listening on channel 'q'");
    expect(text).not.to.match(/crash|SQLITE_MISUSE/);
  });
});
