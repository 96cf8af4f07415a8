/**
 * The demo's log under light traffic: `hivenode demo` runs its walkthrough (a dead entry among it),
 * then keeps running; in the seconds after, no warning repeats. Its dead-letter channel is served,
 * so a dead entry is handed over once, not retried for as long as the node runs.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from '../temp.js';

const BIN = new URL('../../bin/hivenode.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');

/** A warning line with its figures (times, keys, counts, ports) taken out: lines that repeat read the same. */
const shapeOf = (line: string): string =>
  line
    .replace(/^\S+\s+/, '')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<key>')
    .replace(/trace_id=\S+/g, '')
    .replace(/\d+/g, '<n>');

describe('demo log under light traffic', function () {
  this.timeout(90_000);

  it('after the walkthrough, no warning repeats (the dead-letter channel is served)', async () => {
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HIVENODE_DEMO_PORT: String(10000 + Math.floor(Math.random() * 11000)),
      HIVENODE_SYSLOG_PORT: String(21000 + Math.floor(Math.random() * 11000)),
      HIVENODE_DASHBOARD_PORT: '0',
      HIVENODE_DEMO_DB: join(tempDir('hn-demo-log-db-'), 'demo.sqlite'),
      HIVENODE_DEMO_SYSLOG_FILE: join(tempDir('hn-demo-log-syslog-'), 'syslog.jsonl'),
      TMPDIR: tempDir('hn-demo-log-tmp-'),
    };
    const child = spawn(process.execPath, ['--import', TSX, BIN, 'demo'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const end = Date.now() + 60_000;
      while (!out.includes('The demo node keeps running') && Date.now() < end && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      expect(out).to.contain('The demo node keeps running');
      // a refused hand-over was retried after 1, 2 and 4 s: 8 s shows a loop
      await new Promise((r) => setTimeout(r, 8_000));
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const warnings = out.split('\n').filter((l) => /\bWARN\b/.test(l));
    const seen = new Map<string, number>();
    for (const w of warnings) seen.set(shapeOf(w), (seen.get(shapeOf(w)) ?? 0) + 1);
    const repeated = [...seen].filter(([, n]) => n > 1);
    expect(repeated, out).to.deep.equal([]);
    expect(out).to.not.contain("dead-letter target 'dead-letters' refused");
  });
});
