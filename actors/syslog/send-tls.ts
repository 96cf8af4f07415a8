/**
 * The TLS of the syslog sender (SendTLS): the CA the server's certificate must chain to (RemoteCA;
 * the system CAs when not given) and the client certificate for servers that require one (SendCert,
 * SendKey). They are checked at start — a missing file, a PEM that does not parse or a key that is
 * not the certificate's is a ConfigError naming the parameter — and read again for every new
 * connection, so a renewed certificate or CA is used from the next reconnect on; files that no
 * longer load leave the previous ones in use, and that is logged once per failure.
 *
 * The server's certificate must name RemoteIP: a host name is sent as SNI and checked against the
 * certificate's DNS names, an IP address against its IP addresses (Node's checkServerIdentity does
 * both; an IP address is never sent as SNI, RFC 6066 forbids it).
 */
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { ConnectionOptions, SecureContextOptions } from 'node:tls';
import { createSecureContext } from 'node:tls';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { Logger } from '../observe/logger.js';
import { pemText, sourceOf } from '../net/server-tls.js';

export interface SendTlsConfig {
  readonly RemoteCA: string;
  readonly SendCert: string;
  readonly SendKey: string;
}

type Part = keyof SendTlsConfig;
const PARTS: readonly Part[] = ['RemoteCA', 'SendCert', 'SendKey'];

export class SendTls {
  private current: SecureContextOptions;
  private failing: string | undefined;

  private constructor(
    private readonly config: SendTlsConfig,
    private readonly log: Logger,
  ) {
    this.current = this.read();
  }

  /**
   * The sender's TLS when SendTLS is on; with it off, RemoteCA, SendCert and SendKey are refused
   * (they would be ignored, and a user who set them meant TLS).
   */
  static fromConfig(config: SendTlsConfig & { readonly SendTLS: boolean }, log: Logger): SendTls | undefined {
    const given = PARTS.filter((p) => config[p].trim() !== '');
    if (!config.SendTLS) {
      if (given.length > 0)
        throw new ConfigError(
          `${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} given but SendTLS is false: set SendTLS true to send over TLS, or remove ${given.length === 1 ? 'it' : 'them'}`,
        );
      return undefined;
    }
    if ((config.SendCert.trim() === '') !== (config.SendKey.trim() === ''))
      throw new ConfigError(
        'SendCert and SendKey go together: the client certificate needs its key, and the key its certificate',
      );
    try {
      return new SendTls(config, log);
    } catch (e) {
      throw new ConfigError(describeError(e));
    }
  }

  /** The options of a new connection to `host`: the files as they are now (or the last ones that loaded). */
  connectOptions(host: string): ConnectionOptions {
    try {
      this.current = this.read();
      if (this.failing !== undefined) this.log.info('syslog sender: RemoteCA, SendCert and SendKey load again');
      this.failing = undefined;
    } catch (e) {
      const why = describeError(e);
      if (why !== this.failing)
        this.log.warn(`syslog sender: ${why}; the previous TLS files stay in use until they load`);
      this.failing = why;
    }
    return { ...this.current, minVersion: 'TLSv1.2', ...(isIP(host) === 0 ? { servername: host } : {}) };
  }

  private read(): SecureContextOptions {
    const text = (part: Part): string | undefined => {
      const s = sourceOf(this.config[part]);
      if (!s) return undefined;
      try {
        return pemText(s);
      } catch (e) {
        throw new Error(`${part} '${s.kind === 'file' ? s.path : ''}' ${(e as Error).message}`);
      }
    };
    const ca = text('RemoteCA');
    const cert = text('SendCert');
    const key = text('SendKey');
    for (const [part, pem] of [
      ['RemoteCA', ca],
      ['SendCert', cert],
    ] as const) {
      if (pem === undefined) continue;
      try {
        new X509Certificate(pem);
      } catch (e) {
        throw new Error(`${part} is not a PEM certificate (${describeError(e)})`);
      }
    }
    const options: SecureContextOptions = {
      ...(ca === undefined ? {} : { ca }),
      ...(cert === undefined ? {} : { cert, key }),
    };
    try {
      createSecureContext(options);
    } catch (e) {
      // both certificates parsed above: what fails now is the key (unreadable, or not SendCert's)
      const m = describeError(e);
      throw new Error(
        /key values mismatch/i.test(m) ? 'SendKey is not the key of SendCert' : `SendKey does not load (${m})`,
      );
    }
    return options;
  }
}
