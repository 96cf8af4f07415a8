/**
 * The receiver's stream listener: TCP, or TLS (RFC 5425) when the receiver has TLSCert/TLSKey and
 * TLS true. Connections are accepted by a plain TCP server so that AllowFrom refuses a source before
 * anything else happens — no TLS handshake, no byte read; an allowed connection is handed to the TLS
 * server (which never listens itself, and takes a reloaded certificate through ServerTls.watch).
 *
 * Framing is RFC 6587's on TCP and on TLS alike, detected per frame: RFC 5425 asks for octet
 * counting on TLS, but rsyslog's omfwd sends LF-terminated frames over gtls unless told otherwise
 * (TCP_Framing), and rsyslog's own imtcp takes both; so does this listener. A refused TLS handshake
 * (wrong or missing client certificate, plain text on the TLS port, a client that does not trust
 * us) closes only that connection and is counted; its reason is logged once per distinct reason.
 */
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import type { TLSSocket, Server as TlsServer } from 'node:tls';
import { createServer as createTlsServer } from 'node:tls';
import { describeError } from '../../protocol/errors.js';
import type { ServerTls } from '../net/server-tls.js';
import { tlsErrorText } from '../net/server-tls.js';
import type { Logger } from '../observe/logger.js';
import type { AllowList } from './allow-from.js';
import { sourceAddress } from './allow-from.js';
import { FrameDecoder } from './framing.js';

/** A TLS handshake that has not finished by then is given up (it would hold one of MaxConnections). */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Distinct handshake-failure reasons logged as warnings; past that, they are only counted. */
const REASONS_LOGGED = 50;

export interface StreamCounters {
  received: number;
  invalid: number;
  connections: number;
  tlsRefused: number;
}

interface ListenerBase {
  maxMessageBytes: number;
  maxConnections: number;
  tls?: ServerTls;
  allow?: AllowList;
  /** A source refused by AllowFrom. */
  refuse(source: string): void;
}

/**
 * The frames handed on and not yet passed on by the hive: past its limit the listener stops reading
 * (TCP's window slows the sender) until the hive has caught up, instead of holding an unbounded
 * backlog in memory.
 */
export interface Backlog {
  full(): boolean;
  /** `resume` is called once, when the backlog has fallen back below its low mark. */
  whenDrained(resume: () => void): void;
}

/** Either RFC 6587 frames, each handed to `frame`, or a connection served by `session` itself (RELP). */
export type StreamListenerOptions = ListenerBase &
  (
    | { frame(bytes: Buffer, remoteAddress: string): void; backlog?: Backlog; session?: undefined }
    | { session(socket: Socket, remoteAddress: string): void; frame?: undefined; backlog?: undefined }
  );

export interface StreamListener {
  server: Server;
  close(): Promise<void>;
}

export function streamListener(opts: StreamListenerOptions, counters: StreamCounters, log: Logger): StreamListener {
  const sockets = new Set<Socket>();
  const kind = opts.tls ? 'TLS' : 'TCP';
  const serve = (socket: Socket, remote: string): void => {
    if (opts.session) return opts.session(socket, remote);
    const frame = opts.frame;
    const backlog = opts.backlog;
    const decoder = new FrameDecoder(opts.maxMessageBytes);
    const resume = (): void => void socket.resume();
    // a TLS socket is a second socket over the accepted one: its errors (a reset) need a listener too
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const f of decoder.push(chunk)) frame(f, remote);
      } catch (e) {
        counters.invalid++;
        log.warn(`syslog ${kind} frame from ${remote} refused (${describeError(e)}); connection closed`);
        socket.destroy();
        return;
      }
      if (backlog?.full()) {
        socket.pause();
        backlog.whenDrained(resume);
      }
    });
  };
  let tlsServer: TlsServer | undefined;
  if (opts.tls) {
    tlsServer = createTlsServer({ ...opts.tls.serverOptions(), handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
    tlsServer.on('secureConnection', (socket: TLSSocket) => serve(socket, socket.remoteAddress ?? ''));
    const logged = new Set<string>();
    tlsServer.on('tlsClientError', (e: Error, socket: TLSSocket) => {
      counters.tlsRefused++;
      const reason = tlsErrorText(e);
      const line = `syslog TLS handshake from ${sourceAddress(socket.remoteAddress ?? '?')} refused: ${reason}`;
      if (logged.has(reason) || logged.size >= REASONS_LOGGED) {
        log.debug(line);
      } else {
        logged.add(reason);
        log.warn(`${line} (logged once per reason; tlsRefused counts them all)`);
      }
    });
    opts.tls.watch(tlsServer, log);
  }
  const server = createServer((socket) => {
    const remote = socket.remoteAddress ?? '';
    socket.on('error', () => undefined);
    if (opts.allow && !opts.allow.allows(remote)) {
      opts.refuse(sourceAddress(remote));
      socket.destroy();
      return;
    }
    counters.connections++;
    sockets.add(socket);
    socket.on('close', () => {
      counters.connections--;
      sockets.delete(socket);
    });
    if (tlsServer) tlsServer.emit('connection', socket);
    else serve(socket, remote);
  });
  server.maxConnections = opts.maxConnections;
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        opts.tls?.close();
        if (!server.listening) return resolve();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
