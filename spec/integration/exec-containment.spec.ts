/**
 * The exec service's containment with real processes: whatever a command starts — in its process
 * group, in a session of its own (setsid), orphaned to init, with its environment wiped — dies at the
 * Timeout, when the command ends, and at node shutdown; and the answer never waits for a descendant
 * that holds the output pipes.
 */
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { makeMessage, mapOf } from '../../protocol/message.js';
import type { Result } from '../../protocol/message.js';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from './helpers.js';
import { until } from '../support/wait.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const TEMPLATE = '{{ setCmd "/bin/sh" }}{{ addArg "-c" }}{{ addArg (index .Data.script 0) }}';

/**
 * Pids of `sleep <arg>` processes: the whole command line must match, so the shell that started one
 * (its script names the argument too) does not count. pgrep reads /proc; a zombie's command line is empty.
 */
function pidsOf(arg: string): number[] {
  const r = spawnSync('pgrep', ['-f', `^(/bin/)?sleep ${arg.replace('.', '\\.')}$`], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map(Number)
    .filter((pid) => pid !== r.pid);
}

describe('exec service: every process a command starts is contained', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let serial = 0;
  const args: string[] = [];
  /** A unique `sleep` duration: long enough to outlive any test, and findable in /proc. */
  const sleepArg = (): string => {
    const arg = `300.${process.pid}${String(++serial).padStart(3, '0')}`;
    args.push(arg);
    return arg;
  };
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    // a failed test must not leave its sleepers behind: kill them by pid, found by their unique argument
    for (const arg of args.splice(0)) {
      for (const pid of pidsOf(arg)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });
  const shell = async (params: Record<string, string | number>): Promise<(script: string) => Promise<Result>> => {
    ({ node } = await startTestNode([{ service: 'exec', NAME: 'cmd', Template: TEMPLATE, ...params }]));
    return (script) => node!.hive.call('cmd', makeMessage({ Data: mapOf({ script: [script] }) }), 20_000);
  };
  const alive = (sleeps: string[]): string[] => sleeps.filter((a) => pidsOf(a).length > 0);

  it('a timeout kills descendants in their own session, orphaned to init, or with a wiped environment', async () => {
    // Timeout leaves the five processes ample time to appear, even on a loaded machine
    const run = await shell({ Timeout: '4s', KillGrace: '500ms' });
    const [own, orphan, ignoresTerm, wiped, leader] = [sleepArg(), sleepArg(), sleepArg(), sleepArg(), sleepArg()];
    const script = [
      `setsid sleep ${own} &`,
      // the subshell exits at once: its setsid child is reparented to init, no parent link leads to it
      `(setsid sleep ${orphan} >/dev/null 2>&1 &)`,
      // an ignored SIGTERM survives exec: only SIGKILL ends this one
      `setsid sh -c 'trap "" TERM; exec sleep ${ignoresTerm}' &`,
      `env -i /usr/bin/setsid /bin/sleep ${wiped} &`,
      `sleep ${leader}`,
    ].join('\n');
    const started = Date.now();
    const answer = run(script);
    await until(() => alive([own, orphan, ignoresTerm, wiped, leader]).length === 5, 3800);
    const r = await answer;
    expect(r.Code, r.Message).to.equal(504);
    expect(r.Message).to.contain('did not finish in time');
    expect(Date.now() - started).to.be.below(4000 + 500 + 3000);
    await until(() => alive([own, orphan, ignoresTerm, wiped, leader]).length === 0, 5000).catch(() => {
      throw new Error(
        `still running after the timeout: ${alive([own, orphan, ignoresTerm, wiped, leader]).join(', ')}`,
      );
    });
  });

  it('answers 504 at the Timeout with the output so far while a detached descendant holds stdout open', async () => {
    const run = await shell({ Timeout: '1s', KillGrace: '500ms' });
    for (const leaderWaits of [true, false]) {
      const [holder, leader] = [sleepArg(), sleepArg()];
      // setsid's child inherits stdout and stderr: the pipes stay open as long as it lives
      const script = `setsid sh -c "sleep ${holder}" & echo started${leaderWaits ? `; sleep ${leader}` : ''}`;
      const started = Date.now();
      const r = await run(script);
      const took = Date.now() - started;
      expect(r.Code, r.Message).to.equal(504);
      expect(r.Message).to.contain('did not finish in time');
      expect(r.Data.stdout).to.deep.equal(['started']);
      expect(took, `answered after ${took} ms`).to.be.below(1000 + 500 + 3000);
      await until(() => alive([holder, leader]).length === 0, 5000);
    }
  });

  it('a command that ends normally leaves nothing running behind it', async () => {
    const run = await shell({ Timeout: '20s', KillGrace: '500ms' });
    const daemon = sleepArg();
    const r = await run(`setsid sleep ${daemon} </dev/null >/dev/null 2>&1 & echo done`);
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data.stdout).to.deep.equal(['done']);
    await until(() => alive([daemon]).length === 0, 5000);
  });

  it('node shutdown kills a running command and everything it started', async () => {
    const run = await shell({ Timeout: '60s', KillGrace: '5s' });
    const [own, orphan, leader] = [sleepArg(), sleepArg(), sleepArg()];
    const answer = run(`setsid sleep ${own} & (setsid sleep ${orphan} >/dev/null 2>&1 &); sleep ${leader}`).catch(
      (e: unknown) => e,
    );
    await until(() => alive([own, orphan, leader]).length === 3, 5000);
    const stopping = Date.now();
    await node!.stop(1000);
    node = undefined;
    expect(Date.now() - stopping).to.be.below(1000 + 3000);
    // killed before stop resolved: nothing of the command is left at all
    expect(alive([own, orphan, leader])).to.deep.equal([]);
    await answer;
  });

  it('a node process that exits without draining still kills its running commands on the way out', async () => {
    const [own, orphan, leader] = [sleepArg(), sleepArg(), sleepArg()];
    const script = `
import { PassThrough } from 'node:stream';
import { HiveNode } from '${join(ROOT, 'node/node.ts')}';
import { makeMessage, mapOf } from '${join(ROOT, 'protocol/message.ts')}';
const node = await HiveNode.start({ logStream: new PassThrough(), services: [
  { kind: 'exec', layers: [{ source: 'test', values: [['NAME', 'cmd'], ['Template', ${JSON.stringify(TEMPLATE)}], ['Timeout', '60s']] }] },
] });
process.on('SIGUSR2', () => process.exit(1));
console.log('started');
await node.hive.call('cmd', makeMessage({ Data: mapOf({ script: [process.env.EXEC_SCRIPT] }) }), 60000);
`;
    const env = {
      ...process.env,
      EXEC_SCRIPT: `setsid sleep ${own} & (setsid sleep ${orphan} >/dev/null 2>&1 &); sleep ${leader}`,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      await until(() => alive([own, orphan, leader]).length === 3, 15_000).catch(() => {
        throw new Error(`the command did not start: ${out}`);
      });
      // process.exit: no drain, only the 'exit' event, where nothing asynchronous runs
      child.kill('SIGUSR2');
      await exited;
      expect(alive([own, orphan, leader])).to.deep.equal([]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
