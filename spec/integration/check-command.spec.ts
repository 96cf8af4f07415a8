/**
 * `hivenode check <file>` (README, Changing a running node): the node file's whole compile without
 * starting anything — every service's table, templates, definitions and TLS files — every error one
 * line naming where it is written, exit 0 or 2.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certPath } from '../certs.js';
import { tempDir } from '../temp.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';

const check = (file: string) =>
  spawnSync(process.execPath, [...HIVENODE_ARGS, 'check', file], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    timeout: 30_000,
  });

describe('hivenode check', () => {
  const dir = tempDir('hn-check-');
  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('accepts a valid file with exit 0 and starts nothing (Port 1 is never opened)', () => {
    const file = write(
      'good.yaml',
      [
        'services:',
        '  - {service: echo, NAME: echo}',
        '  - {service: exec, NAME: ex, Template: "/bin/echo {{ .Data.x }}"}',
        '  - {service: gateway, NAME: gw, Port: 1, Strict: true, Routes: "a=echo"}',
        '',
      ].join('\n'),
    );
    const r = check(file);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/good\.yaml: 3 service\(s\) \(echo echo, exec ex, gateway gw\): no errors/);
  });

  it('names every error on a line of its own with where it is written, and exits 2', () => {
    const file = write(
      'bad.yaml',
      [
        'services:',
        '  - {service: echo, NAME: echo, Bogus: 1}',
        '  - {service: exec, NAME: ex, Template: "{{ .Data.x "}',
        `  - {service: gateway, NAME: gw, Strict: true, TLSCert: "${certPath('server.pem')}", TLSKey: "${certPath('client-alice.key')}"}`,
        `  - {service: gateway, NAME: gw2, Strict: true, ResponseHeaders: "Bad Header: x"}`,
        '',
      ].join('\n'),
    );
    const r = check(file);
    expect(r.status).to.equal(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).to.have.length(4);
    expect(lines[0]).to.match(/^hivenode: unknown parameter 'Bogus' \(bad\.yaml services\[0\]\)/);
    expect(lines[1]).to.match(/^hivenode: bad\.yaml services\[1\]: Template: /);
    expect(lines[2]).to.match(/^hivenode: bad\.yaml services\[2\]: .*TLSKey is not the key of TLSCert/);
    expect(lines[3]).to.match(/^hivenode: bad\.yaml services\[3\]: ResponseHeaders: /);
    expect(r.stderr).not.to.match(/\n\s+at /);
  });

  it('refuses a file that is not YAML in one line', () => {
    const r = check(write('broken.yaml', 'services: [ {service: echo\n'));
    expect(r.status).to.equal(2);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    expect(r.stderr).to.match(/^hivenode: broken\.yaml: not valid YAML: /);
  });

  it('refuses a flow whose definition file does not read', () => {
    const r = check(
      write(
        'flow.yaml',
        ['services:', `  - {service: flow, NAME: f, Definition: "file://${join(dir, 'missing.yaml')}"}`, ''].join('\n'),
      ),
    );
    expect(r.status).to.equal(2);
    expect(r.stderr).to.match(/flow\.yaml services\[0\]: Definition: /);
  });
});
