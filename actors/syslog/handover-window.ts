/**
 * The acknowledged hand-over of one connection's messages (README, Syslog: reliable delivery), for
 * RELP and for TCP with TCPAck: each message is executed on OUTPUTCHANNEL, and a refusal that may
 * pass (no listener yet, 503, 504, 507: isRetryableCode, and 404) is tried again with backoff while
 * the message holds its place; a refusal that will not pass (400, 413, 422, an undecodable message)
 * is final. At most `window` messages are in hand-over at once; past that the socket is paused and
 * later messages wait here in order, so a slow hive slows the sender through TCP and nothing is
 * dropped. When a RELP connection closes, its hand-overs stop: the client sends every unanswered
 * frame again. Plain TCP (TCPAck) has no acknowledgement and no resend: what was read is handed over
 * to the end, as long as the receiver runs.
 */
import type { Socket } from 'node:net';
import { describeError } from '../../protocol/errors.js';

/** What became of one try of a hand-over. */
type Handover = { ok: true } | { ok: false; retry: boolean; reason: string };
/** One try of a message's hand-over (called again while it is refused for a reason that may pass). */
export type HandoverAttempt = () => Promise<Handover>;
/** The end of a message's hand-over: accepted, refused for good (why), or abandoned with its connection (undefined). */
export type HandoverEnd = { ok: true } | { ok: false; reason: string } | undefined;

export interface WindowCounters {
  /** Messages in hand-over now, on every connection. */
  inFlight: number;
  /** Hand-overs tried again after a refusal that may pass. */
  retries: number;
}

export interface HandoverWindowOptions {
  window: number;
  /** Decodes one message for its hand-over; a string when it cannot be handed over at all. */
  prepare(data: Buffer, remote: string): HandoverAttempt | string;
  counters: WindowCounters;
  /** Logs a line at warn once per distinct reason, at debug after that. */
  warnOnce(reason: string, line: string): void;
  /** How the retry warning names what waits, e.g. 'syslog RELP: … the frame stays unanswered'. */
  waitingText: string;
  /**
   * Plain TCP (TCPAck): what was read is handed over even after the peer closed — nobody would send
   * it again — for as long as this says the receiver runs. Undefined (RELP): abandoned with the
   * connection, as the client resends every unanswered frame.
   */
  keepAfterClose?: () => boolean;
}

/** Waits between tries of a refused hand-over: doubling from the first to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_LAST_MS = 5_000;

interface Pending {
  data: Buffer;
  done(end: HandoverEnd): void;
}

export class HandoverWindow {
  private inFlight = 0;
  private readonly waiting: Pending[] = [];
  /** Set when hand-overs stop: the connection closed (RELP), or the receiver stopped (TCPAck). */
  private closed = false;
  /** The connection closed: nothing more is read, and the socket is not resumed. */
  private gone = false;

  constructor(
    private readonly socket: Socket,
    private readonly remote: string,
    private readonly opts: HandoverWindowOptions,
    /** Called after each hand-over ends (the RELP session answers a pending close once idle). */
    private readonly settled: () => void = () => undefined,
  ) {
    socket.once('close', () => {
      this.gone = true;
      if (!opts.keepAfterClose) this.close();
    });
  }

  /** Whether hand-overs go on: not stopped, and for plain TCP while the receiver runs. */
  private get stopped(): boolean {
    if (!this.closed && this.gone && this.opts.keepAfterClose && !this.opts.keepAfterClose()) this.close();
    return this.closed;
  }

  /** Hands `data` over now, or after the messages before it when the window is full; `done` gets its end. */
  submit(data: Buffer, done: (end: HandoverEnd) => void): void {
    if (this.stopped) return done(undefined);
    if (this.inFlight >= this.opts.window || this.waiting.length > 0) this.waiting.push({ data, done });
    else this.start({ data, done });
  }

  /** No message in hand-over and none waiting. */
  get idle(): boolean {
    return this.inFlight === 0 && this.waiting.length === 0;
  }

  /** After a read: stops reading while the window is full (backpressure through TCP). */
  pauseIfFull(): void {
    if (!this.gone && (this.inFlight >= this.opts.window || this.waiting.length > 0)) this.socket.pause();
  }

  close(): void {
    this.closed = true;
    for (const p of this.waiting.splice(0)) p.done(undefined);
  }

  private start(p: Pending): void {
    this.inFlight++;
    this.opts.counters.inFlight++;
    void this.run(p.data)
      .catch((e: unknown): HandoverEnd => ({ ok: false, reason: describeError(e) }))
      .then((end) => {
        this.inFlight--;
        this.opts.counters.inFlight--;
        p.done(this.stopped ? undefined : end);
        while (!this.stopped && this.waiting.length > 0 && this.inFlight < this.opts.window)
          this.start(this.waiting.shift()!);
        if (!this.gone && this.socket.isPaused() && this.inFlight < this.opts.window && this.waiting.length === 0)
          this.socket.resume();
        this.settled();
      });
  }

  private async run(data: Buffer): Promise<HandoverEnd> {
    const attempt = this.opts.prepare(data, this.remote);
    if (typeof attempt === 'string') return { ok: false, reason: attempt };
    let wait = RETRY_FIRST_MS;
    for (;;) {
      const r = await attempt();
      if (r.ok) return r;
      if (!r.retry) return { ok: false, reason: r.reason };
      if (this.stopped) return undefined;
      this.opts.counters.retries++;
      this.opts.warnOnce(
        r.reason,
        `${this.opts.waitingText.replace('…', `hand-over refused (${r.reason});`)} and it is tried again every ${RETRY_LAST_MS / 1000} s at most while the sender waits (logged once per reason)`,
      );
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      if (this.stopped) return undefined;
      wait = Math.min(wait * 2, RETRY_LAST_MS);
    }
  }
}
