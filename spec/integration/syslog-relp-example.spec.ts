/**
 * examples/syslog/relp.yaml runs as its comments say: started as written (its ports, record file and
 * store moved for a run outside the repository root), its curl line is answered 200 once the message
 * went over RELP to its receiver and into its durable queue, which delivers it to the recorder.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { freePort } from '../adapters/ports.js';
import type { RunningExample } from './example-node.js';
import { startExample } from './example-node.js';
import { recorded } from './queue/helpers.js';
import { until } from '../support/wait.js';

const EXAMPLE = new URL('../../examples/syslog/relp.yaml', import.meta.url).pathname;

describe('examples/syslog/relp.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written; its curl line goes over RELP into the queue and is recorded', async () => {
    let record = '';
    const relpPort = await freePort();
    example = await startExample(EXAMPLE, 'R', 8085, (t, dir) => {
      record = join(dir, 'syslog-relp.jsonl');
      return t
        .replace('Port: 8085', 'Port: 0')
        .replaceAll('2514', String(relpPort))
        .replaceAll('./syslog-relp.jsonl', record)
        .replaceAll('./relp-store', join(dir, 'relp-store'));
    });
    const lines = [...example.text.matchAll(/^# {3}(\$R\/.*?)\s+# .*$/gm)].map((m) => m[1]!);
    expect(lines).to.have.length(1);
    expect(example.run(lines[0]!).Code).to.equal(200);
    await until(() => recorded(record).length === 1, 15_000);
    expect(recorded(record)[0]!.message.Data).to.deep.include({
      message: ['kept until acknowledged'],
      appname: ['relp-example'],
      format: ['RFC5424'],
      severity: ['warning'],
    });
  });
});
