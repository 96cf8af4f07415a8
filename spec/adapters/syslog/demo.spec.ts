import { expect } from 'chai';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { plansOf } from '../../../bin/plans.js';
import { loadNodeFile } from '../../../config/node-file.js';
import { HiveNode } from '../../../node/node.js';
import { recorded } from '../../integration/queue/helpers.js';
import { tempDir } from '../../temp.js';
import { freePort } from '../ports.js';
import { logger, needPeers } from './peers.js';
import { until } from '../../support/wait.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

/** The README's promise: `logger -n 127.0.0.1 -P 10514 -d "hello"` to the demo is recorded where it says. */
describe('the demo node file receives syslog and records it where the README says', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  before(function () {
    needPeers(this);
  });
  after(async () => {
    await node?.stop(2000);
  });

  it("logger's default (RFC 5424) and --rfc3164, over UDP and TCP, land in HIVENODE_DEMO_SYSLOG_FILE, none counted invalid", async () => {
    const port = await freePort();
    const file = join(tempDir('hn-demo-syslog-'), 'syslog.jsonl');
    const demo = loadNodeFile(join(ROOT, 'examples', 'demo.yaml'), {
      HIVENODE_DEMO_PORT: '0',
      HIVENODE_DASHBOARD_PORT: '0',
      HIVENODE_SYSLOG_PORT: String(port),
      HIVENODE_DEMO_DB: '',
      HIVENODE_DEMO_SYSLOG_FILE: file,
      HIVENODE_DEMO_QUEUE: '',
      HIVENODE_DEMO_FLOW: '',
    });
    // only the demo's syslog service and what it forwards to, as the node file wires them
    const wiring = {
      ...demo,
      services: demo.services.filter(
        (s) => s.kind === 'syslog' || s.layer.values.some(([k, v]) => k === 'NAME' && v === 'syslog-received'),
      ),
    };
    expect(wiring.services).to.have.length(2);
    node = await HiveNode.start({ services: plansOf(wiring), logStream: new PassThrough(), name: 'demo' });
    logger(port, ['-d', 'hello']);
    logger(port, ['-d', '--rfc3164', '-t', 'bsd', 'hello bsd']);
    logger(port, ['-T', '-t', 'tcp', 'hello tcp']);
    await until(() => recorded(file).length === 3, 10_000);
    const messages = recorded(file).map((r) => r.message);
    expect(messages.map((m) => m.Data.message![0]).sort()).to.deep.equal(['hello', 'hello bsd', 'hello tcp']);
    expect(messages.every((m) => m.Class === 'syslog')).to.equal(true);
    expect(node.services.find((s) => s.kind === 'syslog')!.running.status()).to.deep.include({
      received: 3,
      invalid: 0,
    });
  });
});
