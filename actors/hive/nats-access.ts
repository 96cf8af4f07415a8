/**
 * The hive access (config/hive-access.ts) as NATS client options, and the one-line ConfigError that
 * says why a first connection failed and which parameter to fix. A client certificate the server
 * refuses is found by a TLS probe before the client connects (probeTls): under TLS 1.3 the server
 * refuses it after the client's handshake is done, and the NATS client then only reports a timeout,
 * 20 s later, that names nothing.
 */
import type { ConnectionOptions } from '@nats-io/transport-node';
import { credsAuthenticator, nkeyAuthenticator } from '@nats-io/transport-node';
import { isIP, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { HiveAccess, HiveTls } from '../../config/hive-access.js';
import { authParams } from '../../config/hive-access.js';
import { ConfigError, describeError } from '../../protocol/errors.js';

const encoder = new TextEncoder();

/** The authentication and TLS options of the NATS client; `tls` when any server is tls:// or TLS material is given. */
export function natsAccessOptions(access: HiveAccess, servers: readonly string[]): Partial<ConnectionOptions> {
  const opts: Partial<ConnectionOptions> = {};
  const auth = access.auth;
  switch (auth.kind) {
    case 'none':
      break;
    case 'token':
      opts.token = auth.token;
      break;
    case 'user':
      opts.user = auth.user;
      opts.pass = auth.password;
      break;
    case 'creds':
      opts.authenticator = checked(credsAuthenticator(encoder.encode(auth.creds)), 'the .creds text');
      break;
    case 'nkey':
      opts.authenticator = checked(nkeyAuthenticator(encoder.encode(auth.seed)), 'the nkey seed');
      break;
  }
  if (servers.some((s) => /^tls:\/\//i.test(s)) || Object.keys(access.tls).length > 0) opts.tls = { ...access.tls };
  return opts;
}

/** The authenticator, once tried on a nonce: a .creds text or seed that cannot sign stops the start here. */
function checked<A extends (nonce?: string) => unknown>(authenticator: A, what: string): A {
  try {
    authenticator('hivenode-check');
  } catch (e) {
    throw new ConfigError(`SERVERAUTH: ${what} cannot be used: ${describeError(e)}`);
  }
  return authenticator;
}

/** Node's TLS error codes and messages in words a user can act on. */
function tlsCause(e: unknown, servers: string): string | undefined {
  const err = e as { code?: unknown; message?: unknown; cause?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  const text = typeof err.message === 'string' ? err.message : describeError(e);
  if (/^ERR_SSL_.*ALERT_/.test(code)) {
    const alert = code
      .replace(/^ERR_SSL_(?:SSLV3_|TLSV13_|TLSV1_)?ALERT_/, '')
      .toLowerCase()
      .replace(/_/g, ' ');
    return `the NATS hive at ${servers} refused the client certificate (TLS alert: ${alert}); check SERVERCERT and SERVERKEY (a certificate signed by a CA the server trusts, not expired)`;
  }
  switch (code) {
    case 'CERT_HAS_EXPIRED':
      return `the NATS hive at ${servers} presented an expired certificate (${text}); the server needs a valid certificate`;
    case 'CERT_NOT_YET_VALID':
      return `the NATS hive at ${servers} presented a certificate not valid yet (${text}); check the clocks and the server certificate`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `the certificate of the NATS hive at ${servers} does not name that host (${text}); use a SERVERHOST name the certificate names`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'CERT_SIGNATURE_FAILURE':
      return `the NATS hive at ${servers} presented a certificate not signed by a trusted CA (${text}); check SERVERCA`;
  }
  if (err.cause !== undefined && err.cause !== e) return tlsCause(err.cause, servers);
  return undefined;
}

/** Why a first connection to `servers` failed, as one ConfigError naming the parameter to fix. */
export function connectError(e: unknown, servers: string, access: HiveAccess): ConfigError {
  const tls = tlsCause(e, servers);
  if (tls) return new ConfigError(tls);
  const m = describeError(e);
  if (/authoriz|authentic/i.test(m))
    return new ConfigError(`the NATS hive at ${servers} refused the connection: ${m} (check ${authParams(access)})`);
  if (/tls.*not available|does not support 'tls'/i.test(m))
    return new ConfigError(
      `the NATS hive at ${servers} does not speak TLS (${m}); use nats:// in SERVERHOST without SERVERCA, SERVERCERT and SERVERKEY, or enable TLS on the server`,
    );
  return new ConfigError(`cannot connect to the NATS hive at ${servers}: ${m}`);
}

type Verdict = { kind: 'accepted' } | { kind: 'refused'; error: ConfigError } | { kind: 'unreachable' };

/**
 * One TLS handshake with one server the way the NATS client makes it (plain INFO line, then TLS on
 * the same socket), then a PING: any answer means the certificates were accepted; a TLS error is the
 * verdict. Unreachable or not TLS is left to the client, which reports those well.
 */
function probeOne(server: string, tls: HiveTls, access: HiveAccess, timeoutMs: number): Promise<Verdict> {
  const url = new URL(server.replace(/^tls:/i, 'http:').replace(/^nats:/i, 'http:'));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 4222);
  return new Promise((resolve) => {
    const socket = tcpConnect(port, host);
    const done = (v: Verdict): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done({ kind: 'unreachable' }), timeoutMs);
    socket.on('error', () => done({ kind: 'unreachable' }));
    socket.once('data', (info) => {
      if (!/"tls_(?:required|available)":true/.test(String(info))) return done({ kind: 'unreachable' });
      // the server name as the NATS client sends it: none for an address (Node then checks 'localhost')
      const secure = tlsConnect({ socket, servername: isIP(host) ? '' : host, ...tls }, () => secure.write('PING\r\n'));
      secure.on('data', () => done({ kind: 'accepted' }));
      secure.on('error', (e) => done({ kind: 'refused', error: connectError(e, server, access) }));
    });
  });
}

/** Probes the servers in order until one gives a verdict; a refusal throws its ConfigError. */
export async function probeTls(servers: readonly string[], access: HiveAccess, timeoutMs = 5_000): Promise<void> {
  for (const server of servers) {
    const verdict = await probeOne(server, access.tls, access, timeoutMs);
    if (verdict.kind === 'refused') throw verdict.error;
    if (verdict.kind === 'accepted') return;
  }
}
