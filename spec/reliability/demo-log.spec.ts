/**
 * The demo's log under light traffic (README, Quick start): `hivenode demo` runs its walkthrough (a
 * dead entry among it), then keeps running while a client sends a request through the gateway, an
 * entry through the queue and a syslog line every second. No warning may repeat: its dead-letter
 * channel is served, so a dead entry is handed over once, not retried for as long as the node runs.
 * Ten minutes in `make chaos`, ten seconds in `make test`.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { join } from 'node:path';
import { tempDir } from '../temp.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';
import { sleep } from '../support/wait.js';

const TRAFFIC_S = byScale(10, 600);
/** The demo gateway's user (examples/demo.htpasswd). */
const AUTH = `Basic ${Buffer.from('demo:hivenode-demo').toString('base64')}`;

/** A warning line with its figures (times, keys, counts, ports) taken out: lines that repeat read the same. */
const shapeOf = (line: string): string =>
  line
    .replace(/^\S+\s+/, '')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<key>')
    .replace(/trace_id=\S+/g, '')
    .replace(/\d+/g, '<n>');

describe('reliability: the demo under light traffic', () => {
  reliabilityTest(
    'the demo node after its walkthrough: no warning repeats (the dead-letter channel is served)',
    {
      suite: 'overload',
      load: `hivenode demo, then one gateway request, one queue entry and one syslog line a second for ${TRAFFIC_S} s`,
      faults: 'none: a new user watching the log',
    },
    (TRAFFIC_S + 90) * 1000,
    async (figures) => {
      const port = 10000 + Math.floor(Math.random() * 11000);
      const syslogPort = 21000 + Math.floor(Math.random() * 11000);
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        HIVENODE_DEMO_PORT: String(port),
        HIVENODE_SYSLOG_PORT: String(syslogPort),
        HIVENODE_DASHBOARD_PORT: '0',
        HIVENODE_DEMO_DB: join(tempDir('hn-demo-log-db-'), 'demo.sqlite'),
        HIVENODE_DEMO_SYSLOG_FILE: join(tempDir('hn-demo-log-syslog-'), 'syslog.jsonl'),
        TMPDIR: tempDir('hn-demo-log-tmp-'),
      };
      const child = spawn(process.execPath, [...HIVENODE_ARGS, 'demo'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const udp = createSocket('udp4');
      let sent = 0;
      let failed = 0;
      try {
        const end = Date.now() + 60_000;
        while (!out.includes('The demo node keeps running') && Date.now() < end && child.exitCode === null)
          await sleep(100);
        expect(out).to.contain('The demo node keeps running');
        // light traffic, one of each a second; a refused dead-letter hand-over would be retried after 1, 2, 4 … s
        const post = (path: string, body: unknown): Promise<number> =>
          fetch(`http://127.0.0.1:${port}${path}`, {
            method: 'POST',
            headers: { authorization: AUTH, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }).then(
            async (r) => (await r.text(), r.status),
            () => 0,
          );
        for (let s = 0; s < TRAFFIC_S; s++) {
          const codes = await Promise.all([
            post('/echo/hello', { n: [String(s)] }),
            post('/queue/action', { item: [`light-${s}`] }),
          ]);
          udp.send(`<14>1 ${new Date().toISOString()} demo-client light - - - line ${s}`, syslogPort, '127.0.0.1');
          sent += 3;
          failed += codes.filter((c) => c !== 200).length;
          await sleep(1000);
        }
      } finally {
        udp.close();
        child.kill('SIGTERM');
        await exited;
      }
      const warnings = out.split('\n').filter((l) => /\bWARN\b/.test(l));
      const seen = new Map<string, number>();
      for (const w of warnings) seen.set(shapeOf(w), (seen.get(shapeOf(w)) ?? 0) + 1);
      const repeated = [...seen].filter(([, n]) => n > 1);
      figures['seconds of traffic'] = TRAFFIC_S;
      figures['messages sent (gateway, queue, syslog)'] = sent;
      figures['requests not answered 200'] = failed;
      figures['warning lines'] = warnings.length;
      figures['warnings repeated'] = repeated.length;
      expect(failed, 'requests not answered 200').to.equal(0);
      expect(repeated, out.slice(-5000)).to.deep.equal([]);
      expect(out).to.not.contain("dead-letter target 'dead-letters' refused");
    },
  );
});
