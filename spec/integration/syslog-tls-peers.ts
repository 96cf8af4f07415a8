/**
 * Node-made peers of the syslog TLS and AllowFrom tests: a TLS client that sends frames (with or
 * without a client certificate), plain TCP and UDP senders bound to a chosen loopback address
 * (127.0.0.2 is this host too on Linux, with no setup), and a TLS syslog server that records frames.
 */
import { createSocket } from 'node:dgram';
import { connect as tcpConnect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server, TLSSocket } from 'node:tls';
import { connect as tlsConnect, createServer } from 'node:tls';
import { FrameDecoder } from '../../actors/syslog/framing.js';
import type { HiveNode } from '../../node/node.js';
import { certPath, certText } from '../certs.js';

/** The status figures of one service of a test node. */
export const status = (node: HiveNode, name: string): Record<string, unknown> =>
  node.services.find((s) => s.name === name)!.running.status();

/** A TLS receiver's parameters with the test CA's server certificate. */
export const tlsFiles = { TLS: true, TLSCert: certPath('server.pem'), TLSKey: certPath('server.key') };

/** What a TLS client saw: whether its handshake succeeded and the error that ended it, if any. */
export interface TlsOutcome {
  connected: boolean;
  error?: string;
}

/**
 * Connects over TLS to 127.0.0.1:port trusting our CA (or `ca`), writes `payload` once connected,
 * waits `lingerMs` for a refusal (TLS 1.3 refuses a client certificate after the client's side of
 * the handshake), and ends.
 */
export function tlsSend(
  port: number,
  payload: string,
  opts: { cert?: string; key?: string; ca?: string; localAddress?: string; lingerMs?: number } = {},
): Promise<TlsOutcome> {
  return new Promise((resolve) => {
    const outcome: TlsOutcome = { connected: false };
    const socket: TLSSocket = tlsConnect(
      {
        host: '127.0.0.1',
        port,
        ca: opts.ca ?? certText('ca.pem'),
        ...(opts.cert ? { cert: certText(opts.cert), key: certText(opts.key!) } : {}),
        ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      },
      () => {
        outcome.connected = true;
        socket.write(payload);
        setTimeout(() => socket.end(), opts.lingerMs ?? 200);
      },
    );
    socket.on('error', (e) => {
      outcome.error = e.message;
    });
    socket.on('close', () => resolve(outcome));
  });
}

/** Sends one UDP datagram from `from` to 127.0.0.1:port. */
export function udpFrom(from: string, port: number, text: string): Promise<void> {
  const udp = createSocket('udp4');
  return new Promise((resolve, reject) => {
    udp.bind(0, from, () => udp.send(text, port, '127.0.0.1', (e) => (udp.close(), e ? reject(e) : resolve())));
  });
}

/** Opens a TCP connection from `from`, writes `text`, and resolves how it ended: 'closed by peer' or 'open' (ended by us after `waitMs`). */
export function tcpFrom(from: string, port: number, text: string, waitMs = 300): Promise<'closed by peer' | 'open'> {
  return new Promise((resolve) => {
    let peerClosed = false;
    let ended = false;
    const socket = tcpConnect({ host: '127.0.0.1', port, localAddress: from }, () => {
      socket.write(text);
      setTimeout(() => {
        ended = true;
        if (!peerClosed) socket.end();
      }, waitMs);
    });
    socket.on('error', () => {
      peerClosed = true;
    });
    socket.on('end', () => {
      if (!ended) peerClosed = true;
    });
    socket.on('close', () => resolve(peerClosed ? 'closed by peer' : 'open'));
  });
}

/** A TLS syslog server on 127.0.0.1 with server.pem, recording the frames it receives (RFC 6587 framing). */
export interface TlsSyslogServer {
  port: number;
  frames: string[];
  /** Raw bytes, to see the framing used. */
  raw: string[];
  refused: string[];
  server: Server;
  close(): Promise<void>;
}

export function tlsSyslogServer(
  opts: { requireClientCert?: boolean; cert?: string; key?: string } = {},
): Promise<TlsSyslogServer> {
  const frames: string[] = [];
  const raw: string[] = [];
  const refused: string[] = [];
  const open = new Set<TLSSocket>();
  const server = createServer(
    {
      cert: certText(opts.cert ?? 'server.pem'),
      key: certText(opts.key ?? 'server.key'),
      ...(opts.requireClientCert ? { ca: certText('ca.pem'), requestCert: true, rejectUnauthorized: true } : {}),
    },
    (socket) => {
      const decoder = new FrameDecoder();
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('data', (chunk: Buffer) => {
        raw.push(chunk.toString());
        for (const f of decoder.push(chunk)) frames.push(f.toString());
      });
      socket.on('error', () => undefined);
    },
  );
  server.on('tlsClientError', (e) => refused.push(e.message));
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        frames,
        raw,
        refused,
        server,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            for (const s of open) s.destroy();
          }),
      }),
    );
  });
}
