import { METHODS as HTTP_METHODS } from 'node:http';

/**
 * An HTTP/1.x message parser for the interceptor wire on node:net (lean-client.ts reads replies with
 * it, lean-server.ts requests): node:http and undici parse with llhttp behind a stream or dispatcher
 * layer that cost an interceptor call more CPU than the rest of its gateway request. It
 * reads what any conformant peer may send, not just ours: header names in any case, content-length and chunked bodies (extensions and trailers skipped), a response body that
 * runs to the end of the connection, 1xx interim replies, pipelined messages one after the other.
 * Anything it cannot frame with certainty is an HttpParseError, after which the connection is
 * closed: a message boundary guessed wrong would hand one request's bytes to another. It is held
 * against llhttp by a differential fuzzer (spec/fuzz/, `make fuzz`): what it accepts, llhttp frames
 * the same way, so it reads lines ending in CRLF only, no obs-fold, one Content-Length, and a
 * Transfer-Encoding never together with a Content-Length (docs/ARCHITECTURE.md, The lean wire).
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
// the target in visible ASCII: what llhttp takes as a URL, and no byte another reader would end it at
// (origin-form, absolute-form or `*`: the authority-form is CONNECT's, a tunnel this wire never opens)
// (an absolute-form's host in the plain characters of a name or address, which llhttp takes too)
const REQUEST_LINE =
  /^([A-Z-]+) (\/[\x21-\x7e]*|https?:\/\/[A-Za-z0-9._~-]+(?::\d{1,5})?(?:[/?][\x21-\x7e]*)?|\*) HTTP\/1\.([01])$/;
/** A Content-Length value as llhttp takes it: digits, spaces or tabs before, spaces after. */
const LENGTH_VALUE = /^[ \t]*(\d{1,15}) *$/;
/** A Transfer-Encoding value as llhttp takes it: tabs before it, none in it or after it. */
const CODINGS_VALUE = /^[ \t]*[^\t]*$/;
/**
 * A chunk size line (RFC 9112 §7.1): the size, then extensions `;name` or `;name=token` or
 * `;name="quoted"`, nothing else (no spaces, no control bytes), as llhttp reads it strictly.
 */
const CHUNK_LINE =
  /^([0-9a-fA-F]{1,12})(?:;[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:=(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+|"(?:[\t\x20\x21\x23-\x5b\x5d-\x7e]|\\[\t\x20-\x7e])*"))?)*$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * A head's bytes: lines of HTAB, visible and 8-bit bytes joined by CRLF. No other control byte, and
 * no CR or LF outside a CRLF: bytes a lenient reader and a strict one would frame differently (a
 * bare LF ends a line for one and not for the other). Anchored and without alternatives that
 * overlap, it is one pass and faster than looking for the bytes it excludes.
 */
