/**
 * One RELP connection at the receiver (README, Syslog: reliable delivery). The client opens the
 * session (`open`, answered with our offers), sends `syslog` frames, and closes it (`close`,
 * answered `rsp 0` once every earlier frame is answered). Transaction numbers must follow each
 * other (1, 2, 3, …), as librelp's server requires; a frame out of order, a command before `open`
 * or a stream that is not RELP closes the connection.
 *
 * A `syslog` frame is answered `200 OK` only once its hand-over is acknowledged (handover-window.ts:
 * executed on OUTPUTCHANNEL, a durable queue answers once the entry is fsynced; at most RELPWindow
 * at once, the socket paused past that). A refusal that may pass is tried again while the frame
 * stays unanswered: rsyslog's librelp DISCARDS a frame answered with an error code (src/scrsp.c), so
 * answering 500 for a full queue would lose the message; an unanswered frame is resent by the client
 * after a reconnect instead. Only a refusal that will not pass is answered `500`.
 */
import type { Socket } from 'node:net';
import { describeError } from '../../protocol/errors.js';
import type { Logger } from '../observe/logger.js';
import type { HandoverAttempt, WindowCounters } from './handover-window.js';
import { HandoverWindow } from './handover-window.js';
import type { RelpFrame } from './relp-frame.js';
import { RelpDecoder, encodeRelpFrame, nextTxnr } from './relp-frame.js';
import { offersProblem, ourOffers, parseOffers } from './relp-offers.js';

export interface RelpCounters {
  /** Frames answered 200. */
  relpAcknowledged: number;
  /** Frames answered 500 (a refusal that will not pass). */
  relpRefused: number;
}

export interface RelpSessionOptions {
  window: number;
  maxDataBytes: number;
  prepare(data: Buffer, remote: string): HandoverAttempt | string;
  counters: RelpCounters;
  /** Messages in hand-over and retries, shared by the receiver's RELP connections. */
  windowCounters: WindowCounters;
  /** Counted invalid: a broken stream. */
  invalid(): void;
  log: Logger;
  /** Logs a line at warn once per distinct reason, at debug after that. */
  warnOnce(reason: string, line: string): void;
}

/** A response's text: one line of at most 80 characters, as librelp reads it. */
const responseText = (reason: string): string => `500 ${reason.replace(/\n/g, ' ').slice(0, 76)}`;

export function serveRelp(socket: Socket, remote: string, opts: RelpSessionOptions): void {
  const decoder = new RelpDecoder(opts.maxDataBytes);
  let expected = 1;
  let opened = false;
  let closed = false;
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
    window.close();
    // the answer that says why (an open refused) goes out before the connection closes
    if (corked) socket.uncork();
    socket.destroy();
  };
  /** A pending close is answered once every earlier frame is. */
  const settled = (): void => {
    if (closed || closing === undefined || !window.idle) return;
    write(closing, '');
    closed = true;
    socket.end();
  };
  const window = new HandoverWindow(
    socket,
    remote,
    {
      window: opts.window,
      prepare: opts.prepare,
      counters: opts.windowCounters,
      warnOnce: opts.warnOnce,
      waitingText: 'syslog RELP: … the frame stays unanswered (relpRetries counts it)',
    },
    settled,
  );

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
    switch (frame.command) {
      case 'syslog':
        return window.submit(frame.data, (end) => {
          if (end === undefined || closed) return;
          if (end.ok) opts.counters.relpAcknowledged++;
          else opts.counters.relpRefused++;
          write(frame.txnr, end.ok ? '200 OK' : responseText(end.reason));
        });
      case 'close':
        closing = frame.txnr;
        return settled();
      default:
        write(frame.txnr, `500 command '${frame.command}' is not supported`);
    }
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
    window.pauseIfFull();
  });
}
