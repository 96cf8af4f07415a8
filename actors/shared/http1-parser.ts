/**
 * An HTTP/1.x message parser for the interceptor wire on node:net (lean-client.ts reads replies with
 * it, lean-server.ts requests): node:http and undici parse with llhttp behind a stream or dispatcher
 * layer that cost an interceptor call more CPU than the rest of its gateway request (issue 26). It
 * reads what any conformant peer may send, not just ours: CRLF or bare-LF lines, header names in any
 * case, content-length and chunked bodies (extensions and trailers skipped), a response body that
 * runs to the end of the connection, 1xx interim replies, pipelined messages one after the other.
 * Anything it cannot frame with certainty is an HttpParseError, after which the connection is
 * closed: a message boundary guessed wrong would hand one request's bytes to another.
 */

/** Why a message cannot be read; `tooLarge` for a body or head over the limit (413 / the reply cap). */
export class HttpParseError extends Error {
  override readonly name = 'HttpParseError';
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

/** What framing and connection handling need of a message's head; other headers are not kept. */
export interface Head {
  /** Response: its status code; request: 0. */
  status: number;
  /** Request: its method and target; response: ''. */
  method: string;
  target: string;
  /** The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: number;
  /** The connection ends after this message (Connection: close, or HTTP/1.0 without keep-alive). */
  close: boolean;
  /** A response's Keep-Alive timeout in ms, -1 when it gave none. */
  keepAliveMs: number;
  /** Connection: keep-alive was asked (what keeps an HTTP/1.0 connection open). */
  keepAlive: boolean;
  /** A response's `hivenode-pipelining: 1`: its server answers pipelined requests (the kit does). */
  pipelining: boolean;
  /** A request's Expect: 100-continue. */
  expectContinue: boolean;
  /** The request named a Host (HTTP/1.1 requires one). */
  host: boolean;
  /** Content-Length, -1 when absent. */
  contentLength: number;
  chunked: boolean;
  /** A response framed by the end of the connection (no length, not chunked). */
  untilClose: boolean;
}

const MAX_HEAD_BYTES = 64 * 1024;
const MAX_CHUNK_LINE = 4096;
const LF = 10;
const CR = 13;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^]*)?$/;
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\S+) HTTP\/1\.([01])$/;
const DIGITS = /^\d+$/;
const HEX = /^[0-9a-fA-F]{1,12}$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** NUL or a CR that does not end a line: bytes a lenient reader and a strict one would frame differently. */
const FORBIDDEN = /\0|\r(?!\n)/;

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailers,
  UntilClose,
}

export interface ParserEvents {
  /** The head is in (a request's, before its body: the place to answer 100 Continue or refuse early). */
  onHead?(head: Head): void;
  /** A whole message: its head and body. A 1xx response comes here too, with an empty body. */
  onMessage(head: Head, body: Buffer): void;
}

export class Http1Parser {
  private state = State.Head;
  private rest: Buffer | undefined;
  private head: Head | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  /** Bytes of the current content-length body or chunk still to come. */
  private remaining = 0;
  private trailerBytes = 0;
  private stopped = false;
  constructor(
    private readonly kind: 'request' | 'response',
    private readonly maxBody: number,
    private readonly events: ParserEvents,
  ) {}

  /** No bytes of a message are pending: the connection is between messages. */
  get idle(): boolean {
    return this.state === State.Head && (this.rest === undefined || this.rest.length === 0);
  }

  /** Reads nothing more: the connection ends after the message just completed. */
  stop(): void {
    this.stopped = true;
    this.rest = undefined;
  }

