/**
 * The TLS parameters of a listener (gateway HTTPS, syslog over TLS): declared once here, so every
 * service that accepts TLS connections names and documents them the same way; their files are read
 * and watched by actors/net/server-tls.ts.
 */
import type { ParamTable } from './params.js';

const TLS_CLIENT_AUTH = ['none', 'request', 'require'] as const;
export type TlsClientAuth = (typeof TLS_CLIENT_AUTH)[number];

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
export const TLS_PARAMS = [
  { name: 'TLSCert', type: 'string', default: '', beyondSpec: true, watchedFile: true, description: "Certificate chain of the listener (PEM): a path, 'file://<path>' or the PEM text itself." },
  { name: 'TLSKey', type: 'string', default: '', secret: true, watchedFile: true, beyondSpec: true, description: "Private key of TLSCert (PEM, unencrypted): a path, 'file://<path>' or the PEM text itself." },
  { name: 'TLSCA', type: 'string', default: '', beyondSpec: true, watchedFile: true, description: "CA certificates (PEM) that client certificates must chain to: a path, 'file://<path>' or PEM text; needed by TLSClientAuth request or require." },
  { name: 'TLSClientAuth', type: 'enum', default: 'none', values: TLS_CLIENT_AUTH, beyondSpec: true, description: "Client certificates: 'none' (not asked for), 'request' (asked for, checked against TLSCA when given), 'require' (mutual TLS: a connection without a valid one is refused)." },
] as const satisfies ParamTable;

/** The TLS values of a compiled configuration that declares TLS_PARAMS. */
export interface TlsConfig {
  readonly TLSCert: string;
  readonly TLSKey: string;
  readonly TLSCA: string;
  readonly TLSClientAuth: string;
}
