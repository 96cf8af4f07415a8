/**
 * A private nats-server for the adapter tests: random port on 127.0.0.1, JetStream in a temp
 * directory; stopped, restarted (same port and store) and killed by the tests themselves. By default
 * clients authenticate with a token; `auth` chooses users with passwords, nkey users or mapped
 * certificate users instead, and `tls` makes the server speak TLS only (optionally asking for and
 * verifying client certificates).
 */
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { freePort, waitForPort } from '../ports.js';
import { join } from 'node:path';
import { tempDir } from '../../temp.js';
import { requireInstalled } from '../../support/installed.js';

export interface NatsServer {
  /** nats://127.0.0.1:port, or tls://127.0.0.1:port when the server speaks TLS. */
  url: string;
  /** The token clients need (only meaningful with the default token authorization). */
  token: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** How clients authenticate. */
export type NatsServerAuth =
  | { kind: 'token' }
  | { kind: 'none' }
  /** Users; a user without a password is one mapped from a client certificate (tls.verifyAndMap). */
  | { kind: 'users'; users: { user: string; password?: string }[] }
  /** Users known by their nkey public key (U…). */
  | { kind: 'nkeys'; nkeys: string[] }
  /** Decentralized JWT authentication: an operator JWT and the account JWTs preloaded in memory. */
  | { kind: 'operator'; operatorJwt: string; accounts: { publicKey: string; jwt: string }[] };

export interface NatsServerTls {
  cert: string;
  key: string;
  /** The CA client certificates are verified against. */
  ca?: string;
  /** Ask for a client certificate and refuse a connection without a valid one. */
  verify?: boolean;
  /** As verify, and the certificate's subject names the user (auth 'users' without passwords). */
  verifyAndMap?: boolean;
}

export interface NatsServerOptions {
  maxPayload?: number;
  auth?: NatsServerAuth;
  tls?: NatsServerTls;
  /** A configuration of its own (an example's, without its listen line) instead of the auth, TLS and JetStream lines. */
  config?: string;
  /** The server's environment, for `$VAR` references in `config`. */
  env?: NodeJS.ProcessEnv;
  /** false: a server without JetStream (default: with it). */
  jetstream?: boolean;
}

/** Why a test cannot run without nats-server (requireInstalled's reason). */
export const NATS_MISSING = 'nats-server is not installed (scripts/test.sh installs it)';

/** True when the nats-server binary is installed (scripts/test.sh installs it). */
export function natsServerAvailable(): boolean {
  return spawnSync('nats-server', ['--version']).status === 0;
}

/**
 * One nats-server for the suite it is called in (before/after hooks): the suite skips without the
 * binary, except in CI. Returns the server, once the hooks have run.
 */
export function suiteNatsServer(opts: NatsServerOptions = {}): () => NatsServer {
  let server: NatsServer | undefined;
  before(async function () {
    requireInstalled(natsServerAvailable(), NATS_MISSING, this);
    server = await natsServer(opts);
  });
  after(async () => {
    await server?.stop();
  });
  return () => server!;
}

function authLines(auth: NatsServerAuth, token: string): string[] {
  switch (auth.kind) {
    case 'none':
      return [];
    case 'token':
      return [`authorization { token: "${token}" }`];
    case 'users':
      return [
        `authorization { users = [ ${auth.users.map((u) => `{user: "${u.user}"${u.password === undefined ? '' : `, password: "${u.password}"`}}`).join(', ')} ] }`,
      ];
    case 'nkeys':
      return [`authorization { users = [ ${auth.nkeys.map((n) => `{nkey: "${n}"}`).join(', ')} ] }`];
    case 'operator':
      return [
        `operator: "${auth.operatorJwt}"`,
        'resolver: MEMORY',
        `resolver_preload: { ${auth.accounts.map((a) => `${a.publicKey}: "${a.jwt}"`).join(', ')} }`,
      ];
  }
}

function tlsLines(tls: NatsServerTls): string[] {
  const lines = [`cert_file: "${tls.cert}"`, `key_file: "${tls.key}"`, 'timeout: 2'];
  if (tls.ca) lines.push(`ca_file: "${tls.ca}"`);
  if (tls.verifyAndMap) lines.push('verify_and_map: true');
  else if (tls.verify) lines.push('verify: true');
  return [`tls { ${lines.join('\n')} }`];
}

export async function natsServer(opts: NatsServerOptions = {}): Promise<NatsServer> {
  const port = await freePort();
  const token = `t-${Math.random().toString(36).slice(2)}`;
  const store = tempDir('hn-nats-');
  const auth = opts.auth ?? { kind: 'token' };
  let child: ChildProcess | undefined;
  const server: NatsServer = {
    // the server certificate names 127.0.0.1 (and localhost) among its addresses
    url: `${opts.tls ? 'tls' : 'nats'}://127.0.0.1:${port}`,
    token,
    port,
    async start() {
      const conf = join(store, 'nats.conf');
      writeFileSync(
        conf,
        [
          `listen: "127.0.0.1:${port}"`,
          ...(opts.config !== undefined ? [opts.config] : authLines(auth, token)),
          // JetStream cannot run in operator mode without a system account; those tests need no store
          ...(auth.kind === 'operator' || opts.config !== undefined || opts.jetstream === false
            ? []
            : [`jetstream { store_dir: "${join(store, 'js')}" }`]),
          ...(opts.maxPayload ? [`max_payload: ${opts.maxPayload}`] : []),
          ...(opts.tls && opts.config === undefined ? tlsLines(opts.tls) : []),
        ].join('\n'),
      );
      child = spawn('nats-server', ['-c', conf], {
        stdio: 'ignore',
        ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}),
      });
      await waitForPort(port, 10_000, 'nats-server');
    },
    async stop() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGKILL');
      });
    },
  };
  await server.start();
  return server;
}
