/**
 * Interceptors by URL: `http(s)://…` is an interceptor service called over HTTP (the spec's form);
 * `module://<path>` loads the same kind of mapping function into this process (beyond the spec), which
 * saves one HTTP round trip per message. Both answer in the same wire shapes and fail the same way.
 */
import { ConfigError, TimeoutError, UpstreamError, describeError } from '../../protocol/errors.js';
import { isPlainPrototype } from '../../protocol/message.js';
import { Deadlines } from '../shared/deadlines.js';
import { isThenable } from '../../supervisors/thenable.js';
import type { Routes } from '../net/proxy-routes.js';
import { importModule } from '../../protocol/import-module.js';
import type { InterceptorFunction } from './server.js';
import { loadInterceptor } from './server.js';
import type { InterceptorReply, InterceptorRequest, Trace } from './wire.js';
import { validateReply } from './wire.js';

export interface Interceptor {
  readonly url: string;
  /** Resolves with the validated reply by `deadline` (epoch ms), or rejects with 504/502. */
  call(request: InterceptorRequest, deadline: number, trace?: Trace): Promise<InterceptorReply>;
  close(): Promise<void>;
}

/**
 * A copy of a JSON-shaped value (a message, or a parsed response body), as an HTTP interceptor would
 * get it: the function cannot change the caller's objects. Written out because structuredClone (and
 * a JSON round trip) of a message took 1.2-1.8 µs, most of an in-process interceptor call.
 */
export function copyJsonValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJsonValue);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!isPlainPrototype(proto)) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = copyJsonValue((value as Record<string, unknown>)[k]);
    // JSON.parse makes "__proto__" an own key; assigning it would set the copy's prototype instead
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

class ModuleInterceptor implements Interceptor {
  /** Deadlines of the calls that returned a promise (a synchronous function has answered already). */
  private readonly deadlines = new Deadlines();

  constructor(
    readonly url: string,
    private readonly fn: InterceptorFunction,
  ) {}

  call(request: InterceptorRequest, deadline: number): Promise<InterceptorReply> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(new TimeoutError(`no time left to call interceptor ${this.url}`));
    let out: unknown;
    try {
      out = this.fn(request.type, copyJsonValue(request.value), { ...request.options });
    } catch (e) {
      return Promise.reject(this.failed(e));
    }
    if (!isThenable(out)) return this.reply(out);
    return new Promise<unknown>((resolve, reject) => {
      const pending = this.deadlines.start(remaining, () =>
        reject(new TimeoutError(`interceptor ${this.url} did not answer within ${remaining} ms`)),
      );
      // whichever comes first, the answer or the deadline, settles the call
      out.then(
        (v) => {
          if (this.deadlines.settle(pending)) resolve(v);
        },
        (e: unknown) => {
          if (this.deadlines.settle(pending)) reject(this.failed(e));
        },
      );
    }).then((v) => this.reply(v));
  }

  private reply(out: unknown): Promise<InterceptorReply> {
    try {
      return Promise.resolve(validateReply(out, `reply of interceptor ${this.url}`));
    } catch (e) {
      return Promise.reject(this.failed(e));
    }
  }

  private failed(e: unknown): UpstreamError {
    return new UpstreamError(`interceptor ${this.url} failed: ${describeError(e)}`, { cause: e });
  }

  async close(): Promise<void> {}
}

/**
 * An interceptor parameter's http(s) URL (undefined for a module://), or the ConfigError naming the
 * parameter: the services' start-time checks run it, so `hivenode check` and a reload refuse what a
 * start would.
 */
export function interceptorUrl(name: string, url: string): URL | undefined {
  if (url.startsWith('module://')) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError(`${name} '${url}' is not a URL: write an http(s):// or module:// URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new ConfigError(`${name} '${url}' must be an http(s):// or module:// URL`);
  return u;
}

/**
 * Connects to an interceptor named by a parameter; `name` is used in configuration errors. With
 * `routes` (InterceptProxy) an http(s) interceptor is called through the proxy they give its URL.
 */
export async function connectInterceptor(name: string, url: string, routes?: Routes): Promise<Interceptor> {
  if (url.startsWith('module://')) {
    try {
      return new ModuleInterceptor(url, await loadInterceptor(url.slice('module://'.length)));
    } catch (e) {
      // the parameter that named the module, so the one line at start says what to fix
      if (e instanceof ConfigError) throw new ConfigError(`${name}: ${e.message}`, { cause: e });
      throw e;
    }
  }
  const u = interceptorUrl(name, url)!;
  // loaded for an HTTP interceptor only: its client is undici, which a node without one need not load
  const { InterceptorClient } = await importModule(import.meta.url, './client.js', () => import('./client.js'));
  return new InterceptorClient(url, 64, routes?.route(u));
}
