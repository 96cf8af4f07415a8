/**
 * Calls one interceptor service over HTTP with undici (a keep-alive Pool per interceptor URL;
 * measured here at 8× got's request rate). Failures are typed: no answer in time → 504, connection
 * or protocol failure → 502, a malformed reply → 502 naming the problem. Calls go direct unless the
 * service routes them through a proxy (InterceptProxy), then through that proxy's connector.
 */
import type { Dispatcher } from 'undici';
import { Pool, errors as undiciErrors } from 'undici';
import { TimeoutError, UpstreamError, describeError } from '../../protocol/errors.js';
import type { Deadline } from '../shared/deadlines.js';
import { Deadlines } from '../shared/deadlines.js';
import type { Route } from '../shared/proxy-routes.js';
import { proxyRefusal } from '../shared/proxy-routes.js';
import { addTraceHeaders } from '../shared/trace-scope.js';
import type { Trace } from './connect.js';
import type { InterceptorReply, InterceptorRequest } from './wire.js';
import { validateReply } from './wire.js';

const MAX_REPLY_BYTES = 16 * 1024 * 1024;

export class InterceptorClient {
  /** Our own keep-alive Pool, or the proxy's connector (which its owner closes). */
  private readonly dispatcher: Dispatcher;
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
    this.own = this.proxy ? undefined : new Pool(u.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
    this.dispatcher = this.own ?? via!.dispatcher;
  }

  /**
   * Sends one request; `deadline` is an absolute Date.now() time by which the reply must be in. The
   * interceptor sees the trace of the request or message it is called for (`trace`).
   */
  call(request: InterceptorRequest, deadline: number, trace?: Trace): Promise<InterceptorReply> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(new TimeoutError(`no time left to call interceptor ${this.url}`));
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(this, remaining, resolve, reject);
      exchange.pending = this.deadlines.start(remaining, () => exchange.timeOut());
      // a Pool ignores the origin (it has its own); a proxy's connector needs it
      // the shared headers object only without a trace: a trace's headers go on a copy of it
      const headers = trace ? addTraceHeaders<string>({ ...JSON_HEADERS }, trace, (v) => v) : JSON_HEADERS;
      this.dispatcher.dispatch({ origin: this.origin, path: this.path, method: 'POST', headers, body: JSON.stringify(request) }, exchange);
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
    if (timedOut || e.name === 'AbortError' || e instanceof undiciErrors.RequestAbortedError) return new TimeoutError(`interceptor ${this.url} did not answer within ${remaining} ms`, { cause: e });
    return new UpstreamError(`interceptor ${this.url} failed: ${describeError(e)}`, { cause: e });
  }

  settle(pending: Deadline): void {
    this.deadlines.settle(pending);
  }

  close(): Promise<void> {
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
