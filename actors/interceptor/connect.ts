/**
 * Interceptors by URL: `http(s)://…` is an interceptor service called over HTTP (the spec's form);
 * `module://<path>` loads the same kind of mapping function into this process (beyond the spec), which
 * saves one HTTP round trip per message. Both answer in the same wire shapes and fail the same way.
 */
import { ConfigError, TimeoutError, UpstreamError } from '../../protocol/errors.js';
import { InterceptorClient } from './client.js';
import type { InterceptorFunction } from './server.js';
import { loadInterceptor } from './server.js';
import type { InterceptorReply, InterceptorRequest } from './wire.js';
import { validateReply } from './wire.js';

export interface Interceptor {
  readonly url: string;
  /** Resolves with the validated reply by `deadline` (epoch ms), or rejects with 504/502. */
  call(request: InterceptorRequest, deadline: number): Promise<InterceptorReply>;
  close(): Promise<void>;
}

class ModuleInterceptor implements Interceptor {
  constructor(
    readonly url: string,
    private readonly fn: InterceptorFunction,
  ) {}

  async call(request: InterceptorRequest, deadline: number): Promise<InterceptorReply> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new TimeoutError(`no time left to call interceptor ${this.url}`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`interceptor ${this.url} did not answer within ${remaining} ms`)), remaining);
    });
    try {
      // a copy, as an HTTP interceptor would get: the function cannot change the caller's message
      const out = await Promise.race([Promise.resolve(this.fn(request.type, structuredClone(request.value), { ...request.options })), timeout]);
      return validateReply(out, `reply of interceptor ${this.url}`);
    } catch (e) {
      if (e instanceof TimeoutError) throw e;
      throw new UpstreamError(`interceptor ${this.url} failed: ${(e as Error).message}`, { cause: e });
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {}
}

/** Connects to an interceptor named by a parameter; `name` is used in configuration errors. */
export async function connectInterceptor(name: string, url: string): Promise<Interceptor> {
  if (url.startsWith('module://')) return new ModuleInterceptor(url, await loadInterceptor(url.slice('module://'.length)));
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError(`${name} '${url}' is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`${name} '${url}' must be an http(s):// or module:// URL`);
  return new InterceptorClient(url);
}
