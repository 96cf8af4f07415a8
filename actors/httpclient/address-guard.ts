/**
 * Blocking requests to private networks (SSRF protection): addresses are checked after DNS
 * resolution, at connect time, so a host name that resolves to an internal address (or a redirect
 * to one) is refused just like an IP literal.
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, promises as dns } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { ConfigError, ForbiddenError, UpstreamError, describeError } from '../../protocol/errors.js';

/** A request refused by the address policy (Code 403). */
export class BlockedAddressError extends ForbiddenError {
  override readonly name = 'BlockedAddressError';
}

/** Private, loopback, link-local, unspecified and unique-local ranges. */
const PRIVATE: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
];

export interface AddressPolicy {
  /** True when the address may not be connected to. */
  blocked(address: string): boolean;
  readonly active: boolean;
}

/** Builds the policy from BlockPrivate and BlockNetworks. */
export function addressPolicy(blockPrivate: boolean, networks: string): AddressPolicy {
  const list = new BlockList();
  let active = false;
  if (blockPrivate) {
    for (const [net, prefix, type] of PRIVATE) list.addSubnet(net, prefix, type);
    active = true;
  }
  for (const raw of networks
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([^/]+)\/(\d{1,3})$/.exec(raw);
    const family = m ? isIP(m[1]!) : 0;
    if (!m || family === 0 || Number(m[2]) > (family === 4 ? 32 : 128))
      throw new ConfigError(`BlockNetworks: '${raw}' is not a CIDR such as 10.1.0.0/16`);
    list.addSubnet(m[1]!, Number(m[2]), family === 4 ? 'ipv4' : 'ipv6');
    active = true;
  }
  return {
    active,
    blocked: (address) => {
      const family = isIP(address);
      if (family === 0) return false;
      // IPv4-mapped IPv6 (::ffff:10.0.0.1) is checked as the IPv4 address it is
      const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
      if (mapped) return list.check(mapped[1]!, 'ipv4');
      return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/** The refusal when any address a host resolves to is blocked (one bad address refuses the host). */
function refusalAmong(hostname: string, list: LookupAddress[], policy: AddressPolicy): BlockedAddressError | undefined {
  const bad = list.find((a) => policy.blocked(a.address));
  return bad ? new BlockedAddressError(`${hostname} resolves to ${bad.address}, a blocked address`) : undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A dns.lookup replacement for the HTTP connector that refuses blocked addresses. */
export function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const refusal = refusalAmong(hostname, list, policy);
      if (refusal) return callback(refusal as unknown as NodeJS.ErrnoException, []);
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** Checks a URL whose host is an IP literal (no lookup happens for those). */
export function checkLiteralHost(url: URL, policy: AddressPolicy): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (policy.active && isIP(host) !== 0 && policy.blocked(host))
    throw new BlockedAddressError(`${url.host} is a blocked address`);
}

/**
 * The check of an upstream reached through a proxy, which would resolve the name itself: the
 * upstream's name is resolved here and refused when any of its addresses is blocked (the proxy's own
 * address is the operator's choice and not checked). The answer is the address to send to — the
 * request is pinned to it (exchange.ts), so a name whose answer changes before the proxy connects (DNS
 * rebinding) cannot lead the proxy elsewhere; undefined when nothing is to be pinned (no policy, or an
 * IP literal, checked as it is). A name that cannot be resolved here cannot be checked, so it is
 * refused too (502).
 */
export async function checkUpstreamHost(url: URL, policy: AddressPolicy): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.active || isIP(host) !== 0) {
    checkLiteralHost(url, policy);
    return undefined;
  }
  let list: LookupAddress[];
  try {
    list = await dns.lookup(host, { all: true });
  } catch (e) {
    throw new UpstreamError(
      `${host} cannot be resolved to check it against BlockPrivate/BlockNetworks: ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`,
      { cause: e },
    );
  }
  const refusal = refusalAmong(host, list, policy);
  if (refusal) throw refusal;
  return list[0]!.address;
}

/** `url` with its host replaced by `address` (the port, path and query kept). */
export function pinnedUrl(url: URL, address: string): URL {
  const pinned = new URL(url.href);
  pinned.hostname = isIP(address) === 6 ? `[${address}]` : address;
  return pinned;
}
