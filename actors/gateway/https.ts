/**
 * The gateway's TLS handshakes, counted for its status (and so for /metrics): every refused handshake
 * is the client's problem, not the gateway's — plain HTTP sent to the HTTPS port, a protocol older
 * than TLS 1.2, a client certificate missing, expired or from a CA that TLSCA does not name, a
 * handshake left unfinished past ClientTimeout, a client hanging up half-way — so each
 * is logged at debug only (a port scan must not flood the log at warn) and counted by reason, and its
 * connection closed: Node closes most itself, but not one whose handshake timed out (measured: it
 * stayed open until the client gave up).
 */
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import type { Logger } from '../observe/logger.js';

/** The gateway's status figures of its TLS listener. */
export interface HandshakeFigures {
  tlsHandshakes: number;
  tlsHandshakeFailures: number;
  /** Of the failures: plain HTTP (or other clear text) sent to the HTTPS port. */
  tlsPlainText: number;
  /** Of the failures: a protocol older than TLS 1.2 offered. */
  tlsOldProtocol: number;
  /** Of the failures: TLSClientAuth require and no client certificate. */
  tlsNoCertificate: number;
  /** Of the failures: a client certificate that did not verify against TLSCA (expired, other CA, ...). */
  tlsBadCertificate: number;
  /** Of the failures: the handshake not finished within ClientTimeout (a stalled or truncated one). */
  tlsHandshakeTimeouts: number;
}

type Reason = 'tlsPlainText' | 'tlsOldProtocol' | 'tlsNoCertificate' | 'tlsBadCertificate' | 'tlsHandshakeTimeouts';

/** OpenSSL's codes (as Node reports them) for each counted reason; anything else (a client hanging up mid-handshake) is a failure only. */
const REASONS: Record<string, Reason> = {
  ERR_SSL_HTTP_REQUEST: 'tlsPlainText',
  ERR_SSL_HTTPS_PROXY_REQUEST: 'tlsPlainText',
  ERR_SSL_WRONG_VERSION_NUMBER: 'tlsPlainText',
  ERR_SSL_UNSUPPORTED_PROTOCOL: 'tlsOldProtocol',
  ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE: 'tlsNoCertificate',
  ERR_TLS_HANDSHAKE_TIMEOUT: 'tlsHandshakeTimeouts',
};

/**
 * Counts the server's handshakes from now on; `debug` (LOGLEVEL debug or trace) logs each failure.
 * A client certificate that does not verify is refused by Node after the handshake's last message,
 * so its failure arrives as a hang-up: the socket's authorizationError says why.
 */
export function countHandshakes(
  server: TlsServer,
  where: string,
  log: Logger,
  debug: boolean,
): { figures(): HandshakeFigures } {
  const figures: HandshakeFigures = {
    tlsHandshakes: 0,
    tlsHandshakeFailures: 0,
    tlsPlainText: 0,
    tlsOldProtocol: 0,
    tlsNoCertificate: 0,
    tlsBadCertificate: 0,
    tlsHandshakeTimeouts: 0,
  };
  server.on('secureConnection', () => figures.tlsHandshakes++);
  server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
    socket.destroy();
    figures.tlsHandshakeFailures++;
    // null (Node's initial value) unless the client certificate failed verification, then its code
    const refused = socket.authorizationError as unknown as string | null | undefined;
    const reason = refused ? 'tlsBadCertificate' : REASONS[err.code ?? ''];
    if (reason) figures[reason]++;
    if (debug)
      log.debug(
        `${where}: TLS handshake from ${socket.remoteAddress ?? 'a closed connection'} refused: ${refused ? `client certificate ${refused}` : (err.code ?? err.message)}`,
      );
  });
  return { figures: () => ({ ...figures }) };
}
