import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../temp.js';

const BIN = new URL('../../bin/hivenode.ts', import.meta.url).pathname;
const cleanEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: process.env.HOME });
const run = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', BIN, ...args], { encoding: 'utf8', env: { ...cleanEnv(), HIVENODE_DEMO_PORT: String(20000 + Math.floor(Math.random() * 20000)), HIVENODE_SYSLOG_PORT: String(40000 + Math.floor(Math.random() * 20000)), HIVENODE_DEMO_DB: join(tempDir('hn-cli-db-'), 'demo.sqlite'), HIVENODE_DEMO_SYSLOG_FILE: join(tempDir('hn-cli-syslog-'), 'syslog.jsonl'), TMPDIR: tempDir('hn-cli-tmp-') }, timeout: 30_000 });

describe('hivenode CLI', function () {
  this.timeout(60_000);

  it('params queue lists every queue parameter of spec §2.3 with its spec default', () => {
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
    for (const [name, def] of expected) expect(r.stdout).to.match(new RegExp(`\\n  ${name} +${def.replace(/[.*+?^${}()|[\]\\<>/]/g, '\\$&')} `));
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

  it('--version shows each service release tag', () => {
    const r = run(['--version']);
    expect(r.stdout).to.match(/queue +v0\.1\.1/);
    expect(r.stdout).to.match(/sql +v0\.1\.0/);
  });

  it('demo --once shows the calls and exits 0', () => {
    const r = run(['demo', '--once']);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('node running');
    expect(r.stdout).to.contain('"Code":200');
    expect(r.stdout).to.contain('"Code":404');
    expect(r.stdout).to.contain('upstream status 200');
    expect(r.stdout).to.match(/→ HTTP 200 \{"Code":200,"Message":"Success","Data":\{"name":\["world"\]\}/);
    // the SQL service on the seeded SQLite file, through the gateway's routes (spec §4.1)
    expect(r.stdout).to.match(/\/sql\/select[^\n]*\n {2}→ HTTP 200 \{"Code":200,"Message":"Success","Data":\{"id":\[[^\n]*"name":\["Ada","Alan"/);
    expect(r.stdout).to.match(/\/sql\/raw[^\n]*\n {2}→ HTTP 200 [^\n]*"city":\["Arlington","London","Manchester"/);
    // where a received syslog message is visible, with commands that run as written
    expect(r.stdout).to.match(/records each message it receives in \S*hn-cli-syslog-\S*syslog\.jsonl:\n {2}logger -n 127\.0\.0\.1 -P \d+ -d "hello"\n {2}tail -n 1 \S*syslog\.jsonl/);
  });

  it('drains and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', BIN, 'echo', '-NAME=e1'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const end = Date.now() + 40_000;
    while (!out.includes('node running') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(out).to.contain('node running');
    const started = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    expect(code, out).to.equal(0);
    expect(out).to.contain('SIGTERM received: draining');
    expect(Date.now() - started).to.be.below(10_000);
  });
});
