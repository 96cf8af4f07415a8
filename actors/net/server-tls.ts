/**
 * TLS for a listener (gateway HTTPS, syslog over TLS) from the TLS parameters (config/tls.ts): the
 * certificate, key and CA are read at start — a missing file, a key that does not match its
 * certificate or an unreadable PEM is a ConfigError naming the parameter — and read again when
 * their files change, then handed to the running server with setSecureContext: new handshakes use
 * the new certificate, connections already open keep theirs (nothing is dropped). TLS 1.2 is the
 * minimum. A rewrite seen half-way (the new certificate beside the old key) does not load; the
 * previous files stay in use until the pair loads, and that is logged once per change.
 */
import { X509Certificate } from 'node:crypto';
import type { Stats } from 'node:fs';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { SecureContextOptions, Server as TlsServer, TLSSocket, TlsOptions } from 'node:tls';
import { createSecureContext } from 'node:tls';
import type { TlsClientAuth, TlsConfig } from '../../config/tls.js';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { Logger } from '../observe/logger.js';

/** How often the watched files are looked at (stat polling survives editors' and certbot's renames). */
const WATCH_INTERVAL_MS = 1_000;
/** Changes closer together than this are one change (a certificate and its key written one after the other). */
const SETTLE_MS = 300;
/** A certificate that expires sooner than this is warned about at start. */
const EXPIRY_WARNING_MS = 14 * 86_400_000;

type Part = 'TLSCert' | 'TLSKey' | 'TLSCA';

/** Where one part comes from: a file (watched) or PEM text given inline. */
export type Source = { kind: 'file'; path: string } | { kind: 'inline'; pem: string };

/** Where a PEM parameter's value points: a path, 'file://<path>', or the PEM text itself; undefined when ''. */
export function sourceOf(value: string): Source | undefined {
  const v = value.trim();
  if (v === '') return undefined;
  if (v.startsWith('-----BEGIN')) return { kind: 'inline', pem: v };
  return { kind: 'file', path: v.startsWith('file://') ? v.slice('file://'.length) : v };
}

/**
 * A TLS connection's error in one line: OpenSSL's reason ('tlsv13 alert certificate required')
 * rather than its whole multi-line error string with source file names.
 */
