/**
 * The RELP sender (SendRELP; README, Syslog: reliable delivery): one connection to RemoteIP:RemotePort
 * (rsyslog imrelp), TLS with SendTLS. Every message is kept until the server answers its frame
 * `200`; the hive's caller is answered only then. At most RELPWindow frames are unanswered at once;
 * the rest wait, up to SendBuffer messages in all (beyond that a message is refused at once, 429,
 * and counted in sendDropped — the caller knows, nothing is lost silently).
 *
 * When the connection breaks (the server restarted, a network fault, a `serverclose` hint), every
 * unanswered frame is sent again, first, on the next connection, with new transaction numbers —
 * the server may have stored some of them before the break, so a break can duplicate messages
 * (counted in sendResent), never lose them. A frame the server answers with an error code is
 * refused to the caller (502, counted in sendRefused).
 */
import { connect as tcpConnect } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { OverloadedError, UnavailableError, UpstreamError } from '../../protocol/errors.js';
import type { Logger } from '../observe/logger.js';
import { tlsErrorText } from '../net/server-tls.js';
import type { RelpFrame } from './relp-frame.js';
import { RelpDecoder, encodeRelpFrame, nextTxnr, parseRelpResponse } from './relp-frame.js';
import { offersProblem, ourOffers, parseOffers } from './relp-offers.js';
import type { SendTls } from './send-tls.js';

export interface RelpSenderOptions {
  host: string;
  port: number;
  tls?: SendTls;
  /** RELPWindow. */
  window: number;
  /** SendBuffer: messages kept in all (unanswered and waiting). */
  buffer: number;
  /** The largest response accepted from the server. */
  maxDataBytes: number;
  /** How long a session may go unanswered while messages wait (default ANSWER_TIMEOUT_MS). */
  answerTimeoutMs?: number;
}

export interface RelpSenderCounters {
  /** Messages the server answered 200. */
  sent: number;
  /** Messages refused at once because SendBuffer was full. */
  dropped: number;
  /** Messages kept now (unanswered and waiting). */
  buffered: number;
  /** Frames sent again after a break. */
  resent: number;
  /** Messages the server answered with an error code. */
  refused: number;
  /** Connection attempts that failed. */
  failures: number;
  /** Why the last attempt failed, while no session is up. */
  error?: string;
}

interface Kept {
  data: Buffer;
  resolve(): void;
  reject(e: Error): void;
}

/** Backoff of reconnects: doubling from the first to the last. */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_LAST_MS = 10_000;
/** How long close() waits for unanswered messages before it refuses them. */
const CLOSE_WAIT_MS = 2_000;
/**
 * A session whose server answered nothing for this long while messages wait for answers is given up
 * and opened again (librelp's default timeout): a server that hangs, or a peer gone without a FIN,
 * would otherwise hold the messages until TCP keepalive noticed, hours later.
 */
const ANSWER_TIMEOUT_MS = 90_000;
const ANSWER_CHECK_MS = 5_000;

export class RelpSender {
  readonly counters: RelpSenderCounters = { sent: 0, dropped: 0, buffered: 0, resent: 0, refused: 0, failures: 0 };
  private socket: Socket | undefined;
  private ready = false;
  private closed = false;
  private txnr = 1;
  private openTxnr = 0;
  private readonly waiting: Kept[] = [];
  private readonly unacked = new Map<number, Kept>();
  private backoffMs = BACKOFF_FIRST_MS;
  private idle: (() => void) | undefined;
  /** When the server last answered, or when the first unanswered frame went out. */
  private lastAnswer = Date.now();
  private readonly watchdog: NodeJS.Timeout;

  constructor(
    private readonly opts: RelpSenderOptions,
    private readonly log: Logger,
  ) {
    this.connect();
    const timeout = opts.answerTimeoutMs ?? ANSWER_TIMEOUT_MS;
    this.watchdog = setInterval(
      () => {
        if (this.ready && this.unacked.size > 0 && Date.now() - this.lastAnswer > timeout) {
          this.log.warn(
            `syslog RELP sender: ${this.target()} answered nothing for ${timeout / 1000} s with ${this.unacked.size} message(s) unanswered; opening a new session`,
          );
          this.socket?.destroy();
        }
      },
      Math.min(ANSWER_CHECK_MS, timeout / 2),
    );
    this.watchdog.unref();
  }

  /** Sends the messages; resolves once the server answered every one 200. */
  async send(lines: string[]): Promise<number> {
    if (this.closed) throw new UnavailableError('the syslog sender is stopping');
    if (this.waiting.length + this.unacked.size + lines.length > this.opts.buffer) {
      this.counters.dropped += lines.length;
      throw new OverloadedError(
        `the RELP sender holds ${this.waiting.length + this.unacked.size} messages not yet acknowledged by ${this.target()} (SendBuffer ${this.opts.buffer}); try again later`,
      );
    }
    const all = lines.map(
      (l) =>
        new Promise<void>((resolve, reject) => this.waiting.push({ data: Buffer.from(l, 'utf8'), resolve, reject })),
    );
    this.counted();
    this.pump();
    await Promise.all(all);
    return lines.length;
  }

  private counted(): void {
    this.counters.buffered = this.waiting.length + this.unacked.size;
    if (this.counters.buffered === 0) this.idle?.();
  }

