/**
 * AllowFrom: the sources a syslog receiver accepts, as comma-separated CIDRs or plain addresses
 * (IPv4 /32, IPv6 /128). Matching is per family — an IPv4 address is checked against the IPv4
 * entries only, an IPv6 address against the IPv6 ones — so '::/0' does not quietly admit every IPv4
 * source, as one mixed node:net BlockList would. An IPv4-mapped IPv6 address (`::ffff:10.1.2.3`, what
 * a dual-stack socket reports for an IPv4 peer) is the IPv4 address it carries, in the lists and in
 * the counts alike.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { ConfigError } from '../../protocol/errors.js';

const MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The address as counted and matched: an IPv4-mapped IPv6 address becomes its IPv4 address. */
export function sourceAddress(address: string): string {
  const m = MAPPED.exec(address);
  return m ? m[1]! : address;
}

export class AllowList {
  private readonly v4 = new BlockList();
  private readonly v6 = new BlockList();

  private constructor(readonly entries: readonly string[]) {}

  /** The list of an AllowFrom value, or undefined for '' (every source); a bad entry is a ConfigError naming it. */
  static parse(text: string): AllowList | undefined {
    const entries = text
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    if (entries.length === 0) return undefined;
    const list = new AllowList(entries);
    for (const entry of entries) list.add(entry);
    return list;
  }

  /** Whether a peer address (as a socket reports it) may send. */
  allows(address: string): boolean {
    const a = sourceAddress(address);
    if (isIPv4(a)) return this.v4.check(a, 'ipv4');
    if (isIPv6(a)) return this.v6.check(a, 'ipv6');
    return false;
  }

  private add(entry: string): void {
    const slash = entry.indexOf('/');
    const given = slash < 0 ? entry : entry.slice(0, slash);
    const prefixText = slash < 0 ? undefined : entry.slice(slash + 1);
    const mapped = MAPPED.exec(given);
    const address = mapped ? mapped[1]! : given;
    const v4 = isIPv4(address);
    if (!v4 && !isIPv6(address)) throw bad(entry, `'${given}' is not an IPv4 or IPv6 address`);
    const bits = v4 ? 32 : 128;
    if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText))
      throw bad(entry, `the prefix length '${prefixText}' is not a number`);
    let prefix = prefixText === undefined ? (mapped ? 128 : bits) : Number(prefixText);
    // '::ffff:10.0.0.0/104' is the IPv4 network 10.0.0.0/8 written as IPv6
    if (mapped) {
      if (prefix < 96 || prefix > 128)
        throw bad(entry, `an IPv4-mapped address takes a prefix length of 96 to 128, not ${prefix}`);
      prefix -= 96;
    } else if (prefix > bits) {
      throw bad(entry, `the prefix length ${prefix} is over ${bits}`);
    }
    if (v4) this.v4.addSubnet(address, prefix, 'ipv4');
    else this.v6.addSubnet(address, prefix, 'ipv6');
  }
}

function bad(entry: string, why: string): ConfigError {
  return new ConfigError(`AllowFrom entry '${entry}' is not a CIDR or an address: ${why}`);
}
