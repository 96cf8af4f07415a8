/**
 * One RELP connection at the receiver (README, Syslog: reliable delivery). The client opens the
 * session (`open`, answered with our offers), sends `syslog` frames, and closes it (`close`,
 * answered `rsp 0` once every earlier frame is answered). Transaction numbers must follow each
 * other (1, 2, 3, …), as librelp's server requires; a frame out of order, a command before `open`
 * or a stream that is not RELP closes the connection.
 *
 * A `syslog` frame is answered `200 OK` only once its hand-over is acknowledged (the receiver
 * executes it on OUTPUTCHANNEL: a durable queue answers once the entry is fsynced). A hand-over
 * refused for a reason that may pass (no listener yet, 503, 504, 507: isRetryableCode, and 404) is
 * tried again with backoff while the frame stays unanswered: rsyslog's librelp DISCARDS a frame
 * answered with an error code (src/scrsp.c), so answering 500 for a full queue would lose the
 * message; an unanswered frame is resent by the client after a reconnect instead. Only a refusal
 * that will not pass (400, 413, 422, an undecodable message) is answered `500`.
 *
 * At most `window` frames of a connection are being handed over at once; past that the socket is
 * paused, so a slow hive slows the client through TCP (its own window fills, then its queue), and
 * nothing is dropped.
 */
import type { Socket } from 'node:net';
import { describeError } from '../../protocol/errors.js';
import type { Logger } from '../shared/logger.js';
import type { RelpFrame } from './relp-frame.js';
import { RelpDecoder, encodeRelpFrame, nextTxnr } from './relp-frame.js';
import { offersProblem, ourOffers, parseOffers } from './relp-offers.js';

/** What became of one hand-over. */
export type Handover = { ok: true } | { ok: false; retry: boolean; reason: string };
/** One try of a frame's hand-over (called again while it is refused for a reason that may pass). */
export type HandoverAttempt = () => Promise<Handover>;

export interface RelpCounters {
  /** Frames answered 200. */
  relpAcknowledged: number;
  /** Frames answered 500 (a refusal that will not pass). */
  relpRefused: number;
  /** Hand-overs tried again after a refusal that may pass. */
  relpRetries: number;
  /** Frames being handed over now, on every connection. */
  relpInFlight: number;
}

export interface RelpSessionOptions {
  window: number;
  maxDataBytes: number;
  /** Decodes one frame's message for its hand-over; a string when it cannot be handed over (answered 500). */
  prepare(data: Buffer, remote: string): HandoverAttempt | string;
  counters: RelpCounters;
  /** Counted invalid: a broken stream. */
  invalid(): void;
  log: Logger;
  /** Logs a line at warn once per distinct reason, at debug after that. */
  warnOnce(reason: string, line: string): void;
}

/** Waits between tries of a refused hand-over: doubling from the first to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_LAST_MS = 5_000;

export function serveRelp(socket: Socket, remote: string, opts: RelpSessionOptions): void {
  const decoder = new RelpDecoder(opts.maxDataBytes);
  let expected = 1;
  let opened = false;
  let closed = false;
  let inFlight = 0;
  /** Frames read while the window was full, handed over as it frees. */
  const waiting: RelpFrame[] = [];
  let closing: number | undefined;

  let corked = false;
  const write = (txnr: number, text: string): void => {
    if (closed) return;
    // answers finishing together (a group commit acknowledges many) go out in one write
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(() => {
        corked = false;
        socket.uncork();
      });
    }
    socket.write(encodeRelpFrame(txnr, 'rsp', text));
  };
  const broken = (why: string): void => {
    opts.invalid();
    opts.log.warn(`syslog RELP from ${remote}: ${why}; connection closed`);
    closed = true;
    // the answer that says why (an open refused) goes out before the connection closes
    if (corked) socket.uncork();
    socket.destroy();
  };

  const tryHandover = async (frame: RelpFrame): Promise<string | undefined> => {
    const attempt = opts.prepare(frame.data, remote);
    if (typeof attempt === 'string') return `500 ${attempt}`;
    let wait = RETRY_FIRST_MS;
    for (;;) {
      const r = await attempt();
      if (r.ok) return '200 OK';
      if (!r.retry) return `500 ${r.reason.replace(/\n/g, ' ').slice(0, 76)}`;
      if (closed) return undefined;
      opts.counters.relpRetries++;
      opts.warnOnce(r.reason, `syslog RELP: hand-over refused (${r.reason}); the frame stays unanswered and is tried again every ${RETRY_LAST_MS / 1000} s at most, the client waits (logged once per reason; relpRetries counts them)`);
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      if (closed) return undefined;
      wait = Math.min(wait * 2, RETRY_LAST_MS);
    }
  };

  const startSyslog = (frame: RelpFrame): void => {
    inFlight++;
    opts.counters.relpInFlight++;
    void tryHandover(frame)
      .catch((e: unknown) => `500 ${describeError(e).slice(0, 76)}`)
      .then((answer) => {
        inFlight--;
        opts.counters.relpInFlight--;
        if (answer !== undefined && !closed) {
          if (answer.startsWith('200')) opts.counters.relpAcknowledged++;
          else opts.counters.relpRefused++;
          write(frame.txnr, answer);
        }
        drain();
      });
  };

  /** Starts waiting frames while the window has room; answers a pending close once nothing is in flight. */
  const drain = (): void => {
    while (!closed && waiting.length > 0 && inFlight < opts.window) dispatch(waiting.shift()!);
    if (closed) return;
    if (closing !== undefined && inFlight === 0 && waiting.length === 0) {
      write(closing, '');
      closed = true;
      socket.end();
      return;
    }
    if (socket.isPaused() && inFlight < opts.window && waiting.length === 0) socket.resume();
  };

  const dispatch = (frame: RelpFrame): void => {
    switch (frame.command) {
      case 'syslog':
        if (inFlight >= opts.window) waiting.push(frame);
        else startSyslog(frame);
        return;
      case 'close':
        closing = frame.txnr;
        drain();
        return;
      default:
        write(frame.txnr, `500 command '${frame.command}' is not supported`);
    }
  };

  const onFrame = (frame: RelpFrame): void => {
    if (closing !== undefined) return broken(`frame ${frame.txnr} '${frame.command}' after close`);
    if (frame.txnr !== expected) return broken(`transaction number ${frame.txnr} where ${expected} was expected`);
    expected = nextTxnr(expected);
    if (!opened) {
      if (frame.command !== 'open') return broken(`'${frame.command}' before 'open'`);
      const problem = offersProblem(parseOffers(frame.data));
      if (problem) {
        write(frame.txnr, `500 ${problem}`);
        return broken(problem);
      }
      opened = true;
      write(frame.txnr, `200 OK\n${ourOffers()}`);
      return;
    }
    if (waiting.length > 0 && frame.command === 'syslog') waiting.push(frame);
    else dispatch(frame);
  };

  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
  });
  socket.on('data', (chunk: Buffer) => {
    let frames: RelpFrame[];
    try {
      frames = decoder.push(chunk);
    } catch (e) {
      return broken(describeError(e));
    }
    for (const f of frames) {
      if (closed) return;
      onFrame(f);
    }
    // the window is full: read no more until it frees (backpressure through TCP)
    if (!closed && (inFlight >= opts.window || waiting.length > 0)) socket.pause();
  });
}
