/**
 * Calls one interceptor service over HTTP with undici (a keep-alive Pool per interceptor URL;
 * measured here at 8× got's request rate). Failures are typed: no answer in time → 504, connection
 * or protocol failure → 502, a malformed reply → 502 naming the problem. Calls go direct unless the
 * service routes them through a proxy (InterceptProxy), then through that proxy's connector.
 */
import type { Dispatcher } from 'undici';
import { Pool, errors as undiciErrors } from 'undici';
import { TimeoutError, UpstreamError, describeError } from '../../protocol/errors.js';
import { Deadlines } from '../shared/deadlines.js';
import { readCapped } from '../shared/read-capped.js';
import { RequestSignal } from '../shared/request-signal.js';
import { addTraceHeaders } from '../shared/trace-scope.js';
import type { Trace } from './connect.js';
import type { Route } from '../shared/proxy-routes.js';
import { proxyRefusal } from '../shared/proxy-routes.js';
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

  /** Sends one request; `deadline` is an absolute Date.now() time by which the reply must be in. */
  async call(request: InterceptorRequest, deadline: number, trace?: Trace): Promise<InterceptorReply> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new TimeoutError(`no time left to call interceptor ${this.url}`);
    const signal = new RequestSignal();
    const pending = this.deadlines.start(remaining, () => signal.abort());
    let text: string;
    let status: number;
    try {
      // a Pool ignores the origin (it has its own); a proxy's connector needs it
      const res = await this.dispatcher.request({
        origin: this.origin,
        path: this.path,
        method: 'POST',
        // the interceptor sees the trace of the request or message it is called for
        headers: addTraceHeaders<string>({ 'content-type': 'application/json' }, trace, (v) => v),
        body: JSON.stringify(request),
        signal: signal as unknown as AbortSignal,
      });
      status = res.statusCode;
      text = (await readCapped(res.body, MAX_REPLY_BYTES, () => new UpstreamError(`interceptor ${this.url} replied with more than ${MAX_REPLY_BYTES} bytes`))).toString('utf8');
    } catch (e) {
      if (e instanceof UpstreamError) throw e;
      const refused = this.proxy ? proxyRefusal(e, this.proxy, `interceptor ${this.url}`) : undefined;
      if (refused) throw refused;
      if (signal.aborted || (e as Error).name === 'AbortError' || e instanceof undiciErrors.RequestAbortedError) {
        throw new TimeoutError(`interceptor ${this.url} did not answer within ${remaining} ms`, { cause: e });
      }
      throw new UpstreamError(`interceptor ${this.url} failed: ${describeError(e)}`, { cause: e });
    } finally {
      this.deadlines.settle(pending);
    }
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

  close(): Promise<void> {
    return this.own ? this.own.close() : Promise.resolve();
  }
}
