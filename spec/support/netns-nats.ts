/**
 * A nats-server cluster across the hosts of a netns lab (spec/support/netns.ts): one server per host at
 * the host's own address (clients 4222, routes 6222), JetStream on each, one token. It is a NatsCluster
 * as the loopback one is (spec/adapters/nats/cluster.ts), so the node helpers (clusterHive) take it.
 *
 * The servers ping their routes and clients every second and give one up after three missed pings: a
 * host cut off is dropped from the others' interest within seconds (the default, 2 minutes × 2, would
 * keep routing requests to a queue holder that can no longer answer for minutes).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClusterServer, NatsCluster } from '../adapters/nats/cluster.js';
import { serverProcess, startCluster } from '../adapters/nats/cluster.js';
import { waitForPort } from '../adapters/ports.js';
import { tempDir } from '../temp.js';
import type { NetnsLab } from './netns.js';
import { netnsUnavailable } from './netns.js';
import { natsServerAvailable } from '../adapters/nats/server.js';
import { requireInstalled } from './installed.js';

export const NATS_CLIENT_PORT = 4222;
const ROUTE_PORT = 6222;

/**
 * Starts a server on every host of `lab`; resolves once their JetStream makes a three-replica bucket.
 * `binary` is Debian's nats-server on the PATH unless another is given (natsServer210()).
 */
export async function netnsNatsCluster(lab: NetnsLab, binary = 'nats-server'): Promise<NatsCluster> {
  const token = `t-${Math.random().toString(36).slice(2)}`;
  const dir = tempDir('hn-netns-nats-');
  const servers = lab.hosts.map((host): ClusterServer => {
    const conf = join(dir, `${host.name}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: nats-${host.name}`,
        `listen: "${host.address}:${NATS_CLIENT_PORT}"`,
        `authorization { token: "${token}" }`,
        `jetstream { store_dir: "${join(dir, host.name)}" }`,
        `log_file: "${join(dir, `${host.name}.log`)}"`,
        'ping_interval: "1s"',
        'ping_max: 3',
        `cluster { name: hivenode-netns, listen: "${host.address}:${ROUTE_PORT}", routes: [${lab.hosts.map((h) => `"nats-route://${h.address}:${ROUTE_PORT}"`).join(', ')}] }`,
      ].join('\n'),
    );
    return serverProcess(
      `nats-${host.name}`,
      `nats://${host.address}:${NATS_CLIENT_PORT}`,
      () => lab.spawn(host, binary, ['-c', conf], { stdio: 'ignore' }),
      (child) => waitForPort(NATS_CLIENT_PORT, 10_000, `nats-server on host ${host.name}`, child, host.address),
    );
  });
  // three hosts' servers electing their JetStream meta leader on a machine the other tests load: 30 s
  // was seen to pass without one ("no suitable peers for placement")
  return startCluster(servers, token, 90_000);
}

/** Why the hosts and their servers cannot run here (no root, no `ip`, no nats-server), or undefined. */
export function netnsNatsUnavailable(): string | undefined {
  return (
    netnsUnavailable() ??
    (natsServerAvailable() ? undefined : 'nats-server is not installed (scripts/servers.sh installs it)')
  );
}

/** In a mocha before(): skips the suite with the reason where it cannot run (fails in CI, where it must). */
export function skipWithoutNetns(ctx: Mocha.Context): void {
  const why = netnsNatsUnavailable();
  requireInstalled(!why, why ?? '', ctx);
}

/** Where scripts/nats-server-2.10.sh puts the binary it unpacks. */
const UNPACKED_2_10 = fileURLToPath(new URL('../../.servers/nats-server-trixie/nats-server', import.meta.url));

/**
 * The path of a nats-server 2.10 (HIVENODE_NATS_SERVER_2_10, which `make test` and `make chaos` set from
 * scripts/nats-server-2.10.sh, or that script's earlier unpacking), or undefined where there is none.
 */
export function natsServer210(): string | undefined {
  const given = process.env.HIVENODE_NATS_SERVER_2_10;
  if (given) return given;
  return existsSync(UNPACKED_2_10) ? UNPACKED_2_10 : undefined;
}
