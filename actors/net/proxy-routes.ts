/**
 * Which outbound requests go through a proxy, and its connector: an undici ProxyAgent per proxy
 * server (plain http is sent to the proxy in absolute form, as curl does; https goes through a
 * CONNECT tunnel, with TLS to the upstream end to end). Without any proxy `route` is a function
 * returning undefined, so the direct path costs one call; with proxies the decision is remembered
 * per scheme and host.
 */
import type { Dispatcher, ProxyAgent } from 'undici';
import { loadUndici } from './load-undici.js';
import { UpstreamError } from '../../protocol/errors.js';
import type { ProxyServer, ProxySettings } from './proxy.js';

/** A request's way through a proxy. */
export interface Route {
  readonly dispatcher: Dispatcher;
  readonly proxy: ProxyServer;
  /**
   * The connector for a request sent to an IP address the caller resolved and checked for `url`'s
   * host, always through a CONNECT tunnel to that address: the upstream still gets the name (Host, and
   * for https the TLS name presented and verified), which a forwarded plain-http request would lose —
   * a proxy rebuilds Host from the request line.
   */
  pinned(url: URL): Dispatcher;
}

export interface Routes {
  /** The proxy route of a request to `url`; undefined when it goes direct. */
  route(url: URL): Route | undefined;
  /** Closes the proxy connectors. */
  close(): Promise<void>;
}

/** Decisions remembered at most; past it the memory starts again (URLs may come from interceptors). */
const MEMO_LIMIT = 1024;
/** Connectors for pinned upstreams kept at most (one per proxy, scheme and name); the oldest is closed past it. */
const PINNED_LIMIT = 64;

export interface RouteOptions {
  /** PEM certificate authorities trusted for https upstreams and https proxies. */
  ca?: string;
  /** Connections per upstream origin. */
  connections: number;
}

export function proxyRoutes(settings: ProxySettings, options: RouteOptions): Routes {
  if (settings.servers.length === 0) return { route: () => undefined, close: async () => {} };
  // only with a proxy: a gateway without interceptors need not load undici (load-undici.ts)
  const undici = loadUndici();
  const ca = options.ca ? { ca: options.ca } : undefined;
  // one connector per proxy server (as many as the settings name, never closed before the end)
  const agents = agentCache(Infinity);
  const agentOf = (server: ProxyServer): ProxyAgent =>
    agents.get(
      server.url.href,
      () =>
        new undici.ProxyAgent({
          uri: server.url.href,
          proxyTunnel: false,
          connections: options.connections,
          ...(ca ? { requestTls: ca, proxyTls: ca } : {}),
        }),
    );
  // undici's ProxyAgent takes the upstream's TLS name from requestTls when it has one (a CAFile), not
  // from the request: a tunnel to an address needs a connector that names the host itself — one per
  // proxy, scheme and name, bounded since the names come from requests
  const pinned = agentCache(PINNED_LIMIT);
  const pinnedOf = (server: ProxyServer, url: URL): ProxyAgent => {
    const https = url.protocol === 'https:';
    return pinned.get(
      `${server.url.href} ${https ? url.hostname : 'http'}`,
      () =>
        new undici.ProxyAgent({
          uri: server.url.href,
          proxyTunnel: true,
          connections: options.connections,
          ...(https ? { requestTls: { ...ca, servername: url.hostname } } : {}),
          ...(ca ? { proxyTls: ca } : {}),
        }),
    );
  };
  /** Scheme and host → route; null remembers 'direct'. */
  const memo = new Map<string, Route | null>();
  return {
    route: (url) => {
      const key = `${url.protocol}${url.host}`;
      let route = memo.get(key);
      if (route === undefined) {
        const server = settings.proxyFor(url);
        route = server
          ? { dispatcher: agentOf(server), proxy: server, pinned: (target) => pinnedOf(server, target) }
          : null;
        if (memo.size >= MEMO_LIMIT) memo.clear();
        memo.set(key, route);
      }
      return route ?? undefined;
    },
    close: () => Promise.all([...agents.all(), ...pinned.all()].map((a) => a.close())).then(() => undefined),
  };
}

/** ProxyAgents by key, each made on its first use; past `limit` the oldest is closed and forgotten. */
function agentCache(limit: number): { get(key: string, make: () => ProxyAgent): ProxyAgent; all(): ProxyAgent[] } {
  const agents = new Map<string, ProxyAgent>();
  return {
    get: (key, make) => {
      let agent = agents.get(key);
      if (agent) return agent;
      if (agents.size >= limit) {
        const [oldest, old] = agents.entries().next().value!;
        agents.delete(oldest);
        void old.close().catch(() => undefined);
      }
      agent = make();
      agents.set(key, agent);
      return agent;
    },
    all: () => [...agents.values()],
  };
}

/**
 * A proxy that refused the credentials (or wants some): a 502 that no retry mends, named so the
 * operator knows to look at the proxy settings rather than at the upstream.
 */
class ProxyAuthError extends UpstreamError {
  override readonly name = 'ProxyAuthError';
  override get retryable(): boolean {
    return false;
  }
}

/** The status of a proxy's refusal as undici reports it: a refused CONNECT, or a 407 to a forwarded request. */
function refusedStatus(e: unknown): number | undefined {
  const message = e instanceof Error ? e.message : '';
  const m =
    /^Proxy response \((\d{3})\) !== 200 when HTTP Tunneling$/.exec(message) ??
    /^Proxy Authentication Required \((407)\)$/.exec(message);
  return m ? Number(m[1]) : undefined;
}

/**
 * The typed failure of a request through `proxy` that the proxy itself refused (authentication,
 * a refused tunnel), or undefined when the failure is another one. `target` names the upstream.
 */
export function proxyRefusal(e: unknown, proxy: ProxyServer, target: string): UpstreamError | undefined {
  const status = refusedStatus(e);
  if (status === undefined) return undefined;
  if (status === 407) {
    const what = proxy.url.username
      ? `refused the credentials given in ${proxy.source}`
      : `requires credentials (give them in ${proxy.source} as http://user:password@host:port)`;
    return new ProxyAuthError(`proxy ${proxy.shown} ${what} (407 Proxy Authentication Required) for ${target}`, {
      cause: e,
    });
  }
  return new UpstreamError(`proxy ${proxy.shown} refused the tunnel to ${target} (${status})`, { cause: e });
}
