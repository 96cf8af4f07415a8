/**
 * Durability of the queue on JetStream against a real nats-server (the one scripts/servers.sh
 * installs): `fsync` on a server that cannot fsync before acknowledging (before 2.10) stops the start
 * with exit 2 and one line naming the cause and the fix; the default is `journal` there, and the start
 * log says which level is in force and why.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../temp.js';
import { runNodeToExit, startNodeProcess, writeNodeFile } from '../../reliability/node-process.js';
import { suiteNatsServer } from './server.js';
import { sleep } from '../../support/wait.js';

describe('queue on JetStream: Durability checked against the server', function () {
  this.timeout(60_000);
  const server = suiteNatsServer();

  const nodeFile = (durability: string): string => {
    const dir = tempDir('hn-durability-');
    const token = join(dir, 'token');
    writeFileSync(token, `${server().token}\n`);
    return writeNodeFile(
      dir,
      'node',
      [
        `{service: queue, NAME: dq, Store: jetstream, ${durability ? `Durability: ${durability}, ` : ''}PersistPath: "${join(dir, 'q')}"}`,
        '{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: dq}',
      ],
      `{SERVERHOST: "${server().url}", SERVERAUTH: "file://${token}"}`,
    );
  };

  it('Durability fsync on nats-server 2.9 is refused at start: exit 2, one line naming the cause and the fix', async function () {
    const version =
      /v?(\d+\.\d+\.\d+)/.exec(
        (await import('node:child_process')).spawnSync('nats-server', ['--version']).stdout.toString(),
      )?.[1] ?? '';
    if (!/^2\.[0-9]\./.test(version)) this.skip(); // 2.10 and later can fsync before acknowledging
    const r = await runNodeToExit(nodeFile('fsync'));
    expect(r.code).to.equal(2);
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => /Durability/.test(l));
    expect(lines, r.stderr).to.have.length(1);
    expect(lines[0]).to.match(
      new RegExp(
        `Durability fsync: nats-server ${version.replace(/\./g, '\\.')} fsyncs its store only every 60 s.*2\\.10.*give Durability journal`,
      ),
    );
    expect(r.stderr).to.not.match(/\n\s+at /);
  });

  it('the default is journal on nats-server 2.9: the start log names the level and why', async () => {
    const node = await startNodeProcess(nodeFile(''));
    try {
      const until = Date.now() + 20_000;
      while (!/Durability journal/.test(node.output()) && Date.now() < until) await sleep(50);
      expect(node.output()).to.match(
        /queue 'dq' Durability journal: the default; nats-server [\d.]+ fsyncs only every 60 s and cannot fsync before acknowledging; records stay in the journal 240 s/,
      );
    } finally {
      await node.kill('SIGTERM');
    }
  });
});
