/**
 * examples/flows/syslog-triage.yaml runs as its comments say: started as written (its ports, store and
 * record files moved to free ones), the header's `logger` lines sent to its receiver, the error paged
 * over the HTTP client, the info queued for the digest, and the `$T` lines answering as promised.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { createServer as createTcpServer } from 'node:net';
import { join } from 'node:path';
import type { RunningExample } from '../example-node.js';
import { startExample } from '../example-node.js';
import { until } from '../../support/wait.js';

const EXAMPLE = new URL('../../../examples/flows/syslog-triage.yaml', import.meta.url).pathname;

const freeUdpPort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createSocket('udp4').bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const recorded = (file: string): Array<{ message: { Data: Record<string, string[]> } }> =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { message: { Data: Record<string, string[]> } })
    : [];

const freeTcpPort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createTcpServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe('examples/flows/syslog-triage.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written; an error is paged over the HTTP client, an info queued for the digest; the header lines answer as its comments say', async () => {
    const udp = await freeUdpPort();
    const port = await freeTcpPort();
    let dir = '';
    example = await startExample(EXAMPLE, 'T', 8085, (text, d) => {
      dir = d;
      // the gateway and the HTTP client calling it move to a free port together
      return text
        .replaceAll('8085', String(port))
        .replace('Port: 10516', `Port: ${udp}`)
        .replaceAll('./syslog-triage-store', join(d, 'store'))
        .replaceAll('./syslog-triage-queue', join(d, 'queue'))
        .replaceAll('./triage-', join(d, 'triage-'));
    });
    const { text, run } = example;
    const senders = [...text.matchAll(/^# {3}(logger .*?)\s+# .*$/gm)].map((m) => m[1]!.replace('10516', String(udp)));
    expect(senders).to.have.length(2);
    for (const line of senders) execFileSync('bash', ['-c', line]);
    const paged = join(dir, 'triage-paged.jsonl');
    const digest = join(dir, 'triage-digest.jsonl');
    await until(() => recorded(paged).length === 1 && recorded(digest).length === 1, 10_000);
    expect(recorded(paged)[0]!.message.Data.summary![0]).to.match(/^error on \S+: disk \/dev\/sda failing$/);
    expect(recorded(digest)[0]!.message.Data.line![0]).to.match(/ informational \S*: backup done$/);

    const header = [...text.matchAll(/^# {3}(\$T .*?)\s+#[^']*$/gm)].map((m) => m[1]!);
    expect(header).to.have.length(2);
    const status = run(header[0]!);
    expect(status.Data).to.deep.include({ succeeded: ['2'], failed: ['0'], queuesize: ['0'] });
    const errors = run(header[1]!);
    expect(errors.Data.objects).to.have.length(1);
  });
});
