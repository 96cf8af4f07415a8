/**
 * How a node reaches its hive beyond SERVERHOST: the credential SERVERAUTH gives and the TLS material
 * of SERVERCA, SERVERCERT and SERVERKEY, turned once into a typed HiveAccess that the NATS transport
 * maps onto its client (the node, `hivenode send` and `hivenode template` build it with hiveAccess()).
 * Files are read and certificates checked here, so a missing file or a key that does not belong to
 * its certificate stops the start with one line naming the parameter, before any connection.
 *
 * SERVERAUTH forms, tried in this order (after a `file://` value has been replaced by the file's text):
 *   1. empty                                   no credential
 *   2. `token:<value>`                         a token, whatever <value> looks like
 *   3. text holding `-----BEGIN NATS USER JWT-----`   a .creds file's text (user JWT and nkey seed)
 *   4. a user nkey seed (`SU` and 56 more base32 characters)
 *   5. a path: starting with `/`, `./` or `../`, or ending in `.creds` or `.nk`   the file is read
 *      and must be form 3 or 4
 *   6. `user:password` (split at the first `:`, so a password may hold `:`)
 *   7. anything else                           a token
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError, describeError } from '../protocol/errors.js';

/** The credential of SERVERAUTH, by form. */
export type HiveAuth =
  | { kind: 'none' }
  | { kind: 'token'; token: string }
  | { kind: 'user'; user: string; password: string }
  /** The text of a .creds file: the user JWT and the nkey seed that signs the server's challenge. */
  | { kind: 'creds'; creds: string }
  | { kind: 'nkey'; seed: string };

/** TLS material as PEM text; `ca` replaces the system's trusted CAs for the hive. */
export interface HiveTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface HiveAccess {
  auth: HiveAuth;
  tls: HiveTls;
}

/** The parameters hiveAccess reads (SERVERAUTH and SERVERKEY already through their file:// secrets). */
export interface HiveAccessValues {
  readonly SERVERAUTH: string;
  readonly SERVERCA: string;
  readonly SERVERCERT: string;
  readonly SERVERKEY: string;
}

const CREDS_MARK = '-----BEGIN NATS USER JWT-----';
const USER_SEED = /^SU[A-Z2-7]{56}$/;
const PATH_FORM = /^(?:\.{0,2}\/)|\.(?:creds|nk)$/i;

/** A .creds or seed text as a credential, or undefined when it is neither. */
function keyMaterial(text: string): HiveAuth | undefined {
  // the NATS client's parser wants a line end after the seed's closing line, which a trimmed file:// secret lost
  if (text.includes(CREDS_MARK)) return { kind: 'creds', creds: text.endsWith('\n') ? text : `${text}\n` };
  const t = text.trim();
  return USER_SEED.test(t) ? { kind: 'nkey', seed: t } : undefined;
}

function readText(path: string, param: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `${param}: cannot read ${what} '${path}': ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`,
    );
  }
}

/** SERVERAUTH's credential (see the order above). */
export function parseHiveAuth(value: string): HiveAuth {
  if (value === '') return { kind: 'none' };
  if (value.startsWith('token:')) return { kind: 'token', token: value.slice('token:'.length) };
  const material = keyMaterial(value);
  if (material) return material;
  if (PATH_FORM.test(value)) {
    const fromFile = keyMaterial(readText(value, 'SERVERAUTH', 'credentials file'));
    if (!fromFile)
      throw new ConfigError(
        `SERVERAUTH: '${value}' is neither a .creds file (${CREDS_MARK}) nor a user nkey seed (SU…); write token:<value> for a token that looks like a path`,
      );
    return fromFile;
  }
  const colon = value.indexOf(':');
  if (colon > 0) return { kind: 'user', user: value.slice(0, colon), password: value.slice(colon + 1) };
  return { kind: 'token', token: value };
}

/** A PEM parameter: PEM text as it is, else a path (`file://` optional) whose text is read. */
export function pem(value: string, param: string, what: string): string | undefined {
  if (value.trim() === '') return undefined;
  if (value.includes('-----BEGIN ')) return value;
  const path = value.startsWith('file://') ? value.slice('file://'.length) : value;
  const text = readText(path, param, what);
  if (!text.includes('-----BEGIN '))
    throw new ConfigError(`${param}: '${path}' is not a PEM file (no -----BEGIN line)`);
  return text;
}

/** SERVERCA, SERVERCERT and SERVERKEY read and checked: parseable, and the key is the certificate's. */
export function readHiveTls(values: Omit<HiveAccessValues, 'SERVERAUTH'>): HiveTls {
  const ca = pem(values.SERVERCA, 'SERVERCA', 'CA file');
  const cert = pem(values.SERVERCERT, 'SERVERCERT', 'certificate file');
  const key = pem(values.SERVERKEY, 'SERVERKEY', 'key file');
  if ((cert === undefined) !== (key === undefined))
    throw new ConfigError(
      `${cert ? 'SERVERKEY' : 'SERVERCERT'} is missing: a client certificate needs both SERVERCERT and SERVERKEY`,
    );
  if (ca !== undefined) {
    try {
      new X509Certificate(ca);
    } catch (e) {
      throw new ConfigError(`SERVERCA: not a PEM certificate: ${describeError(e)}`);
    }
  }
  if (cert !== undefined && key !== undefined) {
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(cert);
    } catch (e) {
      throw new ConfigError(`SERVERCERT: not a PEM certificate: ${describeError(e)}`);
    }
    let matches: boolean;
    try {
      matches = x509.checkPrivateKey(createPrivateKey(key));
    } catch (e) {
      throw new ConfigError(`SERVERKEY: not a PEM private key: ${describeError(e)}`);
    }
    if (!matches) throw new ConfigError('SERVERKEY is not the private key of the SERVERCERT certificate');
  }
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
  };
}

/** The hive access of a configuration. */
export function hiveAccess(values: HiveAccessValues): HiveAccess {
  return { auth: parseHiveAuth(values.SERVERAUTH), tls: readHiveTls(values) };
}

/** Which parameters to check when the hive refuses the credential. */
export function authParams(access: HiveAccess): string {
  if (access.auth.kind === 'none' && access.tls.cert) return 'SERVERCERT (its subject must be a user of the server)';
  return 'SERVERAUTH';
}