  /** Sends waiting messages while the window has room. */
  private pump(): void {
    const socket = this.socket;
    if (!this.ready || !socket) return;
    if (this.unacked.size >= this.opts.window || this.waiting.length === 0) return;
    if (this.unacked.size === 0) this.lastAnswer = Date.now();
    socket.cork();
    while (this.unacked.size < this.opts.window && this.waiting.length > 0) {
      const kept = this.waiting.shift()!;
      const txnr = this.take();
      this.unacked.set(txnr, kept);
      socket.write(encodeRelpFrame(txnr, 'syslog', kept.data));
    }
    socket.uncork();
  }

  private take(): number {
    const t = this.txnr;
    this.txnr = nextTxnr(t);
    return t;
  }

  private connect(): void {
    if (this.closed) return;
    const { host, port } = this.opts;
    let lastError: Error | undefined;
    let opened = false;
    const decoder = new RelpDecoder(this.opts.maxDataBytes);
    const onConnect = (): void => {
      this.txnr = 1;
      this.openTxnr = this.take();
      socket.write(encodeRelpFrame(this.openTxnr, 'open', ourOffers()));
    };
    const socket = this.opts.tls
      ? tlsConnect({ ...this.opts.tls.connectOptions(host), host, port }, onConnect)
      : tcpConnect({ host, port }, onConnect);
    this.socket = socket;
    socket.setKeepAlive(true);
    socket.setNoDelay(true);
    socket.on('error', (e) => {
      lastError = e;
      this.log.debug(`syslog RELP sender connection: ${e.message}`);
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of decoder.push(chunk)) {
          this.onFrame(frame);
          opened ||= this.ready;
        }
      } catch (e) {
        lastError = e as Error;
        socket.destroy();
      }
    });
    socket.on('close', () => {
      const wasReady = this.ready;
      this.ready = false;
      if (this.socket === socket) this.socket = undefined;
      // every unanswered frame goes first on the next connection, in its order
      const back = [...this.unacked.values()];
      this.unacked.clear();
      this.waiting.unshift(...back);
      this.counters.resent += back.length;
      if (wasReady && !this.closed)
        this.log.warn(
          `syslog RELP sender lost its session with ${this.target()}; reconnecting, ${back.length} unacknowledged message(s) will be sent again`,
        );
      if (!opened && !this.closed) this.failed(lastError);
      if (this.closed) return this.refuseAll('the syslog sender stopped before the server acknowledged the message');
      setTimeout(() => this.connect(), this.backoffMs).unref();
      this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_LAST_MS);
    });
  }

  /** One frame from the server: the open's answer, or a message's. Throws when the session cannot go on. */
  private onFrame(frame: RelpFrame): void {
    if (frame.command === 'serverclose') throw new Error('the server closes the session (serverclose)');
    if (frame.command !== 'rsp') throw new Error(`the server sent '${frame.command}', not a response`);
    const rsp = parseRelpResponse(frame.data);
    if (frame.txnr === this.openTxnr && !this.ready) {
      if (rsp.code !== 200) throw new Error(`the server refused the session: ${rsp.code} ${rsp.text}`);
      const problem = offersProblem(parseOffers(Buffer.from(rsp.data, 'utf8')));
      if (problem) throw new Error(problem);
      this.ready = true;
      this.backoffMs = BACKOFF_FIRST_MS;
      if (this.counters.error !== undefined) this.log.info(`syslog RELP sender connected to ${this.target()} again`);
      delete this.counters.error;
      this.pump();
      return;
    }
    this.lastAnswer = Date.now();
    const kept = this.unacked.get(frame.txnr);
    if (!kept) throw new Error(`the server answered transaction ${frame.txnr}, which is not waiting for an answer`);
    this.unacked.delete(frame.txnr);
    if (rsp.code === 200) {
      this.counters.sent++;
      kept.resolve();
    } else {
      this.counters.refused++;
      kept.reject(new UpstreamError(`the RELP server ${this.target()} refused the message: ${rsp.code} ${rsp.text}`));
    }
    this.counted();
    this.pump();
  }

  private failed(error: Error | undefined): void {
    this.counters.failures++;
    const reason = error ? tlsErrorText(error) : 'the connection closed before the RELP session opened';
    if (reason !== this.counters.error)
      this.log.warn(
        `syslog RELP sender cannot open a session with ${this.target()}: ${reason}; messages are kept (up to SendBuffer ${this.opts.buffer}) and retried (logged once until the reason changes)`,
      );
    this.counters.error = reason;
  }

  private refuseAll(why: string): void {
    const all = [...this.waiting.splice(0), ...this.unacked.values()];
    this.unacked.clear();
    for (const k of all) k.reject(new UnavailableError(why));
    this.counted();
  }

  private target(): string {
    return `${this.opts.host}:${this.opts.port} over RELP${this.opts.tls ? ' (TLS)' : ''}`;
  }

  /** Waits a little for unanswered messages, closes the session, and refuses what is left. */
  async close(): Promise<void> {
    if (this.counters.buffered > 0 && this.ready) {
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        setTimeout(resolve, CLOSE_WAIT_MS).unref();
      });
    }
    this.closed = true;
    clearInterval(this.watchdog);
    const socket = this.socket;
    if (!socket) return this.refuseAll('the syslog sender stopped before the server acknowledged the message');
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      if (this.ready && this.unacked.size === 0) {
        // a clean end: the server answers close, then we hang up
        socket.write(encodeRelpFrame(this.take(), 'close'));
        socket.end();
        setTimeout(() => socket.destroy(), CLOSE_WAIT_MS).unref();
      } else {
        socket.destroy();
      }
    });
    this.refuseAll('the syslog sender stopped before the server acknowledged the message');
  }
}