  /** Reads the bytes of `chunk`, calling the events for each message completed; throws HttpParseError. */
  execute(chunk: Buffer): void {
    if (this.stopped) return;
    let buf = chunk;
    if (this.rest !== undefined) {
      buf = Buffer.concat([this.rest, chunk]);
      this.rest = undefined;
    }
    let pos = 0;
    while (pos < buf.length && !this.stopped) {
      const before = pos;
      pos = this.step(buf, pos);
      if (pos < 0) {
        // an incomplete head or chunk line: kept until more bytes come
        const kept = buf.subarray(before);
        if (kept.length > (this.state === State.Head ? MAX_HEAD_BYTES : MAX_CHUNK_LINE)) throw new HttpParseError(this.state === State.Head ? `a head larger than ${MAX_HEAD_BYTES} bytes` : 'a chunk size or trailer line too long', this.state === State.Head);
        this.rest = kept;
        return;
      }
    }
  }

  /**
   * The connection's end: completes a response that runs to it, and says what was cut off otherwise
   * (undefined: nothing was pending).
   */
  end(): string | undefined {
    if (this.stopped) return undefined;
    if (this.state === State.UntilClose) {
      this.complete();
      return undefined;
    }
    if (this.idle) return undefined;
    return this.state === State.Head ? 'the connection closed in the middle of a head' : 'the connection closed before the body was complete';
  }

  /** One step from `pos`: the position after what it consumed, or -1 when it needs more bytes. */
  private step(buf: Buffer, pos: number): number {
    switch (this.state) {
      case State.Head:
        return this.readHead(buf, pos);
      case State.Length:
      case State.ChunkData: {
        const take = Math.min(this.remaining, buf.length - pos);
        this.chunks.push(pos === 0 && take === buf.length ? buf : buf.subarray(pos, pos + take));
        this.remaining -= take;
        if (this.remaining === 0) {
          if (this.state === State.Length) this.complete();
          else this.state = State.ChunkEnd;
        }
        return pos + take;
      }
      case State.ChunkSize:
        return this.readChunkSize(buf, pos);
      case State.ChunkEnd: {
        // the line end after a chunk's data, CRLF or LF; anything else means the size was a lie
        if (buf[pos] === LF) {
          this.state = State.ChunkSize;
          return pos + 1;
        }
        if (buf[pos] !== CR) fail('a chunk longer than its size');
        if (pos + 1 >= buf.length) return -1;
        if (buf[pos + 1] !== LF) fail('a chunk longer than its size');
        this.state = State.ChunkSize;
        return pos + 2;
      }
      case State.Trailers: {
        const eol = lineEnd(buf, pos);
        if (eol < 0) return -1;
        const blank = eol === pos || (eol === pos + 1 && buf[pos] === CR);
        this.trailerBytes += eol + 1 - pos;
        if (this.trailerBytes > MAX_HEAD_BYTES) fail(`trailers larger than ${MAX_HEAD_BYTES} bytes`, true);
        if (blank) this.complete();
        return eol + 1;
      }
      case State.UntilClose:
        this.addBody(pos === 0 ? buf : buf.subarray(pos));
        return buf.length;
    }
  }

  private readHead(buf: Buffer, pos: number): number {
    // empty lines before a message are skipped (RFC 9112 §2.2: some clients send a CRLF after a POST body)
    while (pos < buf.length && (buf[pos] === LF || (buf[pos] === CR && buf[pos + 1] === LF))) pos += buf[pos] === CR ? 2 : 1;
    if (pos >= buf.length) return buf.length;
    const end = headEnd(buf, pos);
    if (end < 0) return buf.length - pos > MAX_HEAD_BYTES ? fail(`a head larger than ${MAX_HEAD_BYTES} bytes`, true) : -1;
    if (end - pos > MAX_HEAD_BYTES) fail(`a head larger than ${MAX_HEAD_BYTES} bytes`, true);
    const text = buf.toString('latin1', pos, end);
    if (FORBIDDEN.test(text)) fail('a NUL or a bare CR in the head');
    const head = this.kind === 'response' ? parseResponseHead(text) : parseRequestHead(text);
    this.head = head;
    this.chunks = [];
    this.size = 0;
    this.events.onHead?.(head);
    if (this.kind === 'response' && (head.status < 200 || head.status === 204 || head.status === 304)) {
      if (head.status === 101) fail('a 101 Switching Protocols reply to a request that asked for none');
      this.complete();
    } else if (head.chunked) this.state = State.ChunkSize;
    else if (head.contentLength > 0) {
      if (head.contentLength > this.maxBody) fail(`a body of ${head.contentLength} bytes, more than ${this.maxBody} bytes`, true);
      this.remaining = head.contentLength;
      this.state = State.Length;
    } else if (head.untilClose) this.state = State.UntilClose;
    else this.complete();
    return end;
  }

