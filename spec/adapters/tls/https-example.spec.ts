/**
 * examples/gateway/https.yaml runs as its comments say: the node file is started as written (its port
 * moved to a free one, its certs/ paths to the test certificates, which scripts/certs.sh made as
 * `make certs` does), and every curl line of its header is run with bash from a directory whose certs/
 * holds those certificates, as a reader would paste them: 200 where it says so, refused where it
 * says so.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { certsDir } from '../../certs.js';
import { startExample } from '../../integration/example-node.js';
import type { RunningExample } from '../../integration/example-node.js';
import { tempDir } from '../../temp.js';

const EXAMPLE = new URL('../../../examples/gateway/https.yaml', import.meta.url).pathname;

/** Runs one header line with bash in `cwd`, `H` set as the header sets it; curl's exit code and output. */
function paste(cwd: string, h: string, line: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', `H="${h}"; ${line}`], { cwd, encoding: 'utf8', timeout: 15_000 }, (err, stdout) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout });
    });
  });
}

describe('examples/gateway/https.yaml (HTTPS and mutual TLS)', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    const certs = certsDir();
    example = await startExample(EXAMPLE, 'H', 8443, (text) =>
      text
        .replace('Port: 8443', 'Port: 0')
        .replaceAll(/(file:\/\/)?certs\//g, (_m, scheme: string | undefined) => `${scheme ?? ''}${certs}/`),
    );
    const { text, node } = example;
    expect(node.output()).to.match(/serves HTTPS on port/);
    const cwd = tempDir('hn-example-cwd-');
    symlinkSync(certs, join(cwd, 'certs'));
    const h = /^# {3}H="(.*)"$/m.exec(text)![1]!.replace('8443', String(node.port));
    const lines = [...text.matchAll(/^# {3}(\$H .*?)\s+#\s(.*)$/gm)].map((m) => ({ line: m[1]!, says: m[2]! }));
    expect(lines.length).to.equal(5);
    for (const { line, says } of lines) {
      const r = await paste(cwd, h, line);
      if (says.startsWith('200')) {
        expect(r.code, `${line}: curl exit`).to.equal(0);
        // echo's Result and Platform-Break's would-be message both carry the posted Data
        const sent = JSON.parse(/-d '(.*?)'/.exec(line)![1]!) as unknown;
        expect((JSON.parse(r.stdout) as { Data: unknown }).Data, line).to.deep.equal(sent);
      } else {
        expect(says, line).to.match(/^refused/);
        expect(r.code, `${line}: curl exit`).to.not.equal(0);
        expect(r.stdout, `${line}: nothing answered`).to.equal('');
      }
    }
    const health = /^# {3}(curl .*healthcheck)$/m.exec(text)![1]!.replace('8443', String(node.port));
    const answer = await paste(cwd, h, health);
    expect(JSON.parse(answer.stdout)).to.include({ status: 'ok' });
  });
});
