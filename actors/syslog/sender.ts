/**
 * The syslog sender: each string of a Data key is one message of the severity the key names
 * (error, warn, info, critical; others debug), or all Data as one JSON message with SendJSON, of
 * the most severe severity among its keys (outgoing.ts); empty Data sends nothing. UDP
 * sends a datagram per message; TCP (which wins over UDP) keeps one connection, reconnects with
 * backoff, and holds up to SendBuffer messages while it is down — beyond that they are dropped and
 * counted, never silently. TLS (SendTLS, RFC 5425) is TCP with octet counting through send-tls.ts.
 *
 * A connection that cannot be made — refused, or a TLS handshake that fails (a server certificate
 * RemoteCA does not trust, or one the server refuses from us) — is counted in sendFailures and
 * logged as a warning once per reason, not at every retry; the messages stay buffered and go out
 * when a connection succeeds. On TLS 1.3 a server refuses a client certificate only after our side
 * of the handshake has finished, so the buffer is sent only after the handshake's own duration has
 * passed without a refusal: what was written before the refusal would be lost, unacknowledged.
 */
import { createSocket } from 'node:dgram';
import type { Socket as UdpSocket } from 'node:dgram';
import { connect as tcpConnect } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { hostname } from 'node:os';
import type { ValueMap } from '../../protocol/message.js';
import type { Logger } from '../observe/logger.js';
import type { OutgoingMessage } from './format.js';
import { formatRfc3164, formatRfc5424, frameLf, frameOctetCounted } from './format.js';
import { tlsErrorText } from '../net/server-tls.js';
import type { SendTls } from './send-tls.js';
import { outgoingMessages } from './outgoing.js';

/** Bounds of the wait after a TLS 1.3 handshake for a refusal of our client certificate. */
const REFUSAL_WAIT_MIN_MS = 50;
const REFUSAL_WAIT_MAX_MS = 2_000;

export interface SenderOptions {
  host: string;
  port: number;
  tcp: boolean;
  /** TLS over the TCP connection (SendTLS); octet-counted whatever `framing` says. */
  tls?: SendTls;
  tag: string;
  json: boolean;
  format: 'RFC3164' | 'RFC5424';
  framing: 'octet-counting' | 'lf';
  buffer: number;
}

export interface SenderCounters {
  sent: number;
  dropped: number;
  buffered: number;
  /** Connection attempts that failed (refused, TLS handshake failed). */
  failures: number;
  /** Why the last attempt failed, while no connection is up. */
  error?: string;
}

/** The syslog lines of one request's Data, in SendFormat (outgoing.ts: which messages, of which severity). */
export function formatLines(
  data: ValueMap,
  opts: Pick<SenderOptions, 'format' | 'tag' | 'json'>,
  host: string,
  date = new Date(),
): string[] {
  const fmt = (m: OutgoingMessage): string => (opts.format === 'RFC5424' ? formatRfc5424(m) : formatRfc3164(m));
  return outgoingMessages(data, { hostname: host, tag: opts.tag, pid: process.pid }, opts.json, date).map(fmt);
}

export class SyslogSender {
  readonly counters: SenderCounters = { sent: 0, dropped: 0, buffered: 0, failures: 0 };
  private udp: UdpSocket | undefined;
  private socket: Socket | undefined;
  private connected = false;
  private pending: Buffer[] = [];
  private backoffMs = 100;
  private closed = false;
  private readonly host = hostname();

  constructor(
    private readonly opts: SenderOptions,
    private readonly log: Logger,
  ) {
    if (opts.tcp) this.connect();
    else this.udp = createSocket(opts.host.includes(':') ? 'udp6' : 'udp4');
  }

  /** Lines for one message's Data (outgoing.ts: which messages, of which severity). */
  lines(data: ValueMap, date = new Date()): string[] {
    return formatLines(data, this.opts, this.host, date);
  }

  /** Sends the messages of one Data; resolves when handed to the socket (or buffered). */
  async send(data: ValueMap): Promise<number> {
    const lines = this.lines(data);
    if (!this.opts.tcp) {
      await Promise.all(
        lines.map(
          (l) =>
            new Promise<void>((resolve, reject) =>
              this.udp!.send(Buffer.from(l, 'utf8'), this.opts.port, this.opts.host, (e) =>
                e ? reject(e) : resolve(),
              ),
            ),
        ),
      );
      this.counters.sent += lines.length;
      return lines.length;
    }
    for (const l of lines) {
      const frame = this.opts.framing === 'lf' && !this.opts.tls ? frameLf(l) : frameOctetCounted(l);
      if (this.connected && this.socket) {
        this.socket.write(frame);
        this.counters.sent++;
      } else if (this.pending.length < this.opts.buffer) {
        this.pending.push(frame);
      } else {
        this.counters.dropped++;
      }
    }
    this.counters.buffered = this.pending.length;
    return lines.length;
  }

