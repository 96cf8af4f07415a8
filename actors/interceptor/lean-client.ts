/**
 * A lean HTTP/1.1 client on node:net for plain http:// interceptor services: a small pool of
 * keep-alive connections, one request at a time on each, each request written as one string. A
 * bare undici → node:http round trip cost 121-132 µs of CPU, more than a raw server's whole request
 * (75-87 µs), and an interceptor-mode gateway request makes two (issue 26); the same round trip over
 * this client costs about half. https:// and proxied interceptors stay on undici (client.ts).
 *
 * Requests are never retried, nor pipelined: an interceptor call need not be idempotent, and a
 * request behind another on a connection that dies could not tell whether it was handled. So a
 * connection that fails fails only the request on it (502), one that times out is closed (504),
 * and requests wait in the pool's queue, unsent, while every connection is busy.
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { TimeoutError, UpstreamError, describeError } from '../../protocol/errors.js';
import type { Deadline } from '../shared/deadlines.js';
import { Deadlines } from '../shared/deadlines.js';
import type { Head } from './http1-parser.js';
import { Http1Parser, HttpParseError } from './http1-parser.js';

/** How a request ends: an error (typed 502/504), or the reply's status and body. */
export type Done = (error: Error | undefined, status: number, body: Buffer | undefined) => void;

/** Idle connections are kept this long when the server gives no Keep-Alive timeout (as the undici Pool was set). */
const IDLE_MS = 30_000;
/** Closed this much before the server's own Keep-Alive timeout, so a request never meets its close (undici's margin). */
const IDLE_MARGIN_MS = 1000;

/** One request: sent once, on one connection, finished once. */
class Job {
  done = false;
  pending: Deadline | undefined;
  conn: Connection | undefined;

  constructor(
    readonly text: string,
    readonly remaining: number,
    private readonly deadlines: Deadlines,
    private readonly callback: Done,
  ) {}

  finish(error: Error | undefined, status = 0, body?: Buffer): void {
    if (this.done) return;
    this.done = true;
    this.conn = undefined;
    // a deadline that passed has unlinked itself already
    if (this.pending) this.deadlines.settle(this.pending);
    this.callback(error, status, body);
  }
}

class Connection {
  readonly socket: Socket;
  private readonly parser: Http1Parser;
  job: Job | undefined;
  /** Closed, or to be closed after the reply in flight. */
  dead = false;
  reusable = true;
  idleSince = 0;
  idleMs = IDLE_MS;

