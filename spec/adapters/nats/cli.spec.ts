import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { NatsServer } from './server.js';
import { suiteNatsServer } from './server.js';
import { tempDir } from '../../temp.js';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';

describe('hivenode send and hivenode template on a NATS hive', function () {
  this.timeout(60_000);
  const nats = suiteNatsServer();
  let server: NatsServer;
  let node: HiveNode | undefined;
  before(() => (server = nats()));
  after(async () => {
    await node?.stop(2000);
  });
  // asynchronous: the echo service answering the CLI lives in this very process
  const cli = (args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [
        ...HIVENODE_ARGS,
        ...args,
        '--server',
        server.url,
        '--auth',
        server.token,
      ]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('exit', (status) => resolve({ status, stdout, stderr }));
    });

  it('send calls a channel and prints the Result; exit 1 when the Code is not 2xx', async () => {
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'echo', SERVERHOST: server.url, SERVERAUTH: server.token },
    ]));
    const ok = await cli(['send', 'echo', '--data', '{"a":["1"]}']);
    expect(ok.status, ok.stderr).to.equal(0);
    expect(JSON.parse(ok.stdout)).to.deep.include({ Code: 200, Data: { a: ['1'] } });
    const none = await cli(['send', 'nobody']);
    expect(none.status).to.equal(1);
    expect(JSON.parse(none.stdout).Code).to.equal(404);
    const bad = await cli(['send', 'echo', '--data', '{"a":1}']);
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.contain('--data.a must be a list of strings');
  });

  it('template put, get, list and delete', async () => {
    const dir = tempDir('hn-tpl-');
    writeFileSync(join(dir, 't.tmpl'), '[[ define "default" ]]x[[ end ]]');
    expect((await cli(['template', 'put', 'fan', '--file', join(dir, 't.tmpl')])).status).to.equal(0);
    expect((await cli(['template', 'get', 'fan'])).stdout).to.equal('[[ define "default" ]]x[[ end ]]');
    expect((await cli(['template', 'list'])).stdout.trim().split('\n')).to.include('fan');
    expect((await cli(['template', 'delete', 'fan'])).status).to.equal(0);
    expect((await cli(['template', 'get', 'fan'])).status).to.equal(1);
  });
});
