/**
 * A lean HTTP/1.1 server on node:net for the interceptor kit: every request is a POST of a small
 * JSON body answered with a small JSON body, and node:http's request and response streams were half
 * of what an interceptor round trip cost. It serves any conformant client (curl, undici,
 * node:http, a proxy): content-length and chunked request bodies, keep-alive, Connection: close and
 * HTTP/1.0, Expect: 100-continue, pipelined requests answered in order. A request it cannot frame is
 * answered 400 and the connection closed; a body over the limit 413, unread, and closed too.
 */
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { Head } from '../wire/http1-parser.js';
import { Http1Parser, HttpParseError, PIPELINING_HEADER } from '../wire/http1-parser.js';

/** Sends the answer to one request: a status and a JSON text. */
export type Respond = (status: number, json: string) => void;
/** Handles one whole request; it answers through `respond`, exactly once, now or later. */
export type Handler = (head: Head, body: Buffer, respond: Respond) => void;
/** The answer of a request that cannot be handled (malformed, too large): a JSON text for its status. */
export type Refusal = (status: number, problem: string) => string;

/** An idle keep-alive connection is closed after this long (node:http's default), and told so. */
const KEEP_ALIVE_MS = 5000;
/** A request must be in whole within this long (node:http's headersTimeout), or the connection is closed. */
const REQUEST_MS = 60_000;
/** Pipelined requests waiting for an asynchronous answer before the connection stops reading. */
const MAX_WAITING = 64;

let dateSecond = 0;
let dateText = '';
/** The Date header value, made once a second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** One answer in the order its request came; `text` once it is known. */
interface Slot {
  text: string | undefined;
  close: boolean;
}

class ServerConnection {
  private readonly parser: Http1Parser;
  private readonly slots: Slot[] = [];
  /** No more requests are read: the connection ends once the answers before are out. */
  private closing = false;
  private paused = false;
  /** Answers are waiting in the socket's buffer for the client to read them. */
  private draining = false;
  lastActive = Date.now();
  /** When the request being read began, 0 between requests. */
  requestStarted = 0;

  constructor(
    readonly socket: Socket,
    private readonly server: LeanServer,
    maxBody: number,
  ) {
    this.parser = new Http1Parser('request', maxBody, {
      onHead: (head) => this.headIn(head),
      onMessage: (head, body) => this.requestIn(head, body),
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('end', () => this.ended());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => server.forget(this));
  }

  get idle(): boolean {
    return this.slots.length === 0 && this.parser.idle;
  }

  /** Closes the connection now if idle, else after the answers in progress. */
  shutdown(): void {
    this.closing = true;
    this.parser.stop();
    if (this.slots.length === 0) this.socket.end();
  }

  private read(chunk: Buffer): void {
    this.lastActive = Date.now();
    if (this.requestStarted === 0) this.requestStarted = this.lastActive;
    // answers made while reading (synchronous handlers, pipelined requests) go out in one write
    this.socket.cork();
    try {
      this.parser.execute(chunk);
    } catch (e) {
      const parse = e instanceof HttpParseError ? e : new HttpParseError(String(e));
      this.refuse(parse.tooLarge ? 413 : 400, parse.message);
    }
    if (this.parser.idle) this.requestStarted = 0;
    this.socket.uncork();
  }

  /** 100 Continue for a client that waits for it, unless the body is refused anyway. */
  private headIn(head: Head): void {
    if (!head.expectContinue || head.contentLength > this.server.maxBody || head.minor !== 1) return;
    // in the answers' order: after those owed to earlier pipelined requests, as a slot of its own
    this.slots.push({ text: 'HTTP/1.1 100 Continue\r\n\r\n', close: false });
    this.flush();
  }

  private requestIn(head: Head, body: Buffer): void {
    const slot: Slot = { text: undefined, close: head.close };
    this.slots.push(slot);
    if (head.close) this.shutdown();
    if (this.slots.length > MAX_WAITING && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    let answered = false;
    this.server.handler(head, body, (status, json) => {
      if (answered) return;
      answered = true;
      slot.text = this.encode(status, json, slot.close, head.minor);
      this.flush();
    });
  }

  /** A request that cannot be read: its answer after those before it, then the connection closes. */
  private refuse(status: number, problem: string): void {
    this.closing = true;
    this.parser.stop();
    this.slots.push({ text: this.encode(status, this.server.refusal(status, problem), true, 1), close: true });
    this.flush();
  }

  private encode(status: number, json: string, close: boolean, minor: number): string {
    // an HTTP/1.1 client may pipeline to us (answered in order): the lean client waits for the word
    const connection = close
      ? 'connection: close\r\n'
      : minor === 0
        ? `connection: keep-alive\r\nkeep-alive: timeout=${KEEP_ALIVE_MS / 1000}\r\n`
        : `keep-alive: timeout=${KEEP_ALIVE_MS / 1000}\r\n${PIPELINING_HEADER}: 1\r\n`;
    return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(json)}\r\ndate: ${httpDate()}\r\n${connection}\r\n${json}`;
  }

  /** Writes the answers that are ready, in request order; ends the connection after one that closes it. */
  private flush(): void {
    while (this.slots.length > 0 && this.slots[0]!.text !== undefined) {
      const slot = this.slots.shift()!;
      if (this.socket.destroyed) return;
      // a client that does not read its answers is not read from either, until it catches up
      if (!this.socket.write(slot.text!) && !this.draining) this.awaitDrain();
      if (slot.close) {
        this.slots.length = 0;
        this.socket.end();
        return;
      }
    }
    this.lastActive = Date.now();
    if (this.paused && this.slots.length <= MAX_WAITING / 2) {
      this.paused = false;
      if (!this.draining) this.socket.resume();
    }
    if (this.closing && this.slots.length === 0 && !this.socket.writableEnded) this.socket.end();
  }

  private awaitDrain(): void {
    this.draining = true;
    this.socket.pause();
    this.socket.once('drain', () => {
      this.draining = false;
      if (!this.paused) this.socket.resume();
    });
  }

  /** The client sent its last byte: the answers still owed go out, then the connection ends. */
  private ended(): void {
    const cut = this.parser.end();
    if (cut !== undefined) return void this.socket.destroy();
    this.closing = true;
    if (this.slots.length === 0) this.socket.end();
  }

  /** Called by the server's sweep: idle past its keep-alive, or a request too slow to come in. */
  sweep(now: number): void {
    if (this.idle && now - this.lastActive >= KEEP_ALIVE_MS) this.socket.end();
    else if (this.requestStarted !== 0 && now - this.requestStarted >= REQUEST_MS) this.socket.destroy();
  }
}

export class LeanServer {
  readonly net: Server;
  private readonly connections = new Set<ServerConnection>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    readonly handler: Handler,
    readonly refusal: Refusal,
    readonly maxBody: number,
  ) {
    // half-open: a client that sends its last request and shuts its side still gets the answer
    this.net = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
      this.connections.add(new ServerConnection(socket, this, maxBody));
      this.sweeper ??= setInterval(() => this.sweep(), 1000).unref();
    });
  }

  forget(conn: ServerConnection): void {
    this.connections.delete(conn);
  }

  private sweep(): void {
    const now = Date.now();
    for (const conn of this.connections) conn.sweep(now);
    if (this.connections.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Stops listening, closes idle connections now and the others after their answers. */
  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    return new Promise<void>((resolve) => {
      this.net.close(() => resolve());
      for (const conn of this.connections) conn.shutdown();
    });
  }
}