export function tlsErrorText(e: unknown): string {
  const reason = (e as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' && reason !== '' ? reason : describeError(e).trim();
}

/** A PEM parameter's text: inline as it is, a file read now; a file that cannot be read throws 'cannot be read (<code>)'. */
export function pemText(source: Source): string {
  if (source.kind === 'inline') return source.pem;
  try {
    return readFileSync(source.path, 'utf8');
  } catch (e) {
    throw new Error(`cannot be read (${(e as NodeJS.ErrnoException).code ?? describeError(e)})`);
  }
}

/** What a TLS secure-context error means, in words a user can act on. */
function explain(e: unknown): string {
  const m = describeError(e);
  if (/key values mismatch|KEY_VALUES_MISMATCH/i.test(m)) return 'TLSKey is not the key of TLSCert';
  if (/no start line|bad base64|PEM/i.test(m)) return `not a PEM file (${m})`;
  return m;
}

export class ServerTls {
  private readonly sources: Partial<Record<Part, Source>>;
  private current: SecureContextOptions;
  private watched: string[] = [];
  /** The servers given to watch(): one listener may have several (the syslog receiver's TLS and RELP ports). */
  private readonly servers: TlsServer[] = [];
  private settle: NodeJS.Timeout | undefined;

  private constructor(
    config: TlsConfig,
    private readonly where: string,
  ) {
    this.sources = {};
    for (const part of ['TLSCert', 'TLSKey', 'TLSCA'] as const) {
      const s = sourceOf(config[part]);
      if (s) this.sources[part] = s;
    }
    this.clientAuth = config.TLSClientAuth as TlsClientAuth;
    if (!this.sources.TLSCert || !this.sources.TLSKey)
      throw new ConfigError(`${where}: TLS needs both TLSCert and TLSKey (PEM files, for example from 'make certs')`);
    if (this.clientAuth !== 'none' && !this.sources.TLSCA)
      throw new ConfigError(
        `${where}: TLSClientAuth ${this.clientAuth} needs TLSCA, the CA that client certificates are checked against`,
      );
    this.current = this.read((part, e) => new ConfigError(`${where}: ${part} ${this.describe(part)}: ${e}`));
  }

  readonly clientAuth: TlsClientAuth;

  /** The listener's TLS when its configuration turns TLS on (TLSCert or TLSKey given), else undefined. */
  static fromConfig(config: TlsConfig, where: string, log?: Logger): ServerTls | undefined {
    if (config.TLSCert.trim() === '' && config.TLSKey.trim() === '') {
      if (config.TLSCA.trim() !== '' || config.TLSClientAuth !== 'none')
        throw new ConfigError(`${where}: TLSCA and TLSClientAuth need TLSCert and TLSKey (TLS is off without them)`);
      return undefined;
    }
    const tls = new ServerTls(config, where);
    if (log) tls.warnIfExpiring(log);
    return tls;
  }

  /** The options of a TLS (or HTTPS) server. */
  serverOptions(): TlsOptions {
    return {
      ...this.current,
      minVersion: 'TLSv1.2',
      requestCert: this.clientAuth !== 'none',
      // 'request': a certificate that does not verify still connects (then it names no user)
      rejectUnauthorized: this.clientAuth === 'require',
    };
  }

  /** Re-reads the files when they change and gives the server (and every other server watched) the new context, until close(). */
  watch(server: TlsServer, log: Logger): void {
    this.servers.push(server);
    const onChange = (now: Stats, before: Stats): void => {
      if (now.mtimeMs === before.mtimeMs && now.size === before.size) return;
      clearTimeout(this.settle);
      this.settle = setTimeout(() => this.reload(log), SETTLE_MS);
      this.settle.unref();
    };
    for (const s of Object.values(this.sources)) {
      if (s.kind !== 'file' || this.watched.includes(s.path)) continue;
      watchFile(s.path, { interval: WATCH_INTERVAL_MS, persistent: false }, onChange);
      this.watched.push(s.path);
    }
  }

  close(): void {
    clearTimeout(this.settle);
    for (const path of this.watched) unwatchFile(path);
    this.watched = [];
    this.servers.length = 0;
  }

  private reload(log: Logger): void {
    try {
      const next = this.read((part, e) => new Error(`${part} ${this.describe(part)}: ${e}`));
      this.current = next;
      for (const server of this.servers) server.setSecureContext(this.serverOptions());
      log.info(`${this.where}: TLS certificate reloaded (${this.subject()})`);
      this.warnIfExpiring(log);
    } catch (e) {
      log.warn(
        `${this.where}: TLS files changed but do not load (${describeError(e)}); the previous certificate stays in use until they do`,
      );
    }
  }

  /** Reads every part and checks that they make a secure context; `fail` shapes the error of a part. */
  private read(fail: (part: Part, reason: string) => Error): SecureContextOptions {
    const text = (part: Part): string | undefined => {
      const s = this.sources[part];
      if (!s) return undefined;
      try {
        return pemText(s);
      } catch (e) {
        throw fail(part, (e as Error).message);
      }
    };
    const cert = text('TLSCert')!;
    const key = text('TLSKey')!;
    const ca = text('TLSCA');
    const options: SecureContextOptions = { cert, key, ...(ca === undefined ? {} : { ca }) };
    for (const [part, pem] of [
      ['TLSCert', cert],
      ['TLSCA', ca],
    ] as const) {
      if (pem === undefined) continue;
      try {
        new X509Certificate(pem);
      } catch (e) {
        throw fail(part, explain(e));
      }
    }
    try {
      createSecureContext(options);
    } catch (e) {
      // both certificates parsed above: what fails now is the key (unreadable, or not TLSCert's)
      throw fail('TLSKey', explain(e));
    }
    return options;
  }

  private describe(part: Part): string {
    const s = this.sources[part];
    return s?.kind === 'file' ? `'${s.path}'` : '(inline PEM)';
  }

  private subject(): string {
    const cert = new X509Certificate(this.current.cert as string);
    return `${cert.subject.replace(/\n/g, ', ')}, valid until ${new Date(cert.validTo).toISOString()}`;
  }

  private warnIfExpiring(log: Logger): void {
    const cert = new X509Certificate(this.current.cert as string);
    const left = Date.parse(cert.validTo) - Date.now();
    if (left <= 0)
      log.warn(
        `${this.where}: the TLS certificate expired on ${new Date(cert.validTo).toISOString()}; clients will refuse it`,
      );
    else if (left < EXPIRY_WARNING_MS)
      log.warn(`${this.where}: the TLS certificate expires on ${new Date(cert.validTo).toISOString()}`);
  }
}

/**
 * The user a verified client certificate names (its subject CN), or undefined when the connection
 * has none or it did not verify against TLSCA.
 */
export function certificateUser(socket: TLSSocket): string | undefined {
  if (!socket.authorized) return undefined;
  const cn = socket.getPeerCertificate().subject?.CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  return name && name.trim() !== '' ? name : undefined;
}
