import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { natsAccessOptions } from '../../../actors/hive/nats-access.js';
import { hiveAccess, parseHiveAuth, readHiveTls } from '../../../config/hive-access.js';
import { parseNodeFile } from '../../../config/node-file.js';
import { compileConfig } from '../../../config/resolve.js';
import { ECHO_PARAMS } from '../../../config/echo.js';
import { ConfigError } from '../../../protocol/errors.js';
import { certPath } from '../../certs.js';
import { tempDir } from '../../temp.js';

const seed = (): string => new TextDecoder().decode(nkeys.createUser().getSeed());
const CREDS = (s: string): string =>
  `-----BEGIN NATS USER JWT-----\neyJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.sig\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${s}\n------END USER NKEY SEED------\n`;
const noTls = { SERVERCA: '', SERVERCERT: '', SERVERKEY: '' };

describe('config/hive-access: SERVERAUTH forms and the TLS parameters', () => {
  it('tells the SERVERAUTH forms apart in the documented order', () => {
    const s = seed();
    expect(parseHiveAuth('')).to.deep.equal({ kind: 'none' });
    expect(parseHiveAuth('s3cret')).to.deep.equal({ kind: 'token', token: 's3cret' });
    expect(parseHiveAuth('hive:p:w')).to.deep.equal({ kind: 'user', user: 'hive', password: 'p:w' });
    // a token that looks like user:password, a seed or a path is forced with token:
    expect(parseHiveAuth('token:a:b')).to.deep.equal({ kind: 'token', token: 'a:b' });
    expect(parseHiveAuth(`token:${s}`)).to.deep.equal({ kind: 'token', token: s });
    expect(parseHiveAuth('token:/etc/x.creds')).to.deep.equal({ kind: 'token', token: '/etc/x.creds' });
    expect(parseHiveAuth(s)).to.deep.equal({ kind: 'nkey', seed: s });
    expect(parseHiveAuth(CREDS(s))).to.deep.equal({ kind: 'creds', creds: CREDS(s) });
    // a leading ':' is no user name: a token
    expect(parseHiveAuth(':x')).to.deep.equal({ kind: 'token', token: ':x' });
    // an account seed (SA…) is not a user seed: taken as a token, and the server will say no
    expect(parseHiveAuth(`SA${s.slice(2)}`).kind).to.equal('token');
  });

  it('reads a path to a .creds or seed file, and a trimmed file:// text still parses', () => {
    const dir = tempDir('hn-auth-');
    const s = seed();
    writeFileSync(join(dir, 'u.creds'), CREDS(s));
    writeFileSync(join(dir, 'seed.nk'), `${s}\n`);
    writeFileSync(join(dir, 'plain'), 'not a credential');
    expect(parseHiveAuth(join(dir, 'u.creds'))).to.deep.include({ kind: 'creds' });
    expect(parseHiveAuth(join(dir, 'seed.nk'))).to.deep.equal({ kind: 'nkey', seed: s });
    const trimmed = parseHiveAuth(CREDS(s).trim());
    expect(trimmed.kind === 'creds' && trimmed.creds.endsWith('------\n')).to.equal(true);
    expect(natsAccessOptions({ auth: trimmed, tls: {} }, []).authenticator).to.be.a('function');
    expect(() => parseHiveAuth(join(dir, 'missing.creds'))).to.throw(
      ConfigError,
      /^SERVERAUTH: cannot read credentials file '.*missing.creds': ENOENT$/,
    );
    expect(() => parseHiveAuth(join(dir, 'plain'))).to.throw(
      ConfigError,
      /is neither a \.creds file .* nor a user nkey seed .*token:<value>/,
    );
  });

  it('a .creds text or seed that cannot sign stops the start naming SERVERAUTH', () => {
    const broken = CREDS('SUNOTASEED').replace('SUNOTASEED', 'x');
    expect(() =>
      natsAccessOptions({ auth: { kind: 'creds', creds: '-----BEGIN NATS USER JWT-----\nonly a jwt' }, tls: {} }, []),
    ).to.throw(ConfigError, 'SERVERAUTH: the .creds text cannot be used: unable to parse credentials');
    expect(() => natsAccessOptions({ auth: { kind: 'creds', creds: broken }, tls: {} }, [])).to.throw(
      ConfigError,
      /^SERVERAUTH: the \.creds text cannot be used/,
    );
  });

  it('maps each form onto the NATS client options, with tls for tls:// servers or TLS material', () => {
    expect(natsAccessOptions({ auth: { kind: 'token', token: 't' }, tls: {} }, ['nats://h:1'])).to.deep.equal({
      token: 't',
    });
    expect(
      natsAccessOptions({ auth: { kind: 'user', user: 'u', password: 'p' }, tls: {} }, ['tls://h:1']),
    ).to.deep.equal({ user: 'u', pass: 'p', tls: {} });
    expect(natsAccessOptions({ auth: { kind: 'none' }, tls: { ca: 'PEM' } }, ['nats://h:1'])).to.deep.equal({
      tls: { ca: 'PEM' },
    });
    expect(natsAccessOptions({ auth: { kind: 'nkey', seed: seed() }, tls: {} }, []).authenticator).to.be.a('function');
  });

  it('reads SERVERCA, SERVERCERT and SERVERKEY from paths, file:// or PEM text, and checks them', () => {
    const ca = readFileSync(certPath('ca.pem'), 'utf8');
    const tls = readHiveTls({
      SERVERCA: `file://${certPath('ca.pem')}`,
      SERVERCERT: certPath('client-alice.pem'),
      SERVERKEY: readFileSync(certPath('client-alice.key'), 'utf8'),
    });
    expect(tls.ca).to.equal(ca);
    expect(tls.cert).to.contain('-----BEGIN CERTIFICATE-----');
    expect(tls.key).to.contain('PRIVATE KEY');
    expect(readHiveTls(noTls)).to.deep.equal({});
    const bad =
      (values: Partial<typeof noTls>): (() => unknown) =>
      () =>
        readHiveTls({ ...noTls, ...values });
    expect(bad({ SERVERCERT: certPath('client-alice.pem') })).to.throw(
      ConfigError,
      'SERVERKEY is missing: a client certificate needs both SERVERCERT and SERVERKEY',
    );
    expect(bad({ SERVERKEY: certPath('client-alice.key') })).to.throw(ConfigError, 'SERVERCERT is missing');
    expect(bad({ SERVERCERT: certPath('client-alice.pem'), SERVERKEY: certPath('client-bob.key') })).to.throw(
      ConfigError,
      'SERVERKEY is not the private key of the SERVERCERT certificate',
    );
    expect(bad({ SERVERCA: '/nonexistent/ca.pem' })).to.throw(
      ConfigError,
      "SERVERCA: cannot read CA file '/nonexistent/ca.pem': ENOENT",
    );
    const dir = tempDir('hn-pem-');
    writeFileSync(join(dir, 'junk.pem'), 'hello');
    writeFileSync(join(dir, 'broken.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    expect(bad({ SERVERCA: join(dir, 'junk.pem') })).to.throw(ConfigError, /^SERVERCA: '.*junk.pem' is not a PEM file/);
    expect(bad({ SERVERCA: join(dir, 'broken.pem') })).to.throw(ConfigError, /^SERVERCA: not a PEM certificate/);
    expect(bad({ SERVERCERT: certPath('client-alice.pem'), SERVERKEY: join(dir, 'broken.pem') })).to.throw(
      ConfigError,
      /^SERVERKEY: not a PEM private key/,
    );
  });

  it('the node file hive section takes the TLS parameters; SERVERKEY is a secret read from file://', () => {
    const f = parseNodeFile(
      `hive:\n  SERVERHOST: tls://127.0.0.1:4222\n  SERVERAUTH: hive:pw\n  SERVERCA: ${certPath('ca.pem')}\n  serverCert: ${certPath('client-alice.pem')}\n  SERVERKEY: file://${certPath('client-alice.key')}\nservices:\n  - service: echo\n`,
      'n.yaml',
    );
    const c = compileConfig('echo', ECHO_PARAMS, [f.hive, f.services[0]!.layer]);
    expect(c.values.SERVERCERT).to.equal(certPath('client-alice.pem'));
    expect(c.values.SERVERKEY).to.contain('PRIVATE KEY');
    expect(c.secrets).to.include(c.values.SERVERKEY);
    expect(hiveAccess(c.values)).to.deep.include({ auth: { kind: 'user', user: 'hive', password: 'pw' } });
    expect(() => parseNodeFile('hive:\n  SERVERPORT: 1\nservices:\n  - service: echo\n', 'n.yaml')).to.throw(
      ConfigError,
      "unknown hive key 'SERVERPORT'; expected SERVERHOST, SERVERAUTH, SERVERCA, SERVERCERT, SERVERKEY",
    );
  });
});