  private readChunkSize(buf: Buffer, pos: number): number {
    const eol = lineEnd(buf, pos);
    if (eol < 0) return -1;
    const line = buf.toString('latin1', pos, eol).replace(/\r$/, '');
    const semi = line.indexOf(';');
    const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
    if (!HEX.test(hex)) fail(`a chunk size that is not hexadecimal: '${line.slice(0, 40)}'`);
    const n = parseInt(hex, 16);
    if (n === 0) {
      this.state = State.Trailers;
      this.trailerBytes = 0;
    } else {
      if (this.size + n > this.maxBody) fail(`a body of more than ${this.maxBody} bytes`, true);
      this.size += n;
      this.remaining = n;
      this.state = State.ChunkData;
    }
    return eol + 1;
  }

  private addBody(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.maxBody) fail(`a body of more than ${this.maxBody} bytes`, true);
    this.chunks.push(chunk);
  }

  private complete(): void {
    const head = this.head!;
    const body = this.chunks.length === 1 ? this.chunks[0]! : this.chunks.length === 0 ? EMPTY : Buffer.concat(this.chunks);
    this.chunks = [];
    this.head = undefined;
    this.state = State.Head;
    this.events.onMessage(head, body);
  }
}

const EMPTY = Buffer.alloc(0);

function fail(problem: string, tooLarge = false): never {
  throw new HttpParseError(problem, tooLarge);
}

/** The index of the LF ending the line at `pos`, -1 when it is not in yet. */
function lineEnd(buf: Buffer, pos: number): number {
  return buf.indexOf(LF, pos);
}

/** The index after the blank line that ends the head starting at `pos`, -1 when it is not in yet. */
function headEnd(buf: Buffer, pos: number): number {
  // line by line, so that a head of bare LFs ends where it does (a few searches for a usual head)
  let i = pos;
  for (;;) {
    const j = buf.indexOf(LF, i);
    if (j < 0) return -1;
    if (j === i || (j === i + 1 && buf[i] === CR)) return j + 1;
    i = j + 1;
  }
}

function newHead(): Head {
  return { status: 0, method: '', target: '', minor: 1, close: false, keepAliveMs: -1, keepAlive: false, pipelining: false, expectContinue: false, host: false, contentLength: -1, chunked: false, untilClose: false };
}

function parseResponseHead(text: string): Head {
  const lines = text.split(/\r?\n/);
  const m = STATUS_LINE.exec(lines[0]!);
  if (!m) fail(`a status line that is not HTTP/1.x: '${lines[0]!.slice(0, 60)}'`);
  const head = newHead();
  head.minor = Number(m[1]);
  head.status = Number(m[2]);
  if (head.status < 100) fail(`status ${head.status}`);
  readHeaders(lines, head, 'response');
  if (head.minor === 0 && !head.keepAlive) head.close = true;
  return head;
}

function parseRequestHead(text: string): Head {
  const lines = text.split(/\r?\n/);
  const m = REQUEST_LINE.exec(lines[0]!);
  if (!m) fail(`a request line that is not METHOD target HTTP/1.x: '${lines[0]!.slice(0, 60)}'`);
  const head = newHead();
  head.method = m[1]!;
  head.target = m[2]!;
  head.minor = Number(m[3]);
  readHeaders(lines, head, 'request');
  if (head.minor === 0 && !head.keepAlive) head.close = true;
  if (head.minor === 1 && !head.host) fail('an HTTP/1.1 request without Host');
  return head;
}

