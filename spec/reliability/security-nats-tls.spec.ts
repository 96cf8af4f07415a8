/**
 * Security of the NATS hive: a nats-server speaking TLS only, verifying client certificates, with
 * users by password, by nkey and by certificate subject (verify_and_map). Connections are made the
 * way a node starts (transportFor: the SERVER* parameters through config/hive-access.ts), repeated
 * per case. Expected: the right CA, certificate and credential connect; a wrong CA, a missing,
 * expired or foreign client certificate, a wrong password or user, an unknown nkey and an unmapped
 * certificate are every one refused with its one-line ConfigError naming the parameter to fix, and
 * quickly (a refused certificate is found by the TLS probe, not after the client's 20 s timeout).
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { createLogger } from '../../actors/observe/logger.js';
import { transportFor } from '../../node/node.js';
import { ConfigError } from '../../protocol/errors.js';
import type { NatsServer } from '../adapters/nats/server.js';
import { natsServer, NATS_MISSING, natsServerAvailable } from '../adapters/nats/server.js';
import { certPath, certsDir } from '../certs.js';
import { tempDir } from '../temp.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { requireInstalled } from '../support/installed.js';

const ATTEMPTS = byScale(3, 25);
/** A refusal must come well before the NATS client's own 20 s connect timeout. */
const REFUSAL_LIMIT_MS = 5_000;

interface Case {
  name: string;
  server: 'passwords' | 'mapped' | 'nkeys';
  params: { SERVERAUTH?: string; SERVERCA?: string; SERVERCERT?: string; SERVERKEY?: string };
  /** The one line the start stops with; undefined: the connection is accepted. */
  refused?: RegExp;
}

const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const client = (who: string): Case['params'] => ({
  SERVERCA: certPath('ca.pem'),
  SERVERCERT: certPath(`client-${who}.pem`),
  SERVERKEY: certPath(`client-${who}.key`),
});