  constructor(
    private readonly pool: LeanPool,
    host: string,
    port: number,
    maxReply: number,
  ) {
    this.parser = new Http1Parser('response', maxReply, { onMessage: (head, body) => this.replied(head, body) });
    this.socket = connect({ host, port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('end', () => this.ended());
    this.socket.on('error', (e) => this.lost(e));
    this.socket.on('close', () => this.lost(undefined));
  }

  send(job: Job): void {
    this.job = job;
    job.conn = this;
    this.socket.write(job.text);
  }

  /** Closes the connection; the request on it, if any, is failed with `error`. */
  destroy(error?: Error): void {
    this.lost(error);
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    if (this.job === undefined) {
      // bytes nobody asked for: the connection's framing cannot be trusted any more
      this.destroy();
      return;
    }
    try {
      this.parser.execute(chunk);
    } catch (e) {
      this.destroy(this.pool.malformed(e));
    }
  }

  private replied(head: Head, body: Buffer): void {
    // a 1xx interim reply (100 Continue, 103 Early Hints) precedes the real one
    if (head.status < 200) return;
    const job = this.job;
    this.job = undefined;
    if (head.close) {
      this.reusable = false;
      this.parser.stop();
    }
    if (head.keepAliveMs > 0) this.idleMs = Math.max(head.keepAliveMs - IDLE_MARGIN_MS, head.keepAliveMs / 2);
    this.pool.released(this);
    job?.finish(undefined, head.status, body);
  }

  private ended(): void {
    // a reply that runs to the connection's end is complete now; any other cut short
    let cut: string | undefined;
    try {
      cut = this.parser.end();
    } catch (e) {
      cut = describeError(e);
    }
    this.destroy(this.job ? this.pool.malformed(new HttpParseError(cut ?? 'the connection closed without a reply')) : undefined);
  }

  private lost(error: Error | undefined): void {
    if (!this.dead) {
      this.dead = true;
      this.pool.removed(this);
    }
    const job = this.job;
    this.job = undefined;
    job?.finish(this.pool.failed(error ?? new Error('the connection closed without a reply')));
  }
}

export class LeanPool {
  private readonly idle: Connection[] = [];
  private readonly queue: Job[] = [];
  private queueHead = 0;
  private count = 0;
  private readonly deadlines = new Deadlines();
  private sweeper: NodeJS.Timeout | undefined;
  private closing = false;
  private closed: (() => void) | undefined;

  constructor(
    /** Named in errors: `interceptor http://…`. */
    readonly label: string,
    private readonly host: string,
    private readonly port: number,
    private readonly connections: number,
    private readonly maxReply: number,
  ) {}

  /** Sends `text` (the whole request) once; `done` is called once, by `remaining` ms at the latest (504). */
  send(text: string, remaining: number, done: Done): void {
    const job = new Job(text, remaining, this.deadlines, done);
    if (this.closing) return job.finish(new UpstreamError(`${this.label} failed: the client is closed`));
    job.pending = this.deadlines.start(remaining, () => this.expire(job));
    const conn = this.take();
    if (conn) conn.send(job);
    else this.queue.push(job);
  }

  /** The deadline passed: a queued request is dropped unsent; one in flight closes its connection. */
  private expire(job: Job): void {
    const conn = job.conn;
    job.finish(new TimeoutError(`${this.label} did not answer within ${job.remaining} ms`));
    conn?.destroy();
  }

  /** An idle connection that is still good, a new one while under the limit, else undefined. */
  private take(): Connection | undefined {
    const now = Date.now();
    for (let conn = this.idle.pop(); conn; conn = this.idle.pop()) {
      if (!conn.dead && now - conn.idleSince < conn.idleMs) return conn;
      conn.destroy();
    }
    if (this.count >= this.connections) return undefined;
    this.count++;
    return new Connection(this, this.host, this.port, this.maxReply);
  }

  /** The next queued request that has not timed out yet. */
  private next(): Job | undefined {
    while (this.queueHead < this.queue.length) {
      const job = this.queue[this.queueHead]!;
      this.queue[this.queueHead++] = undefined as unknown as Job;
      if (this.queueHead === this.queue.length) {
        this.queue.length = 0;
        this.queueHead = 0;
      }
      if (!job.done) return job;
    }
    return undefined;
  }

  /** A connection finished its reply: it takes the next queued request, waits idle, or closes. */
  released(conn: Connection): void {
    if (!conn.reusable || conn.dead) {
      conn.destroy();
      return;
    }
    const job = this.next();
    if (job) return conn.send(job);
    if (this.closing) return conn.destroy();
    conn.idleSince = Date.now();
    this.idle.push(conn);
    this.sweeper ??= setInterval(() => this.sweep(), 1000).unref();
  }

  /** A connection closed: its place goes to the next queued request, on a new connection. */
  removed(conn: Connection): void {
    this.count--;
    const at = this.idle.indexOf(conn);
    if (at >= 0) this.idle.splice(at, 1);
    if (this.queueHead < this.queue.length) {
      const job = this.next();
      const fresh = job ? this.take() : undefined;
      if (job && fresh) fresh.send(job);
      else if (job) this.queue.splice(this.queueHead, 0, job);
    }
    if (this.closing && this.count === 0 && this.closed) this.closed();
  }

  /** Idle connections past their keep-alive time are closed; the sweep stops with none idle. */
  private sweep(): void {
    const now = Date.now();
    for (const conn of [...this.idle]) if (now - conn.idleSince >= conn.idleMs) conn.destroy();
    if (this.idle.length === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** A reply that cannot be read: 502 naming the problem. */
  malformed(e: unknown): UpstreamError {
    if (e instanceof HttpParseError && e.tooLarge && /body/.test(e.message)) return new UpstreamError(`${this.label} replied with more than ${this.maxReply} bytes`, { cause: e });
    return new UpstreamError(`${this.label} sent a malformed reply: ${describeError(e)}`, { cause: e });
  }

  /** A connection that failed (refused, reset, closed): 502, unless the error is typed already. */
  failed(e: Error): Error {
    if (e instanceof UpstreamError || e instanceof TimeoutError) return e;
    return new UpstreamError(`${this.label} failed: ${describeError(e)}`, { cause: e });
  }

  /** Closes idle connections now and the others when their replies are in; queued requests are still sent. */
  close(): Promise<void> {
    this.closing = true;
    for (const conn of [...this.idle]) conn.destroy();
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.closed = resolve;
    });
  }
}