const HEAD_BYTES = /^[\t\x20-\x7e\x80-\xff]*(?:\r\n[\t\x20-\x7e\x80-\xff]*)*$/;
/** The methods llhttp knows (node:http's list): any other token is refused by it, so by us too. */
const METHODS = new Set(HTTP_METHODS.filter((m) => m !== 'CONNECT'));

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
        if (kept.length > (this.state === State.Head ? MAX_HEAD_BYTES : MAX_CHUNK_LINE))
          throw new HttpParseError(
            this.state === State.Head
              ? `a head larger than ${MAX_HEAD_BYTES} bytes`
              : 'a chunk size or trailer line too long',
            this.state === State.Head,
          );
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
    return this.state === State.Head
      ? 'the connection closed in the middle of a head'
      : 'the connection closed before the body was complete';
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
        // the CRLF after a chunk's data; anything else means the size was a lie
        if (buf[pos] !== CR) fail('a chunk longer than its size');
        if (pos + 1 >= buf.length) return -1;
        if (buf[pos + 1] !== LF) fail('a chunk longer than its size');
        this.state = State.ChunkSize;
        return pos + 2;
      }
      case State.Trailers: {
        const eol = lineEnd(buf, pos);
        if (eol < 0) return -1;
        const blank = eol === pos + 1;
        this.trailerBytes += eol + 1 - pos;
        if (this.trailerBytes > MAX_HEAD_BYTES) fail(`trailers larger than ${MAX_HEAD_BYTES} bytes`, true);
        if (!blank) checkTrailer(buf.toString('latin1', pos, eol - 1));
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
    while (pos + 1 < buf.length && buf[pos] === CR && buf[pos + 1] === LF) pos += 2;
    if (pos >= buf.length) return buf.length;
    if (pos + 1 === buf.length && buf[pos] === CR) return -1;
    const end = headEnd(buf, pos);
    if (end < 0) {
      // a head of bare-LF lines never ends in CRLFCRLF: refused now, not when the connection times out
      if (hasBareLf(buf, pos)) fail('a line ending in a bare LF');
      return buf.length - pos > MAX_HEAD_BYTES ? fail(`a head larger than ${MAX_HEAD_BYTES} bytes`, true) : -1;
    }
    if (end - pos > MAX_HEAD_BYTES) fail(`a head larger than ${MAX_HEAD_BYTES} bytes`, true);
    const text = buf.toString('latin1', pos, end);
    if (!HEAD_BYTES.test(text)) fail('a control byte, a bare CR or a bare LF in the head');
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
      if (head.contentLength > this.maxBody)
        fail(`a body of ${head.contentLength} bytes, more than ${this.maxBody} bytes`, true);
      this.remaining = head.contentLength;
      this.state = State.Length;
    } else if (head.untilClose) this.state = State.UntilClose;
    else this.complete();
    return end;
  }

  private readChunkSize(buf: Buffer, pos: number): number {
    const eol = lineEnd(buf, pos);
    if (eol < 0) return -1;
    if (eol === pos || buf[eol - 1] !== CR) fail('a chunk size line not ending in CRLF');
    const line = buf.toString('latin1', pos, eol - 1);
    const m = CHUNK_LINE.exec(line);
    if (!m) fail(`a chunk size line that is not a hexadecimal size and extensions: '${line.slice(0, 40)}'`);
    const n = parseInt(m[1]!, 16);
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
    const body =
      this.chunks.length === 1 ? this.chunks[0]! : this.chunks.length === 0 ? EMPTY : Buffer.concat(this.chunks);
    this.chunks = [];
    this.head = undefined;
    this.state = State.Head;
    this.events.onMessage(head, body);
  }
}

const EMPTY = Buffer.alloc(0);
const HEAD_END = Buffer.from('\r\n\r\n');

function fail(problem: string, tooLarge = false): never {
  throw new HttpParseError(problem, tooLarge);
}

/** The index of the LF ending the line at `pos`, -1 when it is not in yet; a bare LF is refused. */
function lineEnd(buf: Buffer, pos: number): number {
  const eol = buf.indexOf(LF, pos);
  if (eol >= 0 && (eol === pos || buf[eol - 1] !== CR)) fail('a line ending in a bare LF');
  return eol;
}

/** A bare LF from `pos` on: the head being read has one (only looked for while it is incomplete). */
function hasBareLf(buf: Buffer, pos: number): boolean {
  for (let i = buf.indexOf(LF, pos); i >= 0; i = buf.indexOf(LF, i + 1))
    if (i === pos || buf[i - 1] !== CR) return true;
  return false;
}

/** The index after the blank line that ends the head starting at `pos`, -1 when it is not in yet. */
function headEnd(buf: Buffer, pos: number): number {
  // the bare LFs a head may hold are refused once it is in (HEAD_BYTES)
  const j = buf.indexOf(HEAD_END, pos);
  return j < 0 ? -1 : j + 4;
}

/**
 * A trailer line: skipped, but held to a header's shape, as llhttp reads it; one that would frame
 * the message or steer the connection (RFC 9110 §6.5.1 forbids them) is refused, as llhttp acts on
 * some of them (a Connection: close there ends its reading).
 */
function checkTrailer(line: string): void {
  const colon = line.indexOf(':');
  if (colon <= 0 || !TOKEN.test(line.slice(0, colon)) || !HEAD_BYTES.test(line))
    fail(`a trailer line that is not a header: '${line.slice(0, 60)}'`);
  if (FRAMING.has(line.slice(0, colon).toLowerCase()))
    fail(`a trailer that frames the message or steers the connection: '${line.slice(0, 60)}'`);
}

function newHead(): Head {
  return {
    status: 0,
    method: '',
    target: '',
    minor: 1,
    close: false,
    keepAliveMs: -1,
    keepAlive: false,
    pipelining: false,
    expectContinue: false,
    host: false,
    contentLength: -1,
    chunked: false,
    untilClose: false,
  };
}

