/**
 * The node file's secrets as the Config page shows and takes them (node/node-file-secrets.ts), the
 * line diff beside them (node/line-diff.ts), and the kept versions' rotation (node/node-file-versions.ts).
 */
import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lineDiff } from '../../../node/line-diff.js';
import { SECRET_MASK, maskSecrets, unmaskSecrets } from '../../../node/node-file-secrets.js';
import { keptVersions, prepareWrite, readKeptVersion } from '../../../node/node-file-versions.js';
import { tempDir } from '../../temp.js';

const YAML = `# keep me
hive: {SERVERHOST: "", SERVERAUTH: 'hive-token'}
services:
  - {service: sql, NAME: db, SQL_ENGINE: sqlite, SQL_PASSWORD: pw-1, SQL_DATABASE: /tmp/x.db}
  - {service: sql, NAME: db2, SQL_PASSWORD: "\${DB_PASSWORD}"}
  - service: gateway
    NAME: gw
    JWTSecret: file:///etc/hivenode/jwt
    TLSKey: |
      -----BEGIN PRIVATE KEY-----
      abc
      -----END PRIVATE KEY-----
    TLSCert: /etc/cert.pem
  - {service: echo, sql_password_not: 1}
`;

describe('node file secrets: masked for the Config page, kept when the mask is applied', () => {
  it('masks the values of secret parameters (hive and services, any key case), leaves references and everything else as written', () => {
    const masked = maskSecrets(YAML, 'n.yaml');
    expect(masked).to.contain(`SERVERAUTH: "${SECRET_MASK}"`);
    expect(masked).to.contain(`SQL_PASSWORD: "${SECRET_MASK}"`);
    expect(masked).to.contain('SQL_PASSWORD: "${DB_PASSWORD}"');
    expect(masked).to.contain('JWTSecret: file:///etc/hivenode/jwt');
    expect(masked).to.contain(`    TLSKey: "${SECRET_MASK}"\n    TLSCert: /etc/cert.pem`);
    expect(masked).to.contain('# keep me');
    for (const secret of ['hive-token', 'pw-1', 'BEGIN PRIVATE KEY']) expect(masked).not.to.contain(secret);
    expect(maskSecrets(YAML.replace('SQL_PASSWORD: pw-1', 'sql_password: pw-1'), 'n.yaml')).not.to.contain('pw-1');
  });

  it('masks a JSON node file and keeps it JSON', () => {
    const json = JSON.stringify({ services: [{ service: 'sql', NAME: 'db', SQL_PASSWORD: 'pw-1' }] }, null, 2);
    const masked = maskSecrets(json, 'n.json');
    expect(JSON.parse(masked)).to.deep.equal({ services: [{ service: 'sql', NAME: 'db', SQL_PASSWORD: SECRET_MASK }] });
    expect(JSON.parse(unmaskSecrets(masked, json, 'n.json'))).to.deep.equal(JSON.parse(json));
  });

  it('puts the running values back where the mask is left, by service NAME, and refuses a mask with nothing to keep', () => {
    const edited = maskSecrets(YAML, 'n.yaml').replace('NAME: db,', 'NAME: db, SQL_PORT: 1,');
    const full = unmaskSecrets(edited, YAML, 'n.yaml');
    expect(full)
      .to.contain('SQL_PASSWORD: "pw-1"')
      .and.contain('SERVERAUTH: "hive-token"')
      .and.contain('TLSKey: "-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----\\n"\n    TLSCert');
    // the services reordered: kept by NAME, not position
    const moved = `services:\n  - {service: sql, NAME: db2, SQL_PASSWORD: "${SECRET_MASK}"}\n  - {service: sql, NAME: db, SQL_PASSWORD: "${SECRET_MASK}"}\n`;
    expect(unmaskSecrets(moved, YAML, 'n.yaml'))
      .to.contain('NAME: db2, SQL_PASSWORD: "${DB_PASSWORD}"')
      .and.contain('NAME: db, SQL_PASSWORD: "pw-1"');
    expect(() =>
      unmaskSecrets(`services:\n  - {service: sql, NAME: new, SQL_PASSWORD: "${SECRET_MASK}"}\n`, YAML, 'n.yaml'),
    ).to.throw(
      "n.yaml services[0].SQL_PASSWORD: holds the mask ********, but the running file has no SQL_PASSWORD for service 'new' to keep",
    );
    // text that does not parse is left to the compile to refuse
    expect(unmaskSecrets('services: [', YAML, 'n.yaml')).to.equal('services: [');
  });
});

describe('line diff', () => {
  it('shows the removed and added lines with three lines of context, the rest folded', () => {
    const a = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    const b = a.replace('line 10', 'line ten');
    expect(lineDiff(a, b)).to.deep.equal([
      { op: ' ', text: '…' },
      { op: ' ', text: 'line 7' },
      { op: ' ', text: 'line 8' },
      { op: ' ', text: 'line 9' },
      { op: '-', text: 'line 10' },
      { op: '+', text: 'line ten' },
      { op: ' ', text: 'line 11' },
      { op: ' ', text: 'line 12' },
      { op: ' ', text: 'line 13' },
      { op: ' ', text: '…' },
    ]);
    expect(lineDiff(a, a)).to.deep.equal([]);
    expect(lineDiff('a\nb', 'a\nb\nc')).to.deep.equal([
      { op: ' ', text: 'a' },
      { op: ' ', text: 'b' },
      { op: '+', text: 'c' },
    ]);
  });
});

describe('node file versions: written beside, fsynced, renamed into place; .1 … .5 kept', () => {
  it('rotates on each commit, drops the sixth, and a discarded write leaves nothing', () => {
    const dir = tempDir('hn-versions-');
    const file = join(dir, 'node.yaml');
    writeFileSync(file, 'v0');
    for (let i = 1; i <= 7; i++) prepareWrite(file, `v${i}`).commit();
    expect(readFileSync(file, 'utf8')).to.equal('v7');
    expect(keptVersions(file).map((v) => [v.n, readFileSync(v.path, 'utf8')])).to.deep.equal([
      [1, 'v6'],
      [2, 'v5'],
      [3, 'v4'],
      [4, 'v3'],
      [5, 'v2'],
    ]);
    expect(existsSync(`${file}.6`)).to.equal(false);
    const write = prepareWrite(file, 'v8');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).to.have.length(1);
    write.discard();
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
    expect(readFileSync(file, 'utf8')).to.equal('v7');
    expect(readKeptVersion(file, 2)).to.equal('v5');
    expect(() => readKeptVersion(file, 6)).to.throw('no kept version 6: versions are 1 (newest) to 5');
  });

  it('refuses, naming the file, when the directory cannot be written', () => {
    expect(() => prepareWrite('/proc/hivenode-no/node.yaml', 'x')).to.throw(
      /cannot write \/proc\/hivenode-no\/node\.yaml: ENOENT/,
    );
  });
});