  private connect(): void {
    if (this.closed) return;
    const began = Date.now();
    let lastError: Error | undefined;
    let handshaken = false;
    let ready = false;
    const onReady = (): void => {
      if (socket.destroyed || this.closed) return;
      ready = true;
      this.connected = true;
      this.backoffMs = 100;
      if (this.counters.error !== undefined) this.log.info(`syslog sender connected to ${this.target()} again`);
      delete this.counters.error;
      for (const f of this.pending.splice(0)) {
        socket.write(f);
        this.counters.sent++;
      }
      this.counters.buffered = 0;
    };
    const onConnect = (): void => {
      const tls = socket as TLSSocket;
      handshaken = true;
      if (this.opts.tls && tls.getProtocol() === 'TLSv1.3') {
        // a refusal of our certificate comes about one round trip after this: wait as long as the handshake took
        setTimeout(onReady, Math.min(REFUSAL_WAIT_MAX_MS, Math.max(REFUSAL_WAIT_MIN_MS, Date.now() - began))).unref();
      } else {
        onReady();
      }
    };
    const { host, port } = this.opts;
    const socket = this.opts.tls
      ? tlsConnect({ ...this.opts.tls.connectOptions(host), host, port }, onConnect)
      : tcpConnect({ host, port }, onConnect);
    this.socket = socket;
    socket.setKeepAlive(true);
    socket.on('error', (e) => {
      lastError = e;
      this.log.debug(`syslog sender connection: ${e.message}`);
    });
    socket.on('close', () => {
      if (this.connected) this.log.warn(`syslog sender lost its connection to ${this.target()}; reconnecting`);
      this.connected = false;
      if (!ready && !this.closed) this.failed(lastError, handshaken);
      if (this.closed) return;
      setTimeout(() => this.connect(), this.backoffMs).unref();
      this.backoffMs = Math.min(this.backoffMs * 2, 10_000);
    });
  }

  /** A connection attempt that failed: counted; logged when its reason is new. */
  private failed(error: Error | undefined, handshaken: boolean): void {
    this.counters.failures++;
    const reason = failureText(error, this.opts.tls !== undefined, handshaken);
    if (reason !== this.counters.error)
      this.log.warn(
        `syslog sender cannot connect to ${this.target()}: ${reason}; messages are kept (up to SendBuffer ${this.opts.buffer}) and retried (logged once until the reason changes)`,
      );
    this.counters.error = reason;
  }

  private target(): string {
    return `${this.opts.host}:${this.opts.port} over ${this.opts.tls ? 'TLS' : 'TCP'}`;
  }

  close(): Promise<void> {
    this.closed = true;
    return new Promise((resolve) => {
      if (this.udp) this.udp.close(() => resolve());
      else if (this.socket && this.connected) this.socket.end(() => resolve());
      else {
        // not connected (refused, mid-handshake, waiting for a refusal): nothing to flush, and end() would wait for a handshake that may never finish
        this.socket?.destroy();
        resolve();
      }
    });
  }
}

/**
 * Why a connection failed, with the parameter to look at when TLS is at fault. A server that closes
 * right after the handshake without an alert (rsyslog's gtls does so for a client certificate it
 * will not take) is refusing us just the same.
 */
function failureText(error: Error | undefined, tls: boolean, handshaken: boolean): string {
  const text = error ? tlsErrorText(error) : 'the connection closed before it was ready';
  if (!tls) return text;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  const clientCert = '(check SendCert and SendKey: it may require a client certificate it trusts)';
  if (/ALERT/.test(code)) return `the server refused the TLS handshake: ${text} ${clientCert}`;
  if (handshaken) return `the server closed the connection right after the TLS handshake: ${text} ${clientCert}`;
  if (/CERT|SIGNATURE|ISSUER|ALTNAME|SELF_SIGNED/.test(code))
    return `the server's certificate is refused: ${text} (check RemoteCA, and that the certificate names RemoteIP)`;
  return text;
}