describe('reliability: security of the NATS hive (TLS, client certificates, credentials)', function () {
  const servers: NatsServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  reliabilityTest(
    `${ATTEMPTS} connections per case: right certificates and credentials connect; wrong CA, missing/expired/foreign client certificate, wrong password or user, unknown nkey, unmapped certificate refused with one line`,
    {
      suite: 'security',
      load: `${ATTEMPTS} connection attempts per case against three TLS nats-servers verifying client certificates: users with passwords, nkey users, certificate subjects mapped to users`,
      faults:
        'CA that did not sign the server, no client certificate, client certificate expired in 2020, client certificate of an untrusted CA, wrong password, unknown user, token where a user is needed, nkey seed the server does not know, certificate whose subject is not a user',
    },
    byScale(60_000, 300_000),
    async (figures, skip) => {
      requireInstalled(natsServerAvailable(), NATS_MISSING, skip);
      certsDir();
      const tls = { cert: certPath('server.pem'), key: certPath('server.key'), ca: certPath('ca.pem') };
      const nkey = nkeys.createUser();
      const seedFile = join(tempDir('hn-sec-nats-'), 'hive.nk');
      writeFileSync(seedFile, new TextDecoder().decode(nkey.getSeed()), { mode: 0o600 });
      const byKind = {
        passwords: await natsServer({
          tls: { ...tls, verify: true },
          auth: { kind: 'users', users: [{ user: 'hive', password: 'right' }] },
        }),
        mapped: await natsServer({
          tls: { ...tls, verifyAndMap: true },
          auth: { kind: 'users', users: [{ user: 'CN=alice' }] },
        }),
        nkeys: await natsServer({
          tls: { ...tls, verify: true },
          auth: { kind: 'nkeys', nkeys: [nkey.getPublicKey()] },
        }),
      };
      servers.push(...Object.values(byKind));
      const CERT = /refused the client certificate \(TLS alert: bad certificate\); check SERVERCERT and SERVERKEY/;
      const AUTH = /refused the connection: Authorization Violation \(check SERVERAUTH\)$/;
      const cases: Case[] = [
        {
          name: 'right CA, certificate and password',
          server: 'passwords',
          params: { ...client('alice'), SERVERAUTH: 'hive:right' },
        },
        { name: 'right certificate mapped to its user', server: 'mapped', params: client('alice') },
        { name: 'right nkey seed file', server: 'nkeys', params: { ...client('bob'), SERVERAUTH: seedFile } },
        {
          name: 'wrong CA',
          server: 'passwords',
          params: { ...client('alice'), SERVERCA: certPath('other-ca.pem'), SERVERAUTH: 'hive:right' },
          refused: /not signed by a trusted CA \(unable to verify the first certificate\); check SERVERCA$/,
        },
        {
          name: 'no client certificate',
          server: 'passwords',
          params: { SERVERCA: certPath('ca.pem'), SERVERAUTH: 'hive:right' },
          refused: CERT,
        },
        {
          name: 'expired client certificate',
          server: 'passwords',
          params: { ...client('expired'), SERVERAUTH: 'hive:right' },
          refused: CERT,
        },
        {
          name: 'client certificate of an untrusted CA',
          server: 'passwords',
          params: {
            ...client('alice'),
            SERVERCERT: certPath('other-client.pem'),
            SERVERKEY: certPath('other-client.key'),
            SERVERAUTH: 'hive:right',
          },
          refused: CERT,
        },
        {
          name: 'wrong password',
          server: 'passwords',
          params: { ...client('alice'), SERVERAUTH: 'hive:wrong' },
          refused: AUTH,
        },
        {
          name: 'unknown user',
          server: 'passwords',
          params: { ...client('alice'), SERVERAUTH: 'nobody:right' },
          refused: AUTH,
        },
        {
          name: 'token where a user is needed',
          server: 'passwords',
          params: { ...client('alice'), SERVERAUTH: 'some-token' },
          refused: AUTH,
        },
        {
          name: 'unknown nkey seed',
          server: 'nkeys',
          params: { ...client('alice'), SERVERAUTH: new TextDecoder().decode(nkeys.createUser().getSeed()) },
          refused: AUTH,
        },
        {
          name: 'certificate not mapped to a user',
          server: 'mapped',
          params: client('bob'),
          refused:
            /refused the connection: Authorization Violation \(check SERVERCERT \(its subject must be a user of the server\)\)$/,
        },
      ];
      const log = createLogger({ level: 'error', stream: process.stderr });
      const refusalMs: number[] = [];
      let attempts = 0;
      let accepted = 0;
      let refused = 0;
      for (const c of cases) {
        for (let i = 0; i < ATTEMPTS; i++) {
          attempts++;
          const transport = await transportFor(
            {
              SERVERHOST: byKind[c.server].url,
              SERVERAUTH: '',
              SERVERCA: '',
              SERVERCERT: '',
              SERVERKEY: '',
              ...c.params,
            },
            'security test',
            log,
          );
          const began = performance.now();
          const outcome = await transport.connect().then(
            () => undefined,
            (e: unknown) => e,
          );
          const ms = performance.now() - began;
          await transport.close();
          if (c.refused === undefined) {
            expect(outcome, `${c.name}: ${String(outcome)}`).to.equal(undefined);
            accepted++;
            continue;
          }
          expect(outcome, c.name).to.be.instanceOf(ConfigError);
          const message = (outcome as Error).message;
          expect(message, c.name).not.to.contain('\n');
          expect(message, c.name).to.match(c.refused);
          expect(ms, `${c.name}: time to refuse`).to.be.below(REFUSAL_LIMIT_MS);
          refusalMs.push(ms);
          refused++;
        }
      }
      Object.assign(figures, {
        attempts,
        accepted,
        refused,
        'refusal p50 ms': Math.round(percentile(refusalMs, 50) * 10) / 10,
        'refusal max ms': Math.round(Math.max(...refusalMs) * 10) / 10,
      });
      expect(accepted).to.equal(3 * ATTEMPTS);
      expect(refused).to.equal(9 * ATTEMPTS);
    },
  );
});
