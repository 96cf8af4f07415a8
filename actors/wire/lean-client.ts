/**
 * A lean HTTP/1.1 client on node:net for plain http:// interceptor services and OTLP exports
 * (otlp-transport.ts): a small pool of keep-alive connections, one request at a time on each, each
 * request written as one string (and a binary body, if it has one, in the same write). A
 * bare undici → node:http round trip cost 121-132 µs of CPU, more than a raw server's whole request
 * (75-87 µs), and an interceptor-mode gateway request makes two; the same round trip over
 * this client costs about half. https:// and proxied interceptors stay on undici (client.ts).
 *
 * Requests made in the same turn of the event loop (a gateway's reads of many clients, a batch of
 * replies that each start the next call) are pipelined on one connection, written as one, once its
 * server has answered HTTP/1.1 keep-alive with `hivenode-pipelining: 1` (the kit's server does; any
 * other server gets one request at a time on each connection): that is a third of the CPU of one
 * request per connection. Requests are never retried: an interceptor call need not be idempotent,
 * and a request on a connection that dies cannot tell whether it was handled. So a connection that
 * fails fails only the requests on it (502), a request that times out is answered 504 (its
 * connection closed when none on it waits any more), and while every connection is busy requests
 * wait in the pool's queue, unsent.
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

/**
 * Requests made in one turn of the event loop that may share a connection, written together. A
 * reply is read in order, so a slow one holds those behind it: the depth is kept small.
 */
