import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { COMMANDS } from '../../bin/usage.js';
import { tempDir } from '../temp.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';
import { sleep, until } from '../support/wait.js';

// resolved here, so a child run in another working directory still finds it
const cleanEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: process.env.HOME });
// Below Linux's ephemeral range (32768–60999): a port taken from there could be the local end of any outgoing
// connection on the machine at that moment (CI once met EADDRINUSE for the syslog port so). Two disjoint halves.
const demoEnv = (): NodeJS.ProcessEnv => ({
  HIVENODE_DEMO_PORT: String(10000 + Math.floor(Math.random() * 11000)),
  HIVENODE_SYSLOG_PORT: String(21000 + Math.floor(Math.random() * 11000)),
  HIVENODE_DEMO_DB: join(tempDir('hn-cli-db-'), 'demo.sqlite'),
  HIVENODE_DEMO_SYSLOG_FILE: join(tempDir('hn-cli-syslog-'), 'syslog.jsonl'),
  HIVENODE_DEMO_QUEUE: tempDir('hn-cli-queue-'),
  TMPDIR: tempDir('hn-cli-tmp-'),
});
const run = (args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) =>
  spawnSync(process.execPath, [...HIVENODE_ARGS, ...args], {
    encoding: 'utf8',
    env: { ...cleanEnv(), ...demoEnv(), ...env },
    timeout: 30_000,
    ...(cwd ? { cwd } : {}),
  });

/** Holds a TCP port on every interface (as a service listening on all of them would need it). */
function holdTcp(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, () => resolve(s));
  });
}
const portOf = (s: Server): number => (s.address() as { port: number }).port;

function holdUdp(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    s.once('error', reject);
    s.bind(0, '127.0.0.1', () => resolve(s));
  });
}

/** A start refused for the user's configuration: exit 2, one line on stderr naming it, no stack trace. */
function expectOneLineRefusal(r: ReturnType<typeof run>, ...parts: string[]): void {
  expect(r.status, r.stderr).to.equal(2);
  expect(`${r.stdout}${r.stderr}`).to.not.contain('    at ');
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).to.have.length(1);
  for (const p of parts) expect(lines[0]).to.contain(p);
}

