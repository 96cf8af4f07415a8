/**
 * Which names the console answers to (dashboard.Hosts). Reading the console needs no credentials, by
 * design, so a page of another site that makes the browser resolve its own name to this machine (DNS
 * rebinding) could read it as its own origin; checking the Host header closes that: a request naming
 * another host is answered 421 Misdirected Request before anything is read.
 */
import { hostname, networkInterfaces } from 'node:os';

/** The host part of a Host header, lower case, without its port and an IPv6 literal's brackets. */
export function hostOf(header: string | undefined): string {
  const h = (header ?? '').trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') < 0 ? undefined : h.indexOf(']'));
  const colon = h.lastIndexOf(':');
  // one colon: host:port; more (a bare IPv6 literal, which a Host header should not carry): as it is
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

/** The addresses of this machine's interfaces (a console bound to every address answers on each). */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.toLowerCase()));
}

/**
 * The names the console answers to: `configured` (dashboard.Hosts, comma-separated; `*` answers any)
 * or, by default, the bound address, localhost and the loopback addresses, and the machine's names;
 * a console bound to every address (0.0.0.0, ::) also answers on each interface's address.
 */
export function allowedHosts(bound: string, configured: string | undefined): ReadonlySet<string> | 'any' {
  if (configured !== undefined) {
    const list = configured
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== '');
    if (list.includes('*')) return 'any';
    return new Set(list.map((h) => hostOf(h)));
  }
  const name = hostname().toLowerCase();
  const names = [bound.toLowerCase(), 'localhost', '127.0.0.1', '::1', name, name.split('.')[0]!];
  if (bound === '0.0.0.0' || bound === '::') names.push(...interfaceAddresses());
  return new Set(names);
}