const PIPELINE_DEPTH = 16;

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
    /** A body written after `text` (which then ends with the head), as it is: an OTLP batch. */
    readonly body: Buffer | undefined,
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
  /** The requests written and not yet answered, in order. */
  readonly jobs: Job[] = [];
  /** Closed, or to be closed after the reply in flight. */
  dead = false;
  reusable = true;
  /** The server answered HTTP/1.1 keep-alive and said it takes pipelined requests: more may be written before the replies. */
  pipelines = false;
  /** Written to in this turn of the event loop, its writes held back to go out as one. */
  corked = false;
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
    this.jobs.push(job);
    job.conn = this;
    if (job.body === undefined) {
      this.socket.write(job.text);
      return;
    }
    // the head and the body leave in one write (corks nest: a corked connection stays corked)
    this.socket.cork();
    this.socket.write(job.text);
    this.socket.write(job.body);
    this.socket.uncork();
  }

  /** Holds this turn's writes back until `uncork`: requests made together leave in one packet. */
  cork(): void {
    this.corked = true;
    this.socket.cork();
  }

  uncork(): void {
    this.corked = false;
    this.socket.uncork();
  }

  /** Every request on it has ended (timed out): nobody waits for its replies any more. */
  get abandoned(): boolean {
    return this.jobs.every((job) => job.done);
  }

  /** Closes the connection; the requests on it, if any, are failed with `error`. */
  destroy(error?: Error): void {
    this.lost(error);
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    if (this.jobs.length === 0) {
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
    const job = this.jobs.shift();
    // answered before all of its request was written (a server refusing a body early): the rest is
    // still to be written from the caller's body, which the caller may fill again once answered (the
    // OTLP exporter reuses its batch buffers), so the connection goes and the rest with it
    if (this.jobs.length === 0 && this.socket.writableLength > 0) this.reusable = false;
    if (head.close) {
      this.reusable = false;
      this.parser.stop();
    } else if (head.minor === 1 && head.pipelining) this.pipelines = true;
    // the server's own idle limit, less a margin (half of one under two seconds; 0: not reused idle)
    if (head.keepAliveMs >= 0)
      this.idleMs = head.keepAliveMs >= 2 * IDLE_MARGIN_MS ? head.keepAliveMs - IDLE_MARGIN_MS : head.keepAliveMs / 2;
    if (this.jobs.length === 0) this.pool.released(this);
    // requests written behind a reply that closed the connection will get none: 502, never resent
    else if (!this.reusable)
      this.destroy(
        new UpstreamError(`${this.pool.label} failed: the connection was closed by the server after an earlier reply`),
      );
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
    this.destroy(
      this.jobs.length > 0
        ? this.pool.malformed(new HttpParseError(cut ?? 'the connection closed without a reply'))
        : undefined,
    );
  }

  private lost(error: Error | undefined): void {
    if (!this.dead) {
      this.dead = true;
      this.pool.removed(this);
    }
    if (this.jobs.length === 0) return;
    const failure = this.pool.failed(error ?? new Error('the connection closed without a reply'));
    for (const job of this.jobs.splice(0)) job.finish(failure);
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
  /** The connection taking this turn's requests, corked until the turn ends (setImmediate)... */
  private batch: Connection | undefined;
  /** ...with those that took them before it filled up. */
  private readonly corked: Connection[] = [];
  private readonly flush = (): void => {
    this.batch = undefined;
    for (const conn of this.corked.splice(0)) conn.uncork();
  };

  /** A pool to the host and port of an http:// URL (its path is the caller's). */
  static forUrl(label: string, url: URL, connections: number, maxReply: number): LeanPool {
    // the URL parser gives the host in its bracketed IPv6 form; net.connect wants it bare
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    return new LeanPool(label, host, Number(url.port || 80), connections, maxReply);
  }

  constructor(
    /** Named in errors: `interceptor http://…`. */
    readonly label: string,
    private readonly host: string,
    private readonly port: number,
    private readonly connections: number,
    private readonly maxReply: number,
  ) {}

  /**
   * Sends `text` (the whole request, or its head when `body` is given) once; `done` is called once,
   * by `remaining` ms at the latest (504).
   */
  send(text: string, remaining: number, done: Done, body?: Buffer): void {
    const job = new Job(text, remaining, this.deadlines, done, body);
    if (this.closing) return job.finish(new UpstreamError(`${this.label} failed: the client is closed`));
    job.pending = this.deadlines.start(remaining, () => this.expire(job));
    const batch = this.batch;
    if (batch && !batch.dead && batch.jobs.length < PIPELINE_DEPTH) return batch.send(job);
    const conn = this.take();
    if (!conn) return void this.queue.push(job);
    this.open(conn);
    conn.send(job);
  }

  /**
   * Makes `conn` the one this turn's further requests join, when its server has shown it keeps
   * HTTP/1.1 connections: they leave in one write at the end of the turn, and the server reads
   * them in one read and (ours) answers them in one write — the system calls, not the parsing,
   * were most of a round trip's CPU.
   */
  private open(conn: Connection): void {
    if (!conn.pipelines || conn.corked) return;
    if (this.corked.length === 0) setImmediate(this.flush);
    this.batch = conn;
    this.corked.push(conn);
    conn.cork();
  }

  /**
   * The deadline passed: a queued request is dropped unsent; the connection of one in flight is
   * closed once no request on it is waiting any more (a reply that comes later is dropped).
   */
  private expire(job: Job): void {
    const conn = job.conn;
    job.finish(new TimeoutError(`${this.label} did not answer within ${job.remaining} ms`));
    if (conn?.abandoned) conn.destroy();
  }

  /** An idle connection that is still good, a new one while under the limit, else undefined. */
  private take(): Connection | undefined {
    const now = Date.now();
    for (let conn = this.idle.pop(); conn; conn = this.idle.pop()) {
      if (!conn.dead && now - conn.idleSince < conn.idleMs) {
        conn.socket.ref();
        return conn;
      }
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

  /** A connection has all its replies: it takes the next queued requests, waits idle, or closes. */
  released(conn: Connection): void {
    if (!conn.reusable || conn.dead) {
      conn.destroy();
      return;
    }
    let job = this.next();
    if (job) {
      this.open(conn);
      conn.send(job);
      while (conn.pipelines && conn.jobs.length < PIPELINE_DEPTH && (job = this.next())) conn.send(job);
      return;
    }
    if (this.closing) return conn.destroy();
    conn.idleSince = Date.now();
    // an idle connection does not keep the process alive (as node:http's agent unrefs its free sockets)
    conn.socket.unref();
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
    if (e instanceof HttpParseError && e.tooLarge && /body/.test(e.message))
      return new UpstreamError(`${this.label} replied with more than ${this.maxReply} bytes`, { cause: e });
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
