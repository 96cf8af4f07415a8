/**
 * Calls one interceptor service over HTTP. A plain http:// service called direct goes over our lean
 * HTTP/1.1 client (lean-client.ts: half the CPU of an undici round trip); https:// and a
 * service routed through a proxy (InterceptProxy) over undici (a keep-alive Pool per interceptor URL,
 * or the proxy's connector), loaded only then. Failures are typed the same either way: no answer in
 * time → 504, connection or protocol failure → 502, a malformed reply → 502 naming the problem.
 */
import type { Dispatcher, Pool } from 'undici';
import { TimeoutError, UpstreamError, describeError } from '../../protocol/errors.js';
import type { Deadline } from '../shared/deadlines.js';
import { Deadlines } from '../shared/deadlines.js';
import { loadUndici } from '../net/load-undici.js';
import type { Route } from '../net/proxy-routes.js';
import { proxyRefusal } from '../net/proxy-routes.js';
import { addTraceHeaders } from '../observe/trace-scope.js';
import { LeanPool } from '../wire/lean-client.js';
import type { InterceptorReply, InterceptorRequest, Trace } from './wire.js';
import { validateReply } from './wire.js';

const MAX_REPLY_BYTES = 16 * 1024 * 1024;
/** A header value that would end its line early: refused rather than written (header injection). */
const LINE_BREAK = /[\r\n\0]/;

export class InterceptorClient {
  /** The lean client's pool: a plain http:// service called direct. */
  private readonly lean: LeanPool | undefined;
  /** The request line and fixed headers of every lean request, up to the Content-Length value. */
  private readonly leanHead: string = '';
  /** Otherwise our own undici Pool, or the proxy's connector (which its owner closes). */
  private readonly dispatcher: Dispatcher | undefined;
  private readonly own: Pool | undefined;
  private readonly origin: string;
  private readonly path: string;
  private readonly proxy: Route['proxy'] | undefined;
  private readonly deadlines = new Deadlines();