function parseResponseHead(text: string): Head {
  const lines = text.split('\r\n');
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
  const lines = text.split('\r\n');
  const m = REQUEST_LINE.exec(lines[0]!);
  if (!m) fail(`a request line that is not METHOD target HTTP/1.x: '${lines[0]!.slice(0, 60)}'`);
  if (!METHODS.has(m[1]!)) fail(`a method this wire does not take: '${m[1]!.slice(0, 20)}'`);
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
  let upgrade = false;
  let connectionUpgrade = false;
  // the head ends in a blank line, which split leaves as one or two empty strings
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    // obs-fold (RFC 9112 §5.2): refused in requests and responses alike, as readers that unfold it
    // and readers that take it for a header of its own would see different heads
    if (line.charCodeAt(0) === 32 || line.charCodeAt(0) === 9) fail('a folded header line');
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
        // one length, digits only: a list or a second header (even an equal one) is refused, as llhttp does
        if (head.contentLength >= 0) fail('more than one Content-Length');
        head.contentLength = Number(
          LENGTH_VALUE.exec(line.slice(colon + 1))?.[1] ??
            fail(`a Content-Length that is not a length: '${value.slice(0, 40)}'`),
        );
        break;
      case 'transfer-encoding':
        // a tab after the leading whitespace: llhttp refuses 'chunked<TAB>', where trim() would not
        if (!CODINGS_VALUE.test(line.slice(colon + 1)))
          fail(`a Transfer-Encoding with a tab in it: '${value.slice(0, 40)}'`);
        te = te === undefined ? value : `${te}, ${value}`;
        break;
      case 'connection':
        for (const t of value.toLowerCase().split(',')) {
          const token = t.trim();
          if (token === 'close') head.close = true;
          else if (token === 'keep-alive') head.keepAlive = true;
          else if (token === 'upgrade') connectionUpgrade = true;
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
      case 'upgrade':
        upgrade = true;
        break;
    }
  }
  // llhttp hands the connection to another protocol after such a request and reads no further
  // message on it; this wire switches to none, so it would read the next bytes as a request
  if (kind === 'request' && upgrade && connectionUpgrade)
    fail('a request to upgrade the connection to another protocol');
  // a 1xx has no body (RFC 9110 §15.2), yet llhttp reads one by its length after a 1xx other than
  // 100, 102 and 103: a 1xx that names a length or coding, or another 1xx, is refused
  if (kind === 'response' && head.status < 200) {
    if (head.contentLength >= 0 || te !== undefined)
      fail(`a ${head.status} reply with a Content-Length or Transfer-Encoding`);
    if (head.status !== 100 && head.status !== 102 && head.status !== 103 && head.status !== 101)
      fail(`status ${head.status}, a 1xx this wire does not know`);
  }
  if (te !== undefined) {
    const codings = te
      .toLowerCase()
      .split(',')
      .map((s) => s.trim());
    // an empty coding ('chunked,') is read as chunked by some and as not chunked by others
    if (codings.some((c) => !TOKEN.test(c)))
      fail(`a Transfer-Encoding that is not a list of codings: '${te.slice(0, 40)}'`);
    // with a Content-Length too, a message is framed one way by one reader and another by the next
    if (head.contentLength >= 0) fail('both Transfer-Encoding and Content-Length');
    const chunked = codings[codings.length - 1] === 'chunked';
    if (codings.indexOf('chunked') !== codings.length - 1 && codings.includes('chunked'))
      fail(`a Transfer-Encoding with chunked before another coding: '${te.slice(0, 40)}'`);
    if (kind === 'request') {
      // a request must end in chunked and must not give a length too (RFC 9112 §6.1, §6.3): the shapes of smuggling
      if (!chunked) fail(`a Transfer-Encoding that does not end in chunked: '${te.slice(0, 40)}'`);
      head.chunked = true;
    } else if (chunked) {
      head.chunked = true;
    } else {
      head.untilClose = true;
    }
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
const FRAMING = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'expect',
  'host',
  'upgrade',
  PIPELINING_HEADER,
]);
const FRAMING_LENGTHS = new Set([...FRAMING].map((name) => name.length));
