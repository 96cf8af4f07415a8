/**
 * examples/syslog/tls.yaml runs as its comments say: started as written (its ports, record file and
 * certificate paths moved for a run outside the repository root), its curl line sends a message over
 * TLS with a client certificate to its own TLS receiver, which records it.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { freePort } from '../adapters/ports.js';
import { certsDir } from '../certs.js';
import type { RunningExample } from './example-node.js';
import { startExample } from './example-node.js';
import { recorded } from './queue/helpers.js';
import { until } from '../support/wait.js';

const EXAMPLE = new URL('../../examples/syslog/tls.yaml', import.meta.url).pathname;

describe('examples/syslog/tls.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written; its curl line goes over TLS to its receiver and is recorded', async () => {
    let record = '';
    const tlsPort = await freePort();
    example = await startExample(EXAMPLE, 'L', 8084, (t, dir) => {
      record = join(dir, 'syslog-tls.jsonl');
      return t
        .replace('Port: 8084', 'Port: 0')
        .replaceAll('6514', String(tlsPort))
        .replaceAll('./syslog-tls.jsonl', record)
        .replaceAll('certs/', `${certsDir()}/`);
    });
    const lines = [...example.text.matchAll(/^# {3}(\$L\/.*?)\s+# .*$/gm)].map((m) => m[1]!);
    expect(lines).to.have.length(1);
    expect(example.run(lines[0]!).Code).to.equal(200);
    await until(() => recorded(record).length === 1, 15_000);
    expect(recorded(record)[0]!.message.Data).to.deep.include({
      message: ['over TLS with a client certificate'],
      appname: ['tls-example'],
      format: ['RFC5424'],
    });
  });
});
