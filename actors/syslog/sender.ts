/**
 * The syslog sender: each string of a Data key is one message of the severity the key names
 * (error, warn, info, critical; others debug), or all Data as one JSON message with SendJSON. UDP
 * sends a datagram per message; TCP (which wins over UDP) keeps one connection, reconnects with
 * backoff, and holds up to SendBuffer messages while it is down — beyond that they are dropped and
 * counted, never silently.
 */
import { createSocket } from 'node:dgram';
import type { Socket as UdpSocket } from 'node:dgram';
import { connect as tcpConnect } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { hostname } from 'node:os';
import type { ValueMap } from '../../protocol/message.js';
import type { Logger } from '../shared/logger.js';
import type { OutgoingMessage } from './format.js';
import { formatRfc3164, formatRfc5424, frameLf, frameOctetCounted } from './format.js';
import { Severity, USER_FACILITY, severityOfKey } from './severity.js';

export interface SenderOptions {
  host: string;
  port: number;
  tcp: boolean;
  tls: boolean;
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
}

export class SyslogSender {
  readonly counters: SenderCounters = { sent: 0, dropped: 0, buffered: 0 };
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

  /** Lines for one message's Data. */
  lines(data: ValueMap, date = new Date()): string[] {
    const base = { facility: USER_FACILITY, hostname: this.host, tag: this.opts.tag, pid: process.pid, date };
    const fmt = (m: OutgoingMessage): string => (this.opts.format === 'RFC5424' ? formatRfc5424(m) : formatRfc3164(m));
    if (this.opts.json) return [fmt({ ...base, severity: Severity.informational, message: JSON.stringify(data) })];
    const out: string[] = [];
    for (const [key, values] of Object.entries(data)) for (const v of values) out.push(fmt({ ...base, severity: severityOfKey(key), message: v }));
    return out;
  }

  /** Sends the messages of one Data; resolves when handed to the socket (or buffered). */
  async send(data: ValueMap): Promise<number> {
    const lines = this.lines(data);
    if (!this.opts.tcp) {
      await Promise.all(lines.map((l) => new Promise<void>((resolve, reject) => this.udp!.send(Buffer.from(l, 'utf8'), this.opts.port, this.opts.host, (e) => (e ? reject(e) : resolve())))));
      this.counters.sent += lines.length;
      return lines.length;
    }
    for (const l of lines) {
      const frame = this.opts.framing === 'lf' ? frameLf(l) : frameOctetCounted(l);
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
    const onConnect = (): void => {
      this.connected = true;
      this.backoffMs = 100;
      for (const f of this.pending.splice(0)) {
        socket.write(f);
        this.counters.sent++;
      }
      this.counters.buffered = 0;
    };
    const socket = this.opts.tls ? tlsConnect({ host: this.opts.host, port: this.opts.port }, onConnect) : tcpConnect({ host: this.opts.host, port: this.opts.port }, onConnect);
    this.socket = socket;
    socket.setKeepAlive(true);
    socket.on('error', (e) => this.log.debug(`syslog sender connection: ${e.message}`));
    socket.on('close', () => {
      if (this.connected) this.log.warn(`syslog sender lost its connection to ${this.opts.host}:${this.opts.port}; reconnecting`);
      this.connected = false;
      if (this.closed) return;
      setTimeout(() => this.connect(), this.backoffMs).unref();
      this.backoffMs = Math.min(this.backoffMs * 2, 10_000);
    });
  }

  close(): Promise<void> {
    this.closed = true;
    return new Promise((resolve) => {
      if (this.udp) this.udp.close(() => resolve());
      else if (this.socket) this.socket.end(() => resolve());
      else resolve();
    });
  }
}