describe('hivenode CLI', function () {
  this.timeout(60_000);

  it('params queue lists every queue parameter with its default', () => {
    const r = run(['params', 'queue']);
    expect(r.status).to.equal(0);
    const expected: Array<[string, string]> = [
      ['TemplateChannel', "'DefaultStorageChannel'"],
      ['DefaultChannel', "'main'"],
      ['DefaultCommand', "'queue'"],
      ['DefaultMode', "'call'"],
      ['DefaultTemplateDefine', "''"],
      ['DefaultDeadLetterSlap', "''"],
      ['PersistPath', "'<OS temp directory>/platform_queue'"],
      ['DefaultRequeueTime', "'30'"],
      ['DefaultRequeueCount', "'3'"],
      ['Template', "''"],
      ['StartPaused', "'false'"],
      ['AutoPause', "'false'"],
    ];
    for (const [name, def] of expected)
      expect(r.stdout).to.match(new RegExp(`\\n  ${name} +${def.replace(/[.*+?^${}()|[\]\\<>/]/g, '\\$&')} `));
  });

  it('a service with an unknown parameter exits 2 naming it', () => {
    const r = run(['echo', '-Nonsense=1']);
    expect(r.status).to.equal(2);
    expect(r.stderr).to.contain("unknown parameter 'Nonsense'");
  });

  it('a node file naming an unbuilt or unknown service exits 2', () => {
    const dir = tempDir('hn-cli-');
    writeFileSync(join(dir, 'n.yaml'), 'services:\n  - service: teleport\n');
    const r = run(['run', join(dir, 'n.yaml')]);
    expect(r.status).to.equal(2);
    expect(r.stderr).to.contain("'service' must be one of");
  });

  it('a flag without a value is refused unless it is a boolean (never the text "true")', () => {
    const dir = tempDir('hn-cli-bare-');
    for (const [args, name] of [
      [['-NAME'], 'NAME'],
      [['-RecordFile'], 'RecordFile'],
      [['-ReplyCode', '-NAME=e1'], 'ReplyCode'],
    ] as const) {
      const r = run(['echo', ...args], {}, dir);
      expectOneLineRefusal(r, `parameter ${name} needs a value`);
    }
    // -RecordFile bare once wrote a file named 'true' in the working directory
    expect(existsSync(join(dir, 'true'))).to.equal(false);
  });

  it('--dashboard-port without a port is refused, not silently no dashboard', () => {
    const dir = tempDir('hn-cli-dash-');
    writeFileSync(join(dir, 'n.yaml'), 'services:\n  - service: echo\n');
    expectOneLineRefusal(run(['echo', '--dashboard-port']), '--dashboard-port needs a value');
    expectOneLineRefusal(run(['echo', '--dashboard-port', '-NAME=e1']), '--dashboard-port needs a value');
    expectOneLineRefusal(run(['run', join(dir, 'n.yaml'), '--dashboard-port']), '--dashboard-port needs a value');
    expectOneLineRefusal(
      run(['run', join(dir, 'n.yaml'), '--dashboard-port=99999']),
      "--dashboard-port must be a port number from 0 to 65535, got '99999'",
    );
  });

  it("a command without its argument says what to give, with an example, not yargs' count", () => {
    expectOneLineRefusal(run(['run']), 'hivenode run needs a node file (YAML or JSON): hivenode run node.yaml');
    expectOneLineRefusal(run(['send']), 'hivenode send needs a channel');
    expectOneLineRefusal(run(['passwd']), 'hivenode passwd needs a user name');
    for (const args of [['run'], ['send'], ['passwd'], ['template']])
      expect(run(args).stderr).to.not.contain('Not enough non-option arguments');
  });

  it('a bare boolean still means true', async () => {
    // Strict bare = true: without it the gateway refuses to start for lack of interceptors
    const child = spawn(process.execPath, [...HIVENODE_ARGS, 'gateway', '-NAME=gw', '-Port=0', '-Strict'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const end = Date.now() + 40_000;
    while (!out.includes('node running') && child.exitCode === null && Date.now() < end) await sleep(50);
    child.kill('SIGTERM');
    await exited;
    expect(out).to.contain('(strict mode');
    expect(out).to.contain('node running');
  });

  it('a gateway port already in use is one line naming the gateway, Port, the value and the way out; exit 2', async () => {
    const held = await holdTcp();
    try {
      const r = run(['gateway', '-NAME=gw', '-Strict=true', `-Port=${portOf(held)}`]);
      expectOneLineRefusal(r, "gateway 'gw'", `Port ${portOf(held)}`, 'already in use', 'choose a free Port');
    } finally {
      held.close();
    }
  });

  it('a syslog receiver port in use, or an IP not of this host, is one line; exit 2', async () => {
    const held = await holdUdp();
    try {
      const port = held.address().port;
      expectOneLineRefusal(
        run(['syslog', '-NAME=logs', '-IP=127.0.0.1', `-Port=${port}`, '-UDP=true']),
        "syslog 'logs'",
        `Port ${port}`,
        'already in use over UDP',
        'choose a free Port',
      );
    } finally {
      held.close();
    }
    // 192.0.2.1 is TEST-NET-1: never an address of this host
    expectOneLineRefusal(
      run(['syslog', '-NAME=logs', '-IP=192.0.2.1', '-Port=0', '-TCP=true']),
      "syslog 'logs'",
      'IP 192.0.2.1 is not an address of this host',
    );
  });

  it('a dashboard or interceptor port in use is one line; exit 2', async () => {
    const held = await holdTcp();
    try {
      const port = portOf(held);
      expectOneLineRefusal(
        run(['echo', '-NAME=e1', '--dashboard-port', String(port)]),
        'dashboard cannot start',
        `Port ${port}`,
        'already in use',
      );
      const dir = tempDir('hn-cli-ic-');
      writeFileSync(
        join(dir, 'same.mjs'),
        'export default (type, value) => ({ data: value, status: "OK", status_code: 200, options: {} });\n',
      );
      expectOneLineRefusal(
        run(['interceptor', join(dir, 'same.mjs'), `-Port=${port}`, '-IP=0.0.0.0']),
        'interceptor cannot start',
        `Port ${port}`,
        'already in use',
      );
    } finally {
      held.close();
    }
  });

  it('an echo RecordFile that cannot be opened is one line; exit 2', () => {
    const missing = join(tempDir('hn-cli-rec-'), 'no-such-dir', 'echo.jsonl');
    expectOneLineRefusal(
      run(['echo', `-RecordFile=${missing}`]),
      `RecordFile '${missing}' cannot be opened for appending: ENOENT`,
    );
  });

  it('an input channel that is not a valid channel name (INPUTCHANNEL, or a NAME with a dot) is one line; exit 2', () => {
    expectOneLineRefusal(
      run(['echo', '-INPUTCHANNEL=a b']),
      "INPUTCHANNEL 'a b' of service echo is not a valid channel: use 1 to 200 of A-Z a-z 0-9 _ -",
    );
    expectOneLineRefusal(
      run(['echo', '-NAME=my.echo']),
      "NAME (the channel when INPUTCHANNEL is not set) 'my.echo' of service echo is not a valid channel",
    );
  });

  it('a queue store, storage or SQLite directory that cannot be made is one line, at once (not a spin under /proc); exit 2', () => {
    const file = join(tempDir('hn-cli-dir-'), 'a-file');
    writeFileSync(file, '');
    expectOneLineRefusal(
      run(['queue', '-PersistPath=/proc/no-such-dir']),
      'PersistPath: cannot create /proc/no-such-dir (ENOENT)',
      'give a directory this user can create and write',
    );
    expectOneLineRefusal(
      run(['queue', `-PersistPath=${file}`]),
      `PersistPath: cannot create ${file}/queue-1 (ENOTDIR)`,
    );
    expectOneLineRefusal(
      run(['storage', '-Directory=/proc/no-such-dir/templates']),
      'Directory: cannot create /proc/no-such-dir (ENOENT)',
    );
    expectOneLineRefusal(
      run(['sql', '-SQL_DATABASE=/proc/no-such-dir/db.sqlite', '-SQL_STATEMENT=SELECT', '-SQL_TABLE=t']),
      'SQL_DATABASE: cannot create /proc/no-such-dir (ENOENT)',
    );
  });

  it("the demo's ports in use name the variables that move them", async () => {
    const held = await holdTcp();
    try {
      const port = String(portOf(held));
      expectOneLineRefusal(
        run(['demo', '--once'], { HIVENODE_DEMO_PORT: port }),
        "gateway 'gateway'",
        `Port ${port}`,
        'HIVENODE_DEMO_PORT=<port> hivenode demo',
      );
      expectOneLineRefusal(
        run(['demo', '--once'], { HIVENODE_DASHBOARD_PORT: port }),
        'dashboard',
        `Port ${port}`,
        'HIVENODE_DASHBOARD_PORT=<port> hivenode demo',
      );
    } finally {
      held.close();
    }
  });

  it('an unknown service or command is one line with the choices, not the whole help', () => {
    for (const args of [['nosuchservice'], ['nosuchservice', '-Port=1']]) {
      const r = run(args);
      expectOneLineRefusal(
        r,
        "'nosuchservice' is neither a service (sql, queue, gateway",
        'nor a command (run, demo',
        "run 'hivenode --help'",
      );
    }
    expectOneLineRefusal(run(['status', '--bogus']), 'Unknown argument: bogus', "run 'hivenode status --help'");
  });

  it('names in COMMANDS are exactly the commands of --help', () => {
    const r = run(['--help']);
    // a command with sub-commands (flow check, flow salvage) is listed once per sub-command
    const listed = [...new Set([...r.stdout.matchAll(/^ {2}hivenode ([a-z]+)/gm)].map((m) => m[1]))];
    expect(listed.sort()).to.deep.equal([...COMMANDS].sort());
  });

  it('SQL_BATCH and UPSERT settings no message can make right are one line at start; exit 2', () => {
    const sql = ['sql', '-SQL_TABLE=t', '-SQL_COLUMNS=id,name', '-SQL_VALUEPARAMS=a,b'];
    expectOneLineRefusal(
      run([...sql, '-SQL_STATEMENT=upsert']),
      'SQL_KEYCOLUMNS: UPSERT needs the key columns that identify a row',
    );
    expectOneLineRefusal(
      run([...sql, '-SQL_STATEMENT=upsert', '-SQL_KEYCOLUMNS=uid']),
      "SQL_KEYCOLUMNS: 'uid' is not among the columns of SQL_COLUMNS (id, name)",
    );
    expectOneLineRefusal(
      run([...sql, '-SQL_STATEMENT=select', '-SQL_BATCH=true']),
      'SQL_STATEMENT: SQL_BATCH=true writes rows with INSERT or UPSERT, not SELECT',
    );
    expectOneLineRefusal(
      run([...sql, '-SQL_STATEMENT=select', '-SQL_BATCH=true', '-SQL_POLLMODE=true']),
      'SQL_BATCH writes rows with INSERT or UPSERT; it cannot be combined with SQL_POLLMODE',
    );
  });

  it("params sql shows SQL_PORT's default per engine", () => {
    const r = run(['params', 'sql']);
    expect(r.status).to.equal(0);
    expect(r.stdout).to.match(
      /\n {2}SQL_PORT +per SQL_ENGINE +int +Database port\. \(default per SQL_ENGINE: postgres '5432', mysql '3306', mariadb '3306', mssql '1433', oracle '1521'; not used by sqlite\)/,
    );
  });

  it('--version shows each service release tag', () => {
    const r = run(['--version']);
    expect(r.stdout).to.match(/queue +v0\.1\.1/);
    expect(r.stdout).to.match(/sql +v0\.1\.0/);
  });

  it('the demo keeps its state in a directory of the user, between runs; --fresh starts clean', () => {
    const tmp = tempDir('hn-cli-fresh-');
    // the demo's own places, not the test's: only the ports come from the environment
    const env = {
      HIVENODE_DEMO_PORT: String(10000 + Math.floor(Math.random() * 11000)),
      HIVENODE_SYSLOG_PORT: String(21000 + Math.floor(Math.random() * 11000)),
      TMPDIR: tmp,
      HIVENODE_DEMO_DB: undefined,
      HIVENODE_DEMO_SYSLOG_FILE: undefined,
      HIVENODE_DEMO_QUEUE: undefined,
    };
    const first = run(['demo', '--once'], env);
    expect(first.status, first.stderr).to.equal(0);
    const dir = /hivenode demo: state in (\S+) \(kept between runs; hivenode demo --fresh starts clean\)/.exec(
      first.stdout,
    )?.[1];
    expect(dir, first.stdout).to.match(new RegExp(`^${tmp}/hivenode-demo-[\\w.-]+$`));
    expect(existsSync(join(dir!, 'demo.sqlite')) && existsSync(join(dir!, 'queue'))).to.equal(true);
    writeFileSync(join(dir!, 'left-over'), 'x');
    const kept = run(['demo', '--once'], env);
    expect(kept.status, kept.stderr).to.equal(0);
    expect(existsSync(join(dir!, 'left-over'))).to.equal(true);
    const fresh = run(['demo', '--once', '--fresh'], env);
    expect(fresh.status, fresh.stderr).to.equal(0);
    expect(fresh.stdout).to.contain(`hivenode demo: state in ${dir} (started fresh)`);
    expect(existsSync(join(dir!, 'left-over'))).to.equal(false);
  });

  it('demo --once shows the calls and exits 0', () => {
    const r = run(['demo', '--once']);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('node running');
    expect(r.stdout).to.contain('"Code":200');
    expect(r.stdout).to.contain('"Code":404');
    expect(r.stdout).to.contain('upstream status 200');
    expect(r.stdout).to.match(/→ HTTP 200 \{"Code":200,"Message":"Success","Data":\{"name":\["world"\]\}/);
    // the SQL service on the seeded SQLite file, through the gateway's routes
    expect(r.stdout).to.match(
      /\/sql\/select[^\n]*\n {2}→ HTTP 200 \{"Code":200,"Message":"Success","Data":\{"id":\[[^\n]*"name":\["Ada","Alan"/,
    );
    expect(r.stdout).to.match(/\/sql\/raw[^\n]*\n {2}→ HTTP 200 [^\n]*"city":\["Arlington","London","Manchester"/);
    // the queue's operations: a duplicate key, a dead entry by reason replayed, a schedule, per-state counts
    expect(r.stdout).to.match(/"_idempotency-key":\["order-[^\n]*\n {2}→ HTTP 200 [^\n]*"duplicate":\["true"\]/);
    expect(r.stdout).to.match(
      /"_groupby":\["deadletter_reason"\][^\n]*\n {2}→ HTTP 200 [^\n]*"no success after 1 attempt\(s\)":\["1"\]/,
    );
    expect(r.stdout).to.match(/"_command":\["replay"\][^\n]*\n {2}→ HTTP 200 [^\n]*"replayed":\["1"\]/);
    expect(r.stdout).to.match(/"_command":\["schedule"\][^\n]*\n {2}→ HTTP 200 [^\n]*"replaced":\["false"\]/);
    expect(r.stdout).to.match(
      /"_command":\["status"\][^\n]*\n {2}→ HTTP 200 [^\n]*"waiting":\["\d+"\],"scheduled":\["\d+"\],"retrying":\["\d+"\],"dead":\["\d+"\],"done":\["\d+"\]/,
    );
    // a flow run fails at its refusing carrier, is listed, replayed with its Input edited, and succeeds from the failed step
    expect(r.stdout).to.match(/\/flow\/run -d '\{"order":\["o-[^\n]*"carrier":\["carrier-down"\]\}'\n {2}→ HTTP 422 /);
    expect(r.stdout).to.match(
      /\/flow\/run -d '\{"_command":\["replay"\][^\n]*"carrier":\["echo"\]\}'\n {2}→ HTTP 200 [^\n]*"step":\["ship"\],"replayed":\["1"\]/,
    );
    expect(r.stdout).to.match(
      /\/flow\/run -d '\{"_command":\["fetch"\][^\n]*\n {2}→ HTTP 200 [^\n]*"state":\["succeeded"\][^\n]*"attempts":\[\{"step":"check"[^\n]*"code":422[^\n]*"code":200/,
    );
    // authorization per route: the viewer reads through sql/select, and its insert is refused 403
    expect(r.stdout).to.match(/curl -u viewer:viewer-demo \S+\/sql\/select[^\n]*\n {2}→ HTTP 200 /);
    expect(r.stdout).to.match(
      /curl -u viewer:viewer-demo \S+\/sql\/insert[^\n]*\n {2}→ HTTP 403 \{"Code":403,"Message":"route 'sql\/insert' is not allowed for user 'viewer'"/,
    );
    // where a received syslog message is visible, with commands that run as written
    expect(r.stdout).to.match(
      /records each message it receives in \S*hn-cli-syslog-\S*syslog\.jsonl:\n {2}logger -n 127\.0\.0\.1 -P \d+ -d "hello"\n {2}tail -n 1 \S*syslog\.jsonl/,
    );
  });

  /** `hivenode echo` as a process, once it says it runs: its output so far, and its exit code when it ends. */
  const runningEcho = async (): Promise<{
    child: ReturnType<typeof spawn>;
    out: () => string;
    exited: Promise<number | null>;
    untilOut: (text: string) => Promise<void>;
  }> => {
    const child = spawn(process.execPath, [...HIVENODE_ARGS, 'echo', '-NAME=e1'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const end = Date.now() + 40_000;
    const untilOut = (text: string): Promise<void> =>
      until(() => out.includes(text), {
        ms: Math.max(0, end - Date.now()),
        every: 50,
        what: () => `'${text}' in the output: ${out}`,
      });
    await untilOut('node running');
    return { child, out: () => out, exited, untilOut };
  };

  it('drains and exits 0 on SIGTERM', async () => {
    const { child, out, exited } = await runningEcho();
    const started = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    expect(code, out()).to.equal(0);
    expect(out()).to.contain('SIGTERM received: draining');
    expect(Date.now() - started).to.be.below(10_000);
  });

  it('a SIGHUP does not end a service started from the command line: it says there is no node file to re-read and keeps serving', async () => {
    const { child, out, exited, untilOut } = await runningEcho();
    child.kill('SIGHUP');
    await untilOut('has no node file to re-read');
    await sleep(300);
    expect(child.exitCode, out()).to.equal(null);
    child.kill('SIGTERM');
    expect(await exited, out()).to.equal(0);
  });
});