/** The headers that frame the message or steer the connection; `lines[0]` is the start line. */
function readHeaders(lines: string[], head: Head, kind: 'request' | 'response'): void {
  let te: string | undefined;
  let last = '';
  // the head ends in a blank line, which split leaves as one or two empty strings
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    if (line.charCodeAt(0) === 32 || line.charCodeAt(0) === 9) {
      // obs-fold (RFC 9112 §5.2): a request must not use it; in a response it only continues a value
      // we ignore, or it would change how the message is framed
      if (kind === 'request' || FRAMING.has(last)) fail('a folded header line');
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) fail(`a header line without a name and colon: '${line.slice(0, 60)}'`);
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) fail(`a header name that is not a token: '${name.slice(0, 60)}'`);
    // lower-cased only when its length is one of ours: most headers are skipped without a copy
    last = FRAMING_LENGTHS.has(colon) ? name.toLowerCase() : '';
    if (!FRAMING.has(last)) continue;
    const value = line.slice(colon + 1).trim();
    switch (last) {
      case 'content-length':
        for (const part of value.split(',')) {
          const v = part.trim();
          if (!DIGITS.test(v) || v.length > 15) fail(`a Content-Length that is not a length: '${value.slice(0, 40)}'`);
          const n = Number(v);
          if (head.contentLength >= 0 && head.contentLength !== n) fail('Content-Length headers that disagree');
          head.contentLength = n;
        }
        break;
      case 'transfer-encoding':
        te = te === undefined ? value : `${te}, ${value}`;
        break;
      case 'connection':
        for (const t of value.toLowerCase().split(',')) {
          const token = t.trim();
          if (token === 'close') head.close = true;
          else if (token === 'keep-alive') head.keepAlive = true;
        }
        break;
      case 'keep-alive': {
        const m = /(?:^|[\s,])timeout\s*=\s*(\d+)/i.exec(value);
        if (m) head.keepAliveMs = Number(m[1]) * 1000;
        break;
      }
      case 'expect':
        if (value.toLowerCase() === '100-continue') head.expectContinue = true;
        break;
      case PIPELINING_HEADER:
        if (value === '1') head.pipelining = true;
        break;
      case 'host':
        if (head.host) fail('more than one Host');
        head.host = true;
        break;
    }
  }
  if (te !== undefined) {
    const codings = te.toLowerCase().split(',').map((s) => s.trim()).filter(Boolean);
    const chunked = codings[codings.length - 1] === 'chunked';
    if (kind === 'request') {
      // a request must end in chunked and must not give a length too (RFC 9112 §6.1, §6.3): the shapes of smuggling
      if (!chunked) fail(`a Transfer-Encoding that does not end in chunked: '${te.slice(0, 40)}'`);
      if (head.contentLength >= 0) fail('both Transfer-Encoding and Content-Length');
      head.chunked = true;
    } else if (chunked) {
      head.chunked = true;
    } else {
      head.untilClose = true;
    }
    // a response with both is framed by Transfer-Encoding, and the connection is not reused after it
    if (head.contentLength >= 0) head.close = true;
    head.contentLength = -1;
  }
  // a response without a length runs to the close, unless it has no body at all (1xx, 204, 304)
  const bodiless = head.status < 200 || head.status === 204 || head.status === 304;
  if (kind === 'response' && !head.chunked && head.contentLength < 0 && !bodiless) head.untilClose = true;
  if (head.untilClose) head.close = true;
}

/**
 * The response header by which a server says it answers pipelined requests in order: the kit sends
 * it, and the client pipelines to no other server. HTTP/1.1 asks every server to, but servers and
 * proxies that mishandle it are still met, and an interceptor call is never sent twice.
 */
export const PIPELINING_HEADER = 'hivenode-pipelining';
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'expect', 'host', PIPELINING_HEADER]);
const FRAMING_LENGTHS = new Set([...FRAMING].map((name) => name.length));
