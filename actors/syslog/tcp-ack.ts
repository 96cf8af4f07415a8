/**
 * TCP (or TLS) with TCPAck (README, Syslog: reliable delivery): RFC 6587 frames as on any stream
 * connection, but each message is handed over with acknowledged delivery (handover-window.ts), and
 * the connection is not read while RELPWindow messages wait for the hive — backpressure through TCP's
 * window instead of drops. Plain TCP has no acknowledgement: the sender is never told, so a message in
 * hand-over when the node dies is lost; RELP is the protocol that closes that gap.
 */
import type { Socket } from 'node:net';
import { describeError } from '../../protocol/errors.js';
import type { Logger } from '../observe/logger.js';
import type { HandoverAttempt, WindowCounters } from './handover-window.js';
import { HandoverWindow } from './handover-window.js';
import { FrameDecoder } from './framing.js';

export interface TcpAckCounters {
  /** Messages a refusal that will not pass dropped (400, 413, 422; an empty one is counted invalid too). */
  tcpAckRefused: number;
}

export interface TcpAckOptions {
  window: number;
  maxMessageBytes: number;
  prepare(data: Buffer, remote: string): HandoverAttempt | string;
  counters: TcpAckCounters;
  windowCounters: WindowCounters;
  /** Counted invalid: a broken stream. */
  invalid(): void;
  log: Logger;
  warnOnce(reason: string, line: string): void;
  kind: 'TCP' | 'TLS';
  /** Whether the receiver runs: what a closed connection had sent is handed over until it stops. */
  running(): boolean;
}

export function serveTcpAck(socket: Socket, remote: string, opts: TcpAckOptions): void {
  const decoder = new FrameDecoder(opts.maxMessageBytes);
  const window = new HandoverWindow(socket, remote, {
    window: opts.window,
    prepare: opts.prepare,
    counters: opts.windowCounters,
    warnOnce: opts.warnOnce,
    waitingText: `syslog ${opts.kind} (TCPAck): … the connection is not read meanwhile (tcpAckRetries counts it)`,
    keepAfterClose: opts.running,
  });
  const end = (e: { ok: true } | { ok: false; reason: string } | undefined): void => {
    if (e && !e.ok) {
      opts.counters.tcpAckRefused++;
      opts.warnOnce(
        e.reason,
        `syslog ${opts.kind} (TCPAck): a message from ${remote} was refused for good (${e.reason}) and dropped (logged once per reason; tcpAckRefused counts them)`,
      );
    }
  };
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    try {
      for (const frame of decoder.push(chunk)) window.submit(frame, end);
    } catch (e) {
      opts.invalid();
      opts.log.warn(`syslog ${opts.kind} frame from ${remote} refused (${describeError(e)}); connection closed`);
      window.close();
      socket.destroy();
      return;
    }
    window.pauseIfFull();
  });
}
