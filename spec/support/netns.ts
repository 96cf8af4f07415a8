/**
 * Hosts on one machine for the partition, pause and three-machine tests: each host a network namespace
 * (`ip netns`) with its own address on a private /24, joined by a veth pair to a bridge in the test's own
 * namespace (which takes the .254 address, so the test reaches every host). A host is cut off by taking
 * the bridge end of its veth down — everything it sends or receives is dropped while its processes run
 * on — and healed by taking it up again.
 *
 * Every name carries a per-run id (namespaces, bridge, veths, /etc/netns/<ns>), so runs never collide;
 * destroy() kills every process started in the hosts and removes everything, and a lab not destroyed
 * (a test that threw before its finally, a mocha that exits) is removed when the process exits.
 * Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): netnsUnavailable() says why a machine cannot.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

const IP =
  ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'].find((p) => spawnSync(p, ['-V']).status === 0) ?? 'ip';

export interface Host {
  /** The host's name in the test ('a', 'b', …). */
  readonly name: string;
  /** Its network namespace. */
  readonly ns: string;
  /** Its IPv4 address on the bridge. */
  readonly address: string;
  /** Cut off now (its link down). */
  cut(): boolean;
}

export interface NetnsLab {
  readonly hosts: readonly Host[];
  /** The test's own address on the bridge. */
  readonly bridgeAddress: string;
  /** Starts `command args` inside the host's namespace (`ip netns exec`: the child's pid is the command's own). */
  spawn(host: Host, command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Cuts the host off: nothing reaches it or leaves it until heal(). */
  cut(host: Host): void;
  heal(host: Host): void;
  /** Kills every process started in the hosts and removes the namespaces, the bridge and the hosts files. */
  destroy(): Promise<void>;
}

function ip(...args: string[]): void {
  execFileSync(IP, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Why network namespaces cannot be made here (not root, no `ip`), or undefined when they can: tried for real. */
export function netnsUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (spawnSync(IP, ['-V']).status !== 0) return "the 'ip' command (Debian: iproute2) is not installed";
  const probe = `hnprobe${randomBytes(3).toString('hex')}`;
  const made = spawnSync(IP, ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0)
    return `'ip netns add' is refused (${(made.stderr || '').trim() || `exit ${made.status}`}): the tests need root with CAP_NET_ADMIN and CAP_SYS_ADMIN`;
  spawnSync(IP, ['netns', 'del', probe]);
  return undefined;
}

/** Labs not destroyed yet: removed when the process exits, whatever happened to the test. */
const live = new Set<() => void>();
process.once('exit', () => {
  for (const remove of live) remove();
});

/**
 * Makes `names.length` hosts on a fresh bridge. `hostsFile` lines (`<address> <name>`, with a host's
 * name standing for its address) go into /etc/netns/<ns>/hosts, which `ip netns exec` shows the host's
 * processes as /etc/hosts: machine names resolve there as on a real network.
 */
export function netnsLab(
  names: readonly string[],
  opts: { hostsFile?: (address: (name: string) => string) => string[] } = {},
): NetnsLab {
  const id = randomBytes(3).toString('hex');
  // a /24 of 10.0.0.0/8 picked per run; the chance that two labs of one machine pick the same one is small,
  // and a clash fails the address assignment rather than crossing the labs
  const net = `10.${100 + (randomBytes(1)[0]! % 150)}.${randomBytes(1)[0]! % 250}`;
  const bridge = `hnb${id}`;
  const children = new Set<ChildProcess>();
  const cutOff = new Set<string>();
  const hosts: Host[] = names.map((name, i) => ({
    name,
    ns: `hn${id}-${name}`,
    address: `${net}.${i + 1}`,
    cut: () => cutOff.has(name),
  }));
  const outer = (h: Host): string => `hnv${id}${hosts.indexOf(h)}`;
  const removeSync = (): void => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const h of hosts) {
      // anything still running in the namespace (a child's children) goes with it
      const pids =
        spawnSync(IP, ['netns', 'pids', h.ns], { encoding: 'utf8' }).stdout?.split(/\s+/).filter(Boolean) ?? [];
      for (const pid of pids) spawnSync('kill', ['-KILL', pid]);
      spawnSync(IP, ['netns', 'del', h.ns]);
      rmSync(`/etc/netns/${h.ns}`, { recursive: true, force: true });
    }
    spawnSync(IP, ['link', 'del', bridge]);
  };
  live.add(removeSync);
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${net}.254/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    for (const h of hosts) {
      ip('netns', 'add', h.ns);
      ip('link', 'add', outer(h), 'type', 'veth', 'peer', 'name', `hni${id}`, 'netns', h.ns);
      ip('link', 'set', outer(h), 'master', bridge);
      ip('link', 'set', outer(h), 'up');
      ip('-n', h.ns, 'link', 'set', `hni${id}`, 'name', 'eth0');
      ip('-n', h.ns, 'addr', 'add', `${h.address}/24`, 'dev', 'eth0');
      ip('-n', h.ns, 'link', 'set', 'eth0', 'up');
      ip('-n', h.ns, 'link', 'set', 'lo', 'up');
      if (opts.hostsFile) {
        mkdirSync(`/etc/netns/${h.ns}`, { recursive: true });
        const address = (n: string): string => hosts.find((x) => x.name === n)?.address ?? n;
        writeFileSync(`/etc/netns/${h.ns}/hosts`, ['127.0.0.1 localhost', ...opts.hostsFile(address), ''].join('\n'));
      }
    }
  } catch (e) {
    removeSync();
    live.delete(removeSync);
    throw new Error(
      `the network namespaces could not be made: ${(e as { stderr?: Buffer }).stderr?.toString().trim() || (e as Error).message}`,
    );
  }
  return {
    hosts,
    bridgeAddress: `${net}.254`,
    spawn(host, command, args, options = {}) {
      const child = spawn(IP, ['netns', 'exec', host.ns, command, ...args], options);
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    },
    cut(host) {
      ip('link', 'set', outer(host), 'down');
      cutOff.add(host.name);
    },
    heal(host) {
      ip('link', 'set', outer(host), 'up');
      cutOff.delete(host.name);
    },
    async destroy() {
      const exits = [...children].map(
        (c) =>
          new Promise<void>((resolve) =>
            c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve()),
          ),
      );
      for (const c of children) c.kill('SIGKILL');
      await Promise.all(exits);
      removeSync();
      live.delete(removeSync);
    },
  };
}
