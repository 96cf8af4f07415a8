/**
 * Which proxy an outbound request goes through. A `Proxy` parameter (http(s)://user:pass@host:port)
 * wins over the environment and applies to every URL; without it the environment decides as curl
 * does: `http_proxy`/`HTTP_PROXY` for http URLs, `https_proxy`/`HTTPS_PROXY` for https URLs (the
 * lower-case form first), `no_proxy`/`NO_PROXY` for the exceptions (./no-proxy.ts). Credentials stay
 * inside the proxy URL handed to the connector: everything shown (logs, errors) is `shown`, which
 * has none. A malformed variable is reported once through `warn` and ignored; a malformed parameter
 * stops the start (ConfigError naming it).
 */
import { ConfigError } from '../../protocol/errors.js';
import type { NoProxyRules } from './no-proxy.js';
import { noProxyRules } from './no-proxy.js';

export interface ProxyServer {
  /** The proxy URL with its credentials; given to the connector only. */
  readonly url: URL;
  /** scheme://host:port, never with credentials: what logs and errors name. */
  readonly shown: string;
  /** Where it came from ('Proxy', 'HTTPS_PROXY', …), for messages. */
  readonly source: string;
}

export interface ProxySettings {
  /** The proxy a request to `url` goes through, or undefined when it goes direct. */
  proxyFor(url: URL): ProxyServer | undefined;
  /** Every proxy a request may go through (none when everything goes direct). */
  readonly servers: readonly ProxyServer[];
  /** One line for the start log, without credentials; '' when there is no proxy. */
  readonly summary: string;
}

/**
 * A value with its user information masked, for messages about a value that does not parse: all up
 * to the last '@' after the scheme (a password may hold '/' or ':'; masking too much is harmless).
 */
function masked(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, '$1***@');
}

function parseProxy(value: string, source: string, schemeOptional: boolean): ProxyServer | string {
  const text = schemeOptional && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? `http://${value}` : value;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `'${masked(value)}' is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `'${masked(value)}' is not an http:// or https:// URL`;
  if (!url.hostname) return `'${masked(value)}' names no host`;
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash)
    return `'${masked(value)}' has a path; a proxy is scheme://[user:password@]host[:port]`;
  return { url, shown: `${url.protocol}//${url.host}`, source };
}

/** The first set variable among `names` (empty values count as unset), with its name. */
function fromEnv(env: NodeJS.ProcessEnv, names: string[]): [string, string] | undefined {
  for (const name of names) {
    const v = env[name]?.trim();
    if (v) return [name, v];
  }
  return undefined;
}

/**
 * Reads the proxy settings: `param` is the Proxy parameter ('' when unset), `env` the process
 * environment, `warn` where a malformed variable is reported.
 */
export function proxySettings(param: string, env: NodeJS.ProcessEnv, warn: (line: string) => void): ProxySettings {
  if (param) {
    const server = parseProxy(param.trim(), 'Proxy', false);
    if (typeof server === 'string') throw new ConfigError(`Proxy: ${server}`);
    return { proxyFor: () => server, servers: [server], summary: `through proxy ${server.shown} (Proxy)` };
  }
  const read = (names: string[]): ProxyServer | undefined => {
    const found = fromEnv(env, names);
    if (!found) return undefined;
    const server = parseProxy(found[1], found[0], true);
    if (typeof server !== 'string') return server;
    warn(`${found[0]}: ${server}; ignored, requests go direct`);
    return undefined;
  };
  const http = read(['http_proxy', 'HTTP_PROXY']);
  const https = read(['https_proxy', 'HTTPS_PROXY']);
  if (!http && !https) return { proxyFor: () => undefined, servers: [], summary: '' };
  const noProxyVar = fromEnv(env, ['no_proxy', 'NO_PROXY']);
  const rules: NoProxyRules | undefined = noProxyVar ? noProxyRules(noProxyVar[1]) : undefined;
  if (noProxyVar && rules!.rejected.length)
    warn(`${noProxyVar[0]}: ${rules!.rejected.map((r) => `'${r}'`).join(', ')} cannot be read; ignored`);
  const servers =
    https && http && https.url.href === http.url.href
      ? [http]
      : [http, https].filter((s): s is ProxyServer => s !== undefined);
  const parts = [
    http ? `http through ${http.shown} (${http.source})` : '',
    https ? `https through ${https.shown} (${https.source})` : '',
    noProxyVar ? `except ${noProxyVar[0]}` : '',
  ].filter(Boolean);
  return {
    servers,
    summary: parts.join(', '),
    proxyFor: (url) => {
      const server = url.protocol === 'https:' ? https : http;
      if (!server || rules?.matches(url)) return undefined;
      return server;
    },
  };
}