  constructor(
    readonly url: string,
    connections = 64,
    /** The route through a proxy; direct without one. */
    via?: Route,
  ) {
    const u = new URL(url);
    this.origin = u.origin;
    this.path = `${u.pathname}${u.search}`;
    this.proxy = via?.proxy;
    if (!this.proxy && u.protocol === 'http:') {
      this.lean = LeanPool.forUrl(`interceptor ${url}`, u, connections, MAX_REPLY_BYTES);
      this.leanHead = `POST ${this.path} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\ncontent-length: `;
    } else {
      this.own = this.proxy
        ? undefined
        : new (loadUndici().Pool)(u.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
      this.dispatcher = this.own ?? via!.dispatcher;
    }
  }

  /**
   * Sends one request; `deadline` is an absolute Date.now() time by which the reply must be in. The
   * interceptor sees the trace of the request or message it is called for (`trace`).
   */
  call(request: InterceptorRequest, deadline: number, trace?: Trace): Promise<InterceptorReply> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(new TimeoutError(`no time left to call interceptor ${this.url}`));
    if (this.lean) return this.callLean(this.lean, request, remaining, trace);
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(this, remaining, resolve, reject);
      exchange.pending = this.deadlines.start(remaining, () => exchange.timeOut());
      // a Pool ignores the origin (it has its own); a proxy's connector needs it
      // the shared headers object only without a trace: a trace's headers go on a copy of it
      const headers = trace ? addTraceHeaders<string>({ ...JSON_HEADERS }, trace, (v) => v) : JSON_HEADERS;
      this.dispatcher!.dispatch(
        { origin: this.origin, path: this.path, method: 'POST', headers, body: JSON.stringify(request) },
        exchange,
      );
    });
  }

  /** One call over the lean client: the request written as one string, its reply checked as undici's is. */
  private callLean(
    lean: LeanPool,
    request: InterceptorRequest,
    remaining: number,
    trace: Trace | undefined,
  ): Promise<InterceptorReply> {
    const body = JSON.stringify(request);
    let extra = '';
    if (trace) {
      const headers = addTraceHeaders<string>({}, trace, (v) => v);
      for (const name of Object.keys(headers)) {
        const value = headers[name]!;
        if (LINE_BREAK.test(value))
          return Promise.reject(new UpstreamError(`interceptor ${this.url} failed: invalid ${name} header`));
        extra += `${name}: ${value}\r\n`;
      }
    }
    const text = `${this.leanHead}${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
    return new Promise((resolve, reject) => {
      lean.send(text, remaining, (error, status, reply) => {
        if (error) return reject(error);
        try {
          resolve(this.reply(status, reply!.toString('utf8')));
        } catch (e) {
          reject(e as Error);
        }
      });
    });
  }

  /** The reply of a finished exchange: HTTP status, JSON and wire shape checked. */
  reply(status: number, text: string): InterceptorReply {
    if (status < 200 || status > 299) throw new UpstreamError(`interceptor ${this.url} answered HTTP ${status}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UpstreamError(`interceptor ${this.url} replied with something that is not JSON`);
    }
    try {
      return validateReply(parsed, `reply of interceptor ${this.url}`);
    } catch (e) {
      throw new UpstreamError(describeError(e), { cause: e });
    }
  }

  /** The typed error of a failed exchange: timed out → 504, a proxy's refusal as the proxy says, else 502. */
  failure(e: Error, timedOut: boolean, remaining: number): Error {
    if (e instanceof UpstreamError) return e;
    const refused = this.proxy ? proxyRefusal(e, this.proxy, `interceptor ${this.url}`) : undefined;
    if (refused) return refused;
    if (timedOut || e.name === 'AbortError' || e instanceof loadUndici().errors.RequestAbortedError)
      return new TimeoutError(`interceptor ${this.url} did not answer within ${remaining} ms`, { cause: e });
    return new UpstreamError(`interceptor ${this.url} failed: ${describeError(e)}`, { cause: e });
  }

  settle(pending: Deadline): void {
    this.deadlines.settle(pending);
  }

  close(): Promise<void> {
    if (this.lean) return this.lean.close();
    return this.own ? this.own.close() : Promise.resolve();
  }
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * One request to an interceptor as undici's dispatch handler: the reply's chunks are collected here,
 * with no response stream, promise or abort signal of its own per request (undici's `request()`
 * built a readable body stream, and the reply was read from it through events — together a fifth of
 * the interceptor call's CPU at 32 in flight). Ends exactly once: the reply, or the typed failure.
 */
class Exchange implements Dispatcher.DispatchHandler {
  pending: Deadline | undefined;
  private abort: ((e?: Error) => void) | undefined;
  private status = 0;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private timedOut = false;
  private done = false;

  constructor(
    private readonly client: InterceptorClient,
    private readonly remaining: number,
    private readonly resolve: (reply: InterceptorReply) => void,
    private readonly reject: (e: Error) => void,
  ) {}

  /** The deadline passed: the request is aborted and answered 504. */
  timeOut(): void {
    this.timedOut = true;
    this.abort?.();
  }

  onConnect(abort: (e?: Error) => void): void {
    this.abort = abort;
    if (this.timedOut) abort();
  }

  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > MAX_REPLY_BYTES) {
      this.fail(new UpstreamError(`interceptor ${this.client.url} replied with more than ${MAX_REPLY_BYTES} bytes`));
      this.abort?.();
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.done) return;
    this.done = true;
    this.client.settle(this.pending!);
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    try {
      this.resolve(this.client.reply(this.status, body.toString('utf8')));
    } catch (e) {
      this.reject(e as Error);
    }
  }

  onError(e: Error): void {
    this.fail(this.client.failure(e, this.timedOut, this.remaining));
  }

  private fail(e: Error): void {
    if (this.done) return;
    this.done = true;
    this.client.settle(this.pending!);
    this.reject(e);
  }
}
