import { expect } from 'chai';
import { execSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeMessage, mapOf } from '../../protocol/message.js';
import type { Result } from '../../protocol/message.js';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from './helpers.js';
import { tempDir } from '../temp.js';
import { sleep } from '../support/wait.js';

const EXAMPLES = new URL('../../examples/templates/', import.meta.url).pathname;

describe('exec service', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir('hn-exec-');
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });
  const exec = async (
    template: string,
    params: Record<string, string | number | boolean> = {},
  ): Promise<(data?: Record<string, string[]>) => Promise<Result>> => {
    ({ node } = await startTestNode([{ service: 'exec', NAME: 'cmd', Template: template, ...params }]));
    return (data = {}) => node!.hive.call('cmd', makeMessage({ Data: mapOf(data) }), 20_000);
  };

  it('runs the three shape examples of the exec section of README: echo, cp, mv', async () => {
    writeFileSync(join(dir, 'a.txt'), 'content a');
    const echo = await exec(`file://${EXAMPLES}exec-echo.tmpl`);
    const r = await echo({ info: ['first info', 'ignored'], operation: ['op1', 'op 2'] });
    expect(r.Code).to.equal(200);
    expect(r.Data.stdout).to.deep.equal(['hello, world first info op1 op 2']);
    expect(r.Data.exitcode).to.deep.equal(['0']);
    await node!.stop(1000);
    const cp = await exec(`file://${EXAMPLES}exec-cp.tmpl`);
    expect((await cp({ file: [join(dir, 'a.txt'), join(dir, 'b.txt')] })).Code).to.equal(200);
    expect(existsSync(join(dir, 'b.txt'))).to.equal(true);
    await node!.stop(1000);
    const mv = await exec(`file://${EXAMPLES}exec-mv.tmpl`);
    execSync(`mkdir -p ${join(dir, 'sub')}`);
    expect((await mv({ file: [join(dir, 'a.txt'), join(dir, 'b.txt'), join(dir, 'sub')] })).Code).to.equal(200);
    expect(existsSync(join(dir, 'sub', 'a.txt'))).to.equal(true);
  });

  it('a non-zero exit is 502 with stdout, stderr and exitcode; no setCmd is 400; a missing command is 400', async () => {
    const failing = await exec('{{ setCmd "/bin/sh" }}{{ addArg "-c" }}{{ addArg "echo out; echo err >&2; exit 3" }}');
    const r = await failing();
    expect(r.Code).to.equal(502);
    expect(r.Data).to.deep.include({ stdout: ['out'], stderr: ['err'], exitcode: ['3'] });
    await node!.stop(1000);
    expect((await (await exec('{{ addArg "x" }}'))()).Code).to.equal(400);
    await node!.stop(1000);
    const missing = await (await exec('{{ setCmd "/no/such/command" }}'))();
    expect(missing).to.deep.include({ Code: 400, Message: "command '/no/such/command' was not found" });
  });

  it('wildcards stay literal without a shell and expand with /bin/sh -c', async () => {
    writeFileSync(join(dir, 'one.txt'), '');
    writeFileSync(join(dir, 'two.txt'), '');
    const literal = await exec('{{ setCmd "echo" }}{{ addArg (index .Data.pattern 0) }}');
    expect((await literal({ pattern: [join(dir, '*.txt')] })).Data.stdout).to.deep.equal([join(dir, '*.txt')]);
    await node!.stop(1000);
    const shell = await exec(
      '{{ setCmd "/bin/sh" }}{{ addArg "-c" }}{{ addArg (printf "echo %s" (index .Data.pattern 0)) }}',
    );
    expect((await shell({ pattern: [join(dir, '*.txt')] })).Data.stdout).to.deep.equal([
      `${join(dir, 'one.txt')} ${join(dir, 'two.txt')}`,
    ]);
  });

  it('hostile arguments reach the command verbatim; NUL is refused', async () => {
    const printf = await exec('{{ setCmd "printf" }}{{ addArg "%s|" }}{{ addArg .Data.arg }}');
    const payloads = ['$(id)', ';id', '--upload-pack=touch /tmp/x', 'a\nb', '`id`', '&& id', '| id', "'; id; '"];
    const r = await printf({ arg: payloads });
    expect(r.Code).to.equal(200);
    expect(r.Data.stdout!.join('\n')).to.equal(payloads.map((p) => `${p}|`).join(''));
    const nul = await printf({ arg: ['a\0b'] });
    expect(nul.Code).to.equal(400);
    expect(nul.Message).to.contain('NUL');
  });

  it('a timeout kills the whole process group: sh -c "sleep 1000 & sleep 1000" leaves nothing behind', async () => {
    const marker = `hivenode-exec-test-${process.pid}-${Date.now()}`;
    const sleeper = await exec(
      `{{ setCmd "/bin/sh" }}{{ addArg "-c" }}{{ addArg "sleep 1000 & sleep 1000; echo ${marker}" }}`,
      { Timeout: '2s', KillGrace: '500ms' },
    );
    // while it runs, its processes are visible (so the check below can see them if they survived)
    setTimeout(() => expect(execSync('ps -eo args').toString()).to.contain(marker), 500);
    const started = Date.now();
    const r = await sleeper();
    expect(r.Code).to.equal(504);
    expect(Date.now() - started, 'cut at the 2 s Timeout, not after the 1000 s sleep').to.be.within(2000, 15_000);
    await sleep(300);
    const sleeps = execSync('ps -eo pid,pgid,args')
      .toString()
      .split('\n')
      .filter((l) => l.includes(marker) && !l.includes('ps -eo'));
    expect(sleeps).to.deep.equal([]);
  });

  it('100 MB of output is cut at the cap with bounded memory and the truncated flag', async () => {
    const flood = await exec(
      '{{ setCmd "/bin/sh" }}{{ addArg "-c" }}{{ addArg "head -c 104857600 /dev/zero | tr \\"\\\\0\\" a; echo; echo done >&2" }}',
      { MaxOutputBytes: 65536 },
    );
    const before = process.memoryUsage().rss;
    const r = await flood();
    expect(r.Code).to.equal(200);
    expect(r.Data.truncated).to.deep.equal(['true']);
    expect(r.Data.stdout!.join('').length).to.equal(65536);
    expect(r.Data.stderr).to.deep.equal(['done']);
    expect(process.memoryUsage().rss - before).to.be.below(64 * 1024 * 1024);
  });

  it('environment from the allow-list only; stdin from a Data field; working directory; allowed commands', async () => {
    process.env.HIVENODE_TEST_SECRET = 'do-not-leak';
    const envCmd = await exec('{{ setCmd "/usr/bin/env" }}', {
      EnvAllowList: 'PATH',
      StdinField: 'input',
      WorkDir: dir,
    });
    const r = await envCmd();
    expect(r.Data.stdout!.some((l) => l.startsWith('PATH='))).to.equal(true);
    expect(r.Data.stdout!.join('\n')).to.not.contain('do-not-leak');
    await node!.stop(1000);
    const cat = await exec('{{ setCmd "cat" }}', { StdinField: 'input' });
    expect((await cat({ input: ['line 1', 'line 2'] })).Data.stdout).to.deep.equal(['line 1', 'line 2']);
    await node!.stop(1000);
    const pwd = await exec('{{ setCmd "pwd" }}', { WorkDir: dir });
    expect((await pwd()).Data.stdout).to.deep.equal([dir]);
    await node!.stop(1000);
    const only = await exec('{{ setCmd (index .Data.cmd 0) }}', { AllowedCommands: '/bin/echo' });
    expect((await only({ cmd: ['/bin/echo'] })).Code).to.equal(200);
    expect((await only({ cmd: ['/bin/cat'] })).Code).to.equal(403);
  });

  it('a small request whose template builds more than MaxRenderChars or MaxRenderItems is answered 413; the node keeps serving', async () => {
    // ~15 KB of request: 3000 items, each padded to 10000 characters by the template (30 million in all)
    const items = Array.from({ length: 3000 }, (_, i) => String(i));
    const padded = await exec(
      '{{ setCmd "/bin/echo" }}{{ range .Data.items }}{{ addArg (printf "%-9999s" .) }}{{ end }}',
    );
    const r = await padded({ items });
    expect(r.Code).to.equal(413);
    expect(r.Message).to.match(
      /^template: cmd:1:\d+: executing "cmd" at <.+>: the render builds more than 16777216 characters \(the limit MaxRenderChars\)$/,
    );
    const next = await padded({ items: ['a', 'b'] });
    expect(next.Code).to.equal(200);
    expect(next.Data.stdout).to.deep.equal([`${'a'.padEnd(9999)} ${'b'.padEnd(9999)}`]);
    await node!.stop(1000);
    const many = await exec('{{ setCmd "/bin/echo" }}{{ range .Data.items }}{{ addArg . }}{{ end }}', {
      MaxRenderItems: 100,
    });
    const r2 = await many({ items });
    expect(r2.Code).to.equal(413);
    expect(r2.Message).to.match(
      /the render adds more than 100 arguments, values and entries \(the limit MaxRenderItems\)$/,
    );
    expect((await many({ items: ['x'] })).Data.stdout).to.deep.equal(['x']);
  });

  it('a file:// Template that is /dev/zero or a directory stops the start at once with one line naming it', async () => {
    const started = Date.now();
    for (const [path, what] of [
      ['/dev/zero', 'a character device'],
      [dir, 'a directory'],
    ]) {
      const err = await startTestNode([{ service: 'exec', NAME: 'cmd', Template: `file://${path}` }]).catch(
        (e: unknown) => e as Error,
      );
      expect((err as Error).message).to.equal(`Template: template file '${path}' is ${what}, not a regular file`);
    }
    expect(Date.now() - started).to.be.below(10_000);
  });

  it('an inline Template that is the path of an existing file (no file://) starts with a warning naming the fix', async () => {
    const path = `${EXAMPLES}exec-echo.tmpl`;
    const started = await startTestNode([{ service: 'exec', NAME: 'cmd', Template: path }]);
    node = started.node;
    expect(started.logs()).to.contain(
      `Template '${path}' is read as the template text itself, yet it names a file that exists: write Template: file://${path} to use the file`,
    );
    await node.stop(1000);
    const inline = await startTestNode([{ service: 'exec', NAME: 'cmd', Template: '{{ setCmd "true" }}' }]);
    node = inline.node;
    expect(inline.logs()).to.not.contain('names a file that exists');
  });

  it('a concurrency limit with a bounded wait answers 429 when full', async () => {
    const slow = await exec('{{ setCmd "sleep" }}{{ addArg "1" }}', {
      MaxConcurrent: 1,
      MaxWaiting: 1,
      WaitTimeout: '300ms',
    });
    const results = await Promise.all([slow(), slow(), slow()]);
    const codes = results.map((r) => r.Code).sort();
    expect(codes).to.deep.equal([200, 429, 429]);
  });

  it('every exec template function works through the service', async () => {
    const t = [
      '{{ setCmd "echo" }}',
      '{{ addArg (plus 2 3 | string) }}{{ addArg (minus 9 4 | string) }}',
      '{{ addArg (replace "a-b-c" "-" "+") }}{{ addArg (tolower "ABC") }}{{ addArg (toupper "abc") }}',
      '{{ addArg (after "key=value" "=") }}{{ addArg (split "x,y" ",") }}',
      '{{ addArg (marshal .Data.v) }}{{ addArg (noescape "<&>") }}',
      '{{ set "k" "stored" }}{{ addArg (get "k") }}{{ addArg (niltoblank nil) }}',
      '{{ addArg (replaceLine "a\\nb x\\nc" "x" "B") }}',
      '{{ addArg (env "PATH" | printf "%.1s") }}',
    ].join('');
    const all = await exec(t);
    const r = await all({ v: ['1'] });
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data.stdout!.join('\n')).to.equal('5 5 a+b+c abc ABC value x y ["1"] <&> stored  a\nB\nc /');
  });
});
