/**
 * `hivenode reload --dashboard <url>` (README, Changing a running node): a running node's console
 * re-reads the node file from disk; the command prints the diff and exits 0, or the refusal and
 * exits 2; without an operator's credentials it is refused (2) and nothing changes.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { freePort } from '../adapters/ports.js';
import type { NodeProcess } from '../reliability/node-process.js';
import { startNodeProcess } from '../reliability/node-process.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';
import { tempDir } from '../temp.js';

function hivenode(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...HIVENODE_ARGS, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`hivenode ${args.join(' ')} did not exit: ${stdout}${stderr}`));
    }, 30_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('hivenode reload --dashboard', function () {
  this.timeout(90_000);
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill('SIGTERM');
  });

  it('asks the console to re-read the file: the diff and exit 0; a refused file: its line and exit 2; wrong credentials: exit 2', async () => {
    const dir = tempDir('hn-reload-dashboard-');
    const users = join(dir, 'users');
    writeFileSync(users, `${await passwdLine('ops', 'ops-secret', 4)}\n`);
    const dashboard = await freePort();
    const file = join(dir, 'node.yaml');
    const write = (extra: string): void =>
      writeFileSync(
        file,
        `dashboard: {Port: ${dashboard}, Users: "${users}"}\nservices:\n  - {service: echo, NAME: echo${extra}}\n`,
      );
    write('');
    node = await startNodeProcess(file, { ready: /console on port (\d+)/ });
    const url = `http://127.0.0.1:${dashboard}`;
    const env = { HIVENODE_PASSWORD: 'ops-secret' };

    write(', ReplyCode: 201');
    const applied = await hivenode(['reload', '--dashboard', url, '--user', 'ops'], env);
    expect(applied.code, applied.stderr).to.equal(0);
    expect(applied.stdout.trim()).to.equal('reload applied: changed echo (ReplyCode)');
    expect(node.output()).to.match(/reload applied: .*node\.yaml: changed echo \(ReplyCode\) \(asked by ops\)/);

    write(', Bogus: 1');
    const refused = await hivenode(['reload', '--dashboard', url, '--user', 'ops'], env);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(
      /^hivenode: reload refused: unknown parameter 'Bogus' \(node\.yaml services\[0\]\)/,
    );

    write(', ReplyCode: 202');
    const wrong = await hivenode(['reload', '--dashboard', url, '--user', 'ops'], { HIVENODE_PASSWORD: 'nope' });
    expect(wrong.code).to.equal(2);
    expect(wrong.stderr).to.contain('HTTP 401');
    const noPassword = await hivenode(['reload', '--dashboard', url, '--user', 'ops'], {});
    expect(noPassword.code).to.equal(2);
    expect(noPassword.stderr).to.contain('HIVENODE_PASSWORD');
    const status = (await (await fetch(`${url}/api/status`)).json()) as { source: { reloads: number } };
    expect(status.source.reloads).to.equal(1);
  });

  it('with --watch, a file the Config page applied and wrote is not reloaded a second time', async () => {
    await node?.kill('SIGTERM');
    const dir = tempDir('hn-reload-watch-apply-');
    const users = join(dir, 'users');
    writeFileSync(users, `${await passwdLine('ops', 'ops-secret', 4)}\n`);
    const dashboard = await freePort();
    const file = join(dir, 'node.yaml');
    const text = (extra: string): string =>
      `dashboard: {Port: ${dashboard}, Users: "${users}"}\nservices:\n  - {service: echo, NAME: echo${extra}}\n`;
    writeFileSync(file, text(''));
    node = await startNodeProcess(file, { ready: /console on port (\d+)/, args: ['--watch'] });
    const url = `http://127.0.0.1:${dashboard}`;
    const csrf = await fetch(`${url}/api/csrf`);
    const cookie = (csrf.headers.get('set-cookie') ?? '').split(';')[0]!;
    const { token } = (await csrf.json()) as { token: string };
    const res = await fetch(`${url}/api/config/apply`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie,
        'x-csrf-token': token,
        authorization: `Basic ${Buffer.from('ops:ops-secret').toString('base64')}`,
      },
      body: JSON.stringify({ text: text(', ReplyCode: 201') }),
    });
    expect(res.status).to.equal(200);
    // the watcher polls every 250 ms and settles for 150 ms: well past both
    await new Promise((r) => setTimeout(r, 1_500));
    expect(node.output().match(/reload applied/g), node.output()).to.have.length(1);
    expect(node.output()).to.match(/reload applied: .*changed echo \(ReplyCode\) \(asked by ops\)/);
  });
});
