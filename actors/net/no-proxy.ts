/**
 * NO_PROXY rules as curl reads them: entries separated by commas (or spaces); `*` alone sends
 * everything direct; a host name matches itself and every name below it (`example.com` and
 * `.example.com` both match `api.example.com`); an IP address matches itself and a CIDR
 * (`10.0.0.0/8`) every address in it; `host:port` (`[::1]:8080` for IPv6) only that port. Names
 * compare case-insensitively; no entry ever matches a part of a label (`ample.com` does not match
 * `example.com`).
 */
import { BlockList, isIP } from 'node:net';

interface Entry {
  /** Lower-case host name or IP literal (IPv6 without brackets), without a leading dot. */
  host: string;
  /** The only port the entry applies to; undefined for every port. */
  port: string | undefined;
}

export interface NoProxyRules {
  /** True when a request to `url` goes direct. */
  matches(url: URL): boolean;
  /** Entries that could not be read (reported once by the caller, then ignored). */
  readonly rejected: readonly string[];
}

/** The port a URL connects to: its explicit port, else the default of its scheme. */
function portOf(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

/** The host of a URL as the rules compare it: lower case, IPv6 without brackets, no trailing dot. */
function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

function parseEntry(raw: string): Entry | 'cidr' | undefined {
  let host = raw.toLowerCase();
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(host);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2];
  } else if (isIP(host) !== 6 && /:/.test(host)) {
    const m = /^([^:]+):(\d+)$/.exec(host);
    if (!m) return undefined;
    host = m[1]!;
    port = m[2];
  }
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined;
  if (/\/\d{1,3}$/.test(host)) return port === undefined ? 'cidr' : undefined;
  host = host.replace(/^\*?\./, '').replace(/\.$/, '');
  if (isIP(host) === 0 && !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host)) return undefined;
  return { host, port };
}

/** Reads a NO_PROXY value; an empty value sends nothing direct. */
export function noProxyRules(value: string): NoProxyRules {
  const raw = value.split(/[\s,]+/).filter(Boolean);
  if (raw.includes('*')) return { matches: () => true, rejected: [] };
  const entries: Entry[] = [];
  const networks = new BlockList();
  let anyNetwork = false;
  const rejected: string[] = [];
  for (const text of raw) {
    const entry = parseEntry(text);
    if (entry === 'cidr') {
      const [net, prefix] = text.split('/') as [string, string];
      const family = isIP(net);
      if (family === 0 || Number(prefix) > (family === 4 ? 32 : 128)) {
        rejected.push(text);
        continue;
      }
      networks.addSubnet(net, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
      anyNetwork = true;
    } else if (entry) entries.push(entry);
    else rejected.push(text);
  }
  return {
    rejected,
    matches: (url) => {
      const host = hostOf(url);
      const family = isIP(host);
      if (anyNetwork && family !== 0 && networks.check(host, family === 4 ? 'ipv4' : 'ipv6')) return true;
      let port: string | undefined;
      for (const e of entries) {
        if (e.port !== undefined && e.port !== (port ??= portOf(url))) continue;
        if (host === e.host) return true;
        // a suffix matches whole labels of names only: 10.0.0.1 is not below 0.0.1
        if (family === 0 && host.endsWith(e.host) && host.charCodeAt(host.length - e.host.length - 1) === 46)
          return true;
      }
      return false;
    },
  };
}
